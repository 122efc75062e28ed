// One Vite build for every page the service serves from web/ (docs/architecture.md, "The web/
// entries"): the console (an HTML entry) and the candidate pages' scripts (entries the server's own
// HTML loads through the manifest, src/http/web-build.ts). Everything lands in dist/web; the hashed
// files under dist/web/assets are served at /assets/* with a year of caching.
import { fileURLToPath } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vite';
import { WEB_ENTRIES } from './entries.ts';
import { messagesPlugin } from './i18n/messages-plugin.ts';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

// Development knobs: WEB_ONLY=room,phone builds only those entries; WEB_OUT_DIR writes elsewhere
// (the service reads it from its WEB_DIST). The commands of the README use neither.
const only = process.env.WEB_ONLY?.split(',').filter((name) => name !== '');
const entries = Object.entries(WEB_ENTRIES).filter(([name]) => only === undefined || only.includes(name));

export default defineConfig({
  root: here('.'),
  base: '/',
  plugins: [svelte(), messagesPlugin(new URL('../messages/', import.meta.url))],
  // Workers (the flags' detectors) are ES modules like the pages that start them.
  worker: { format: 'es' },
  build: {
    outDir: process.env.WEB_OUT_DIR ?? here('../dist/web'),
    emptyOutDir: true,
    // dist/web/.vite/manifest.json: which hashed files each entry needs (read by the server).
    manifest: true,
    assetsDir: 'assets',
    // Everything from the service itself: no inline scripts, no data: module preloads.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    // livekit-client is one chunk of about 570 kB, loaded only by a live exam on a LiveKit server.
    chunkSizeWarningLimit: 600,
    target: 'es2022',
    rollupOptions: {
      input: Object.fromEntries(entries.map(([name, file]) => [name, here(file)])),
      // Entries keep their exports: the live client and the LiveKit adapter are imported by address.
      preserveEntrySignatures: 'exports-only',
      output: {
        // A page's catalogue in one language is assets/messages-<page>-<locale>-<hash>.js.
        chunkFileNames: (chunk) => {
          const catalogue = /virtual:messages\/([^/]+)\/([^/]+)$/.exec(chunk.facadeModuleId ?? '');
          return catalogue === null
            ? 'assets/[name]-[hash].js'
            : `assets/messages-${catalogue[1]}-${catalogue[2]}-[hash].js`;
        },
      },
    },
  },
});
