// Svelte's compiler options for every page of web/: TypeScript in <script lang="ts">, runes everywhere.
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

export default {
  preprocess: vitePreprocess({ script: false }),
  compilerOptions: { runes: true },
};
