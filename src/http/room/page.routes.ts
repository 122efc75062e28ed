import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.ts';
import { NotFoundMessage } from '../../domain/errors.ts';
import { liveConnectSources } from '../../live/csp.ts';
import { languageFacts, resolveCandidateLanguage } from '../../domain/room/language.ts';
import { translator } from '../../i18n/catalogues.ts';
import { type PageLocale, textDirection } from '../../i18n/locales.ts';
import { escapeHtml } from '../../security/html.ts';
import { languageRequestOf } from './candidate-language.ts';
import { entryHeadTags, webBuild } from '../web-build.ts';
import type { RouteDeps } from '../route-deps.ts';

/** Side of the favicon in pixels. */
const ICON_SIZE = 32;

/**
 * The service's icon as a 32×32 ICO (one 32-bit bitmap with alpha): a blue disc with a white ring,
 * the page's accent colour. Drawn here rather than kept as a binary file in the repository, so it
 * needs no build step and reads as what it is. Returns the file's bytes.
 */
export function faviconIco(): Buffer {
  const pixels = Buffer.alloc(ICON_SIZE * ICON_SIZE * 4);
  const centre = (ICON_SIZE - 1) / 2;
  for (let y = 0; y < ICON_SIZE; y += 1) {
    for (let x = 0; x < ICON_SIZE; x += 1) {
      const distance = Math.hypot(x - centre, y - centre);
      // Bitmaps in an ICO run bottom-up, each pixel blue, green, red, alpha.
      const offset = ((ICON_SIZE - 1 - y) * ICON_SIZE + x) * 4;
      if (distance > 15.5) continue;
      const ring = distance >= 6.5 && distance <= 9.5;
      const [red, green, blue] = ring ? [255, 255, 255] : [0x0b, 0x5c, 0xad];
      pixels.writeUInt8(blue, offset);
      pixels.writeUInt8(green, offset + 1);
      pixels.writeUInt8(red, offset + 2);
      pixels.writeUInt8(255, offset + 3);
    }
  }
  // The AND mask: one bit a pixel, rows padded to 4 bytes; all zero, the alpha channel decides.
  const mask = Buffer.alloc(((ICON_SIZE + 31) >> 5) * 4 * ICON_SIZE);
  const info = Buffer.alloc(40);
  info.writeUInt32LE(40, 0);
  info.writeInt32LE(ICON_SIZE, 4);
  info.writeInt32LE(ICON_SIZE * 2, 8); // colour bitmap and mask stacked
  info.writeUInt16LE(1, 12);
  info.writeUInt16LE(32, 14);
  info.writeUInt32LE(pixels.length + mask.length, 20);
  const image = Buffer.concat([info, pixels, mask]);
  const header = Buffer.alloc(22);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2); // an icon
  header.writeUInt16LE(1, 4); // one image
  header.writeUInt8(ICON_SIZE, 6);
  header.writeUInt8(ICON_SIZE, 7);
  header.writeUInt16LE(1, 10);
  header.writeUInt16LE(32, 12);
  header.writeUInt32LE(image.length, 14);
  header.writeUInt32LE(header.length, 18);
  return Buffer.concat([header, image]);
}

/** How many bytes the bandwidth check downloads: enough to time on a fast line, little on a slow one. */
export const BANDWIDTH_PROBE_BYTES = 2 * 1024 * 1024;

/**
 * The page's rules for the browser: scripts and styles only from the service itself (so instruction
 * HTML that slipped past the sanitiser still cannot run), media from the camera and the recorder,
 * images also from the addresses instructions link to, nothing framing the room. Connections: the
 * service itself, its live-proctoring WebSocket named outright (browsers that do not count ws: as
 * 'self'), and the LiveKit server when live proctoring runs there. With `detectors` (the room),
 * 'wasm-unsafe-eval' lets the automated flags compile their WebAssembly (served by the service,
 * docs/automated-flags.md); it allows no JavaScript eval. The phone page, which runs no detector,
 * leaves it out. Returns the header's value.
 */
export function roomContentSecurityPolicy(
  config: Pick<Config, 'publicUrl' | 'live'>,
  { detectors = true }: { readonly detectors?: boolean } = {},
): string {
  return [
    "default-src 'none'",
    detectors ? "script-src 'self' 'wasm-unsafe-eval'" : "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' blob: data: https: http:",
    "media-src 'self' blob:",
    ["connect-src 'self'", ...liveConnectSources(config)].join(' '),
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The headers of every candidate page (room, practice): `policy` and the device permissions. */
export function securityHeaders(reply: FastifyReply, policy: string): FastifyReply {
  return reply
    .header('content-security-policy', policy)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header(
      'permissions-policy',
      'camera=(self), microphone=(self), display-capture=(self), fullscreen=(self)',
    );
}

/** The `<head>` tags of the room's entry of the web build; empty when the build lacks it (no build yet). */
function roomHeadTags(locale: PageLocale): string {
  const files = webBuild().entry('room');
  return files === undefined ? '' : entryHeadTags(files, locale);
}

/** Only the room entry's style sheets (the not-found page runs no script). */
function roomStyleTags(): string {
  const files = webBuild().entry('room');
  return (files?.styles ?? []).map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}">`).join('\n');
}

/** How a candidate page opens `<html>`: its language and writing direction. */
export function htmlOpenTag(locale: PageLocale): string {
  return `<html lang="${escapeHtml(locale)}" dir="${textDirection(locale)}">`;
}

/**
 * The page's HTML: the room's script (web/room, built by Vite) draws everything the student sees
 * from the room API. The server names the exam in the title and the heading, and says the room is
 * opening, in the candidate's language (`<html lang dir>`, which the script reads), so a bookmark,
 * a tab and a slow first load read right before the script runs; the script replaces the whole
 * body with the page it draws.
 */
function pageHtml(title: string, locale: PageLocale): string {
  const { t } = bound(locale);
  return `<!DOCTYPE html>
${htmlOpenTag(locale)}
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="/favicon.ico" sizes="16x16 32x32">
${roomHeadTags(locale)}
</head>
<body>
<header class="top">
  <h1 id="exam-name">${escapeHtml(title)}</h1>
</header>
<main id="main" tabindex="-1">
  <section id="stage-loading" aria-busy="true"><p>${t('server.room.opening')}</p></section>
  <noscript><p class="alert">${t('server.room.needsJavaScript')}</p></noscript>
</main>
</body>
</html>
`;
}

/** The readable 404 page of a token that names no session (room and practice), in `locale`. */
export function notFoundHtml(locale: PageLocale): string {
  const { t } = bound(locale);
  return `<!DOCTYPE html>
${htmlOpenTag(locale)}
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${t('server.room.notFound.title')}</title>
<link rel="icon" href="/favicon.ico" sizes="16x16 32x32">
${roomStyleTags()}
</head>
<body>
<main id="main">
  <h1>${t('server.room.notFound.title')}</h1>
  <p>${t('server.room.notFound.text')}</p>
</main>
</body>
</html>
`;
}

/** The catalogue of `locale`, its messages escaped for HTML. */
function bound(locale: PageLocale): { t: (key: string) => string } {
  const translate = translator(locale);
  return { t: (key) => escapeHtml(translate.t(key)) };
}

function notFound(reply: FastifyReply, locale: PageLocale): FastifyReply {
  return reply.code(404).type('text/html; charset=utf-8').send(notFoundHtml(locale));
}

/**
 * The candidate exam room page (contract §11): `GET /room/:token` answers the page in the
 * candidate's language (docs/languages.md; `?lang=` picks one for that load when the exam offers
 * it), or 404 with a readable page for a token that names no session, loading the `room` entry of the web build
 * (web/room, served at /assets/*), and `/room/assets/bandwidth-probe` the bandwidth check's
 * download. The page works only through the room API (`/api/room`).
 */
export function registerRoomPage(app: FastifyInstance, { services, config }: RouteDeps): void {
  const policy = roomContentSecurityPolicy(config);
  const probe = crypto.randomBytes(BANDWIDTH_PROBE_BYTES);
  const icon = faviconIco();

  // Browsers ask for /favicon.ico on every page of the host; the room's head links it too.
  app.get('/favicon.ico', { schema: { hide: true } }, (_request, reply) =>
    reply.header('cache-control', 'public, max-age=86400').type('image/x-icon').send(icon),
  );

  app.get('/room/assets/bandwidth-probe', { schema: { hide: true } }, (_request, reply) =>
    reply.header('cache-control', 'no-store').type('application/octet-stream').send(probe),
  );

  app.get<{ Params: { token: string } }>('/room/:token', { schema: { hide: true } }, (request, reply) =>
    sendTokenPage(request, reply, { services, config, policy, html: pageHtml }),
  );
}

/**
 * Answers a candidate page named by a room token (the room, the practice page): `html` with the
 * exam's name in the candidate's language (`?lang=` included), or the readable 404 page for a token
 * that names no session; never cached, under `policy`. Returns the reply.
 */
export async function sendTokenPage(
  request: FastifyRequest<{ Params: { token: string } }>,
  reply: FastifyReply,
  page: {
    readonly services: RouteDeps['services'];
    readonly config: RouteDeps['config'];
    readonly policy: string;
    readonly html: (title: string, locale: PageLocale) => string;
  },
): Promise<FastifyReply> {
  securityHeaders(reply, page.policy).header('cache-control', 'no-store');
  const reader = languageRequestOf(request, page.config, { withOverride: true });
  try {
    const found = await page.services.room.page(request.params.token);
    const { current } = resolveCandidateLanguage(found.languageFacts, reader);
    return reply.type('text/html; charset=utf-8').send(page.html(found.examName, current));
  } catch (error) {
    if (!(error instanceof NotFoundMessage)) throw error;
    return notFound(reply, resolveCandidateLanguage(languageFacts(null, null, null), reader).current);
  }
}
