import { sendStaticAsset, type StaticAsset } from '../static-asset.ts';
import { sendBuiltAsset, WEB_DIST, webBuild } from '../web-build.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StorageConfig } from '../../config/config.ts';

/**
 * The exam office console (docs/console.md): a single-page app built by Vite into dist/web/console and
 * served from memory. Its hashed files are the web build's /assets/*, cached for a year (src/http/web-build.ts); every other path
 * under /console answers the app's index.html (the app routes in the browser), never cached, so a
 * new release is picked up on the next visit. A strict Content-Security-Policy: nothing but the
 * service's own scripts, styles and connections (and media from an S3 storage's host).
 */

/**
 * The console's Content-Security-Policy. `mediaOrigins` are where photos and recordings may load
 * from besides the service itself: an S3 storage's presigned addresses point at the bucket's host.
 * `connectOrigins` are what the proctor wall connects to besides 'self' (liveConnectSources: the
 * service's WebSocket origin, a LiveKit server).
 */
export function consolePolicy(
  mediaOrigins: readonly string[] = [],
  connectOrigins: readonly string[] = [],
): string {
  const media = mediaOrigins.length === 0 ? '' : ` ${mediaOrigins.join(' ')}`;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' blob: data:${media}`,
    `media-src 'self' blob:${media}`,
    "font-src 'self'",
    ["connect-src 'self'", ...connectOrigins].join(' '),
    "frame-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The origins an S3 storage's presigned addresses use: the endpoint's for an S3-compatible service
 * (addressed by path), AWS's bucket hosts otherwise. None for local storage (served by the service).
 */
export function storageMediaOrigins(storage: StorageConfig): string[] {
  if (storage.kind !== 's3') return [];
  if (storage.endpoint !== undefined) return [new URL(storage.endpoint).origin];
  return ['https://*.amazonaws.com'];
}

function securityHeaders(reply: FastifyReply, policy: string): FastifyReply {
  return reply
    .header('content-security-policy', policy)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('permissions-policy', 'camera=(), microphone=(), display-capture=(), geolocation=()');
}

const NOT_BUILT = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Console not built · Invigil</title></head>
<body><main><h1>The console is not built</h1>
<p>This installation has no built console. Run <code>npm run build:web</code> (or <code>npm ci</code>, which
builds it) in the Invigil directory, then restart the service. The API is available meanwhile at
<a href="/api/docs">/api/docs</a>.</p></main></body></html>
`;

/** Registers `/` (→ /console), /console and everything under it. */
export function registerConsoleRoutes(
  app: FastifyInstance,
  options: {
    /** The web build's directory (dist/web by default). */
    readonly dist?: string;
    readonly mediaOrigins?: readonly string[];
    readonly connectOrigins?: readonly string[];
  } = {},
): void {
  const build = webBuild(options.dist ?? WEB_DIST);
  const index = build.file('console/index.html');
  const policy = consolePolicy(options.mediaOrigins, options.connectOrigins);

  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/console', 302));

  const sendFile = (
    request: Pick<FastifyRequest, 'headers'>,
    reply: FastifyReply,
    file: StaticAsset,
    cache: string,
  ) => sendStaticAsset(request, securityHeaders(reply, policy), file, cache);

  app.get<{ Params: { name: string } }>(
    '/console/assets/:name',
    { schema: { hide: true } },
    (request, reply) => {
      // The console's files are the build's /assets/*; this older address stays for pages cached before.
      return sendBuiltAsset(request, securityHeaders(reply, policy), build, request.params.name);
    },
  );

  const page = (request: Pick<FastifyRequest, 'headers'>, reply: FastifyReply) => {
    if (index === undefined) {
      return securityHeaders(reply, policy)
        .code(503)
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(NOT_BUILT);
    }
    return sendFile(request, reply, index, 'no-cache');
  };
  app.get('/console', { schema: { hide: true } }, page);
  app.get('/console/*', { schema: { hide: true } }, page);
}
