import { sendStaticAsset, type StaticAsset, staticAsset } from '../static-asset.ts';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StorageConfig } from '../../config/config.ts';

/**
 * The exam office console (docs/console.md): a single-page app built by Vite into dist/console and
 * served from memory. Hashed files under /console/assets/ are cached for a year; every other path
 * under /console answers the app's index.html (the app routes in the browser), never cached, so a
 * new release is picked up on the next visit. A strict Content-Security-Policy: nothing but the
 * service's own scripts, styles and connections (and media from an S3 storage's host).
 */

/** Where `npm run build:console` writes the app (relative to the repository root). */
export const CONSOLE_DIST = path.resolve(import.meta.dirname, '../../../dist/console');

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

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
};

type ConsoleFile = StaticAsset;

/** The built app read into memory: index.html and the hashed assets by name; undefined when not built. */
function readBuild(dist: string): { index: ConsoleFile; assets: Map<string, ConsoleFile> } | undefined {
  const indexPath = path.join(dist, 'index.html');
  if (!fs.existsSync(indexPath)) return undefined;
  const assets = new Map<string, ConsoleFile>();
  const assetDir = path.join(dist, 'assets');
  for (const name of fs.existsSync(assetDir) ? fs.readdirSync(assetDir) : []) {
    const type = CONTENT_TYPES[path.extname(name)];
    if (type !== undefined) assets.set(name, staticAsset(fs.readFileSync(path.join(assetDir, name)), type));
  }
  return { index: staticAsset(fs.readFileSync(indexPath), 'text/html; charset=utf-8'), assets };
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
<p>This installation has no built console. Run <code>npm run build:console</code> (or <code>npm ci</code>, which
builds it) in the Invigil directory, then restart the service. The API is available meanwhile at
<a href="/api/docs">/api/docs</a>.</p></main></body></html>
`;

/** Registers `/` (→ /console), /console and everything under it. */
export function registerConsoleRoutes(
  app: FastifyInstance,
  options: {
    readonly dist?: string;
    readonly mediaOrigins?: readonly string[];
    readonly connectOrigins?: readonly string[];
  } = {},
): void {
  const build = readBuild(options.dist ?? CONSOLE_DIST);
  const policy = consolePolicy(options.mediaOrigins, options.connectOrigins);

  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/console', 302));

  const sendFile = (
    request: Pick<FastifyRequest, 'headers'>,
    reply: FastifyReply,
    file: ConsoleFile,
    cache: string,
  ) => sendStaticAsset(request, securityHeaders(reply, policy), file, cache);

  app.get<{ Params: { name: string } }>(
    '/console/assets/:name',
    { schema: { hide: true } },
    (request, reply) => {
      const file = build?.assets.get(request.params.name);
      if (file === undefined) {
        return securityHeaders(reply, policy).code(404).type('text/plain; charset=utf-8').send('Not Found');
      }
      return sendFile(request, reply, file, 'public, max-age=31536000, immutable');
    },
  );

  const page = (request: Pick<FastifyRequest, 'headers'>, reply: FastifyReply) => {
    if (build === undefined) {
      return securityHeaders(reply, policy)
        .code(503)
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(NOT_BUILT);
    }
    return sendFile(request, reply, build.index, 'no-cache');
  };
  app.get('/console', { schema: { hide: true } }, page);
  app.get('/console/*', { schema: { hide: true } }, page);
}
