import { readStaticAsset, sendStaticAsset, type StaticAsset, staticAsset } from '../static-asset.ts';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

/**
 * The browser modules of live proctoring at `/live/assets/<file>` (docs/live-proctoring.md): the
 * scripts in ./page/ (live-client.js, shared by the room and the console; livekit.js, the LiveKit
 * adapter) and `livekit-client.mjs`, livekit-client's own ES module build, which livekit.js loads
 * only when the service runs on LiveKit. Read once at start and served from memory, revalidated by a
 * content-hash ETag (`Cache-Control: no-cache`), so a new release is picked up on the next load.
 */

/** The directory of the live page scripts. */
const PAGE_DIR = fileURLToPath(new URL('./page/', import.meta.url));

/** The name livekit.js imports livekit-client under. */
export const LIVEKIT_CLIENT_ASSET = 'livekit-client.mjs';

const JAVASCRIPT = 'text/javascript; charset=utf-8';

/**
 * The file of livekit-client's ES module build (the package's `import` export): self-contained, no
 * imports of its own. Returns its path; throws when the package is not installed.
 */
export function livekitClientFile(): string {
  return fileURLToPath(import.meta.resolve('livekit-client'));
}

/**
 * livekit-client's build without its closing source-map comment: the map is not served, and a
 * browser's developer tools would ask for it and report the 404.
 */
function livekitClientBody(): Buffer {
  const text = fs.readFileSync(livekitClientFile(), 'utf8');
  return Buffer.from(text.replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n'));
}

/** Every asset by its name: the page's scripts as they are, and livekit-client. */
function readAssets(): Map<string, StaticAsset> {
  const assets = new Map<string, StaticAsset>();
  for (const name of fs.readdirSync(PAGE_DIR)) {
    if (path.extname(name) === '.js')
      assets.set(name, readStaticAsset(path.join(PAGE_DIR, name), JAVASCRIPT));
  }
  assets.set(LIVEKIT_CLIENT_ASSET, staticAsset(livekitClientBody(), JAVASCRIPT));
  return assets;
}

/**
 * Registers `GET /live/assets/:file`: a known file with its ETag (304 for a matching If-None-Match),
 * 404 `{"error":"Not Found"}` for any other name. Throws at start when livekit-client is missing.
 */
export function registerLiveAssets(app: FastifyInstance): void {
  const assets = readAssets();
  app.get<{ Params: { file: string } }>(
    '/live/assets/:file',
    { schema: { hide: true } },
    (request, reply) => {
      reply.header('x-content-type-options', 'nosniff');
      const file = assets.get(request.params.file);
      if (file === undefined) {
        return reply.code(404).type('application/json; charset=utf-8').send({ error: 'Not Found' });
      }
      return sendStaticAsset(request, reply, file);
    },
  );
}
