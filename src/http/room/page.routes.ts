import crypto from 'node:crypto';
import fs from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { NotFoundMessage } from '../../domain/errors.ts';
import { escapeHtml } from '../../security/html.ts';
import type { ServerDeps } from '../server.ts';

/** A static file of the page, read once at start and served from memory with a content hash as ETag. */
interface Asset {
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag: string;
}

function asset(name: string, contentType: string): Asset {
  const body = fs.readFileSync(new URL(`./page/${name}`, import.meta.url));
  const etag = `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { body, contentType, etag };
}

/** How many bytes the bandwidth check downloads: enough to time on a fast line, little on a slow one. */
export const BANDWIDTH_PROBE_BYTES = 2 * 1024 * 1024;

/**
 * The page's rules for the browser: scripts and styles only from the service itself (so instruction
 * HTML that slipped past the sanitiser still cannot run), media from the camera and the recorder,
 * images also from the addresses instructions link to, nothing framing the room.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data: https: http:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header(
      'permissions-policy',
      'camera=(self), microphone=(self), display-capture=(self), fullscreen=(self)',
    );
}

/**
 * The page's HTML. Everything the student sees is filled in by room.js from the room API; the
 * server only names the exam in the title, so a bookmark or a tab reads right before the script runs.
 */
function pageHtml(title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/room/assets/room.css">
<script type="module" src="/room/assets/room.js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to the exam room</a>
<header class="top">
  <h1 id="exam-name">${escapeHtml(title)}</h1>
  <p id="student-name"></p>
  <p id="timer" class="timer" hidden><span class="timer-label">Time left</span> <time id="time-left">--:--</time></p>
</header>
<main id="main" tabindex="-1">
  <div id="alert" class="alert" role="alert" hidden></div>
  <p id="status" class="visually-hidden" role="status" aria-live="polite"></p>
  <section id="stage-loading" aria-busy="true"><p>Opening your exam room…</p></section>
  <noscript><p class="alert">The exam room needs JavaScript. Please turn it on and reload this page.</p></noscript>
</main>
</body>
</html>
`;
}

function notFoundHtml(): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Exam room not found</title>
<link rel="stylesheet" href="/room/assets/room.css">
</head>
<body>
<main id="main">
  <h1>Exam room not found</h1>
  <p>This exam link is not valid, or its exam has been removed. Please check that you opened the whole
  link from your email, or ask your exam office for a new one.</p>
</main>
</body>
</html>
`;
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).type('text/html; charset=utf-8').send(notFoundHtml());
}

/**
 * The candidate exam room page (contract §11): `GET /room/:token` answers the page (404 with a
 * readable page for a token that names no session), and `/room/assets/*` its script, style sheet
 * and the bandwidth check's download. The page works only through the room API (`/api/room`).
 */
export function registerRoomPage(app: FastifyInstance, { services }: ServerDeps): void {
  const script = asset('room.js', 'text/javascript; charset=utf-8');
  const styles = asset('room.css', 'text/css; charset=utf-8');
  const probe = crypto.randomBytes(BANDWIDTH_PROBE_BYTES);

  for (const [route, file] of [
    ['/room/assets/room.js', script],
    ['/room/assets/room.css', styles],
  ] as const) {
    app.get(route, { schema: { hide: true } }, (request, reply) => {
      securityHeaders(reply).header('etag', file.etag).header('cache-control', 'no-cache');
      if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
      return reply.type(file.contentType).send(file.body);
    });
  }

  app.get('/room/assets/bandwidth-probe', { schema: { hide: true } }, (_request, reply) =>
    reply.header('cache-control', 'no-store').type('application/octet-stream').send(probe),
  );

  app.get<{ Params: { token: string } }>(
    '/room/:token',
    { schema: { hide: true } },
    async (request, reply) => {
      securityHeaders(reply).header('cache-control', 'no-store');
      try {
        const examName = await services.room.examName(request.params.token);
        return reply.type('text/html; charset=utf-8').send(pageHtml(examName));
      } catch (error) {
        if (!(error instanceof NotFoundMessage)) throw error;
        return notFound(reply);
      }
    },
  );
}
