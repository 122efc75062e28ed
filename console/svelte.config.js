// Svelte's compiler options for the console: TypeScript in <script lang="ts">, runes everywhere.
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

export default {
  preprocess: vitePreprocess({ script: false }),
  compilerOptions: { runes: true },
};
