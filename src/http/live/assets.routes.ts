import type { FastifyInstance } from 'fastify';
import { registerEntryAlias, webBuild, type WebBuild } from '../web-build.ts';

/**
 * The old addresses of the live-proctoring browser modules (docs/live-proctoring.md), kept because
 * pages and tests import them by name: the live client, the LiveKit adapter and the phone's live
 * publishing, now entries of the web build (web/live/). Each redirects to its entry's hashed file
 * under /assets/; a module imported through the redirect resolves its own imports (livekit-client's
 * chunk among them) against that final address.
 */
export const LIVE_ENTRY_ALIASES: Readonly<Record<string, string>> = {
  '/live/assets/live-client.js': 'live-client',
  '/live/assets/livekit.js': 'livekit',
  '/m/assets/mobile-live.js': 'phone-live',
};

/**
 * Registers the aliases of LIVE_ENTRY_ALIASES (302 to the built file, revalidated each time) and
 * `GET /live/assets/:file`, 404 `{"error":"Not Found"}` for any other name there.
 */
export function registerLiveAssets(app: FastifyInstance, build: WebBuild = webBuild()): void {
  for (const [address, entry] of Object.entries(LIVE_ENTRY_ALIASES)) {
    registerEntryAlias(app, address, entry, build);
  }
  app.get('/live/assets/:file', { schema: { hide: true } }, (_request, reply) =>
    reply
      .code(404)
      .header('x-content-type-options', 'nosniff')
      .type('application/json; charset=utf-8')
      .send({ error: 'Not Found' }),
  );
}
