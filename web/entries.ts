/**
 * The entries of the web build, by the name the server asks the manifest for (src/http/web-build.ts).
 * A new page or script is one line here; its file is the entry's path relative to web/.
 */
export const WEB_ENTRIES = {
  console: 'console/index.html',
} as const;

export type WebEntry = keyof typeof WEB_ENTRIES;
