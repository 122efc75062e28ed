import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  REQUEST_WINDOW_MS,
  REQUESTS_PER_ADDRESS,
  REQUESTS_PER_IP,
} from '../../domain/candidate-data/candidate-data.ts';
import { systemClock } from '../../domain/clock.ts';
import { Invalid, ParamMissing, RateLimited } from '../../domain/errors.ts';
import { languageFacts, resolveCandidateLanguage } from '../../domain/room/language.ts';
import { createRateLimiter, type RateLimiter } from '../../domain/room/rate-limiter.ts';
import { translator } from '../../i18n/catalogues.ts';
import type { PageLocale } from '../../i18n/locales.ts';
import { escapeHtml } from '../../security/html.ts';
import { contentDisposition } from '../../storage/content-disposition.ts';
import { auditClientOf } from '../audit.ts';
import { webBuild } from '../web-build.ts';
import type { RouteDeps } from '../route-deps.ts';
import { errorBody } from '../v3/common.schemas.ts';
import { languageRequestOf } from './candidate-language.ts';
import { htmlOpenTag } from './page.routes.ts';

type TokenRoute = { Params: { token: string } };

const tags = ['candidate room'];
const tokenParam = {
  type: 'object',
  properties: { token: { type: 'string', description: 'The session’s room token' } },
  required: ['token'],
} as const;
const errors = {
  404: {
    description: 'Unknown token, or the session’s data was purged (the message says which)',
    ...errorBody,
  },
  409: { description: 'The session has not ended yet', ...errorBody },
  429: { description: 'Too many requests or codes', ...errorBody },
} as const;

const sendCodeSchema = {
  tags,
  summary: 'Email a one-time code for the candidate’s data',
  description:
    'Sends an 8-digit code, valid 15 minutes, to the session’s own address (docs/candidate-data.md). ' +
    'Only once the session has ended; at most 5 codes an hour per session (429 beyond).',
  params: tokenParam,
  response: {
    202: {
      type: 'object',
      properties: {
        sent_to: { type: 'string', description: 'The address, masked' },
        expires_at: { type: 'string', format: 'date-time' },
      },
    },
    ...errors,
  },
} as const;

const redeemSchema = {
  tags,
  summary: 'Exchange the code for the data download address',
  description:
    'A right code (used once) answers the expiring address of the zip (15 minutes). 422 ' +
    "`'code':['is wrong or has expired']` for a wrong, used or expired code; a code stops working " +
    'after 5 wrong tries.',
  params: tokenParam,
  body: {
    type: 'object',
    properties: { code: { type: 'string', description: 'The 8 digits from the email' } },
  },
  response: {
    200: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'The zip’s address (relative to the service)' },
        expires_at: { type: 'string', format: 'date-time' },
      },
    },
    ...errors,
    422: { description: 'The code is missing, wrong or expired', ...errorBody },
  },
} as const;

/**
 * The finished page's two steps (docs/candidate-data.md), inside the room's scope (its per-token rate
 * limit applies): `POST /:token/data/code` emails a code to the session's address, `POST
 * /:token/data/access` exchanges it for the zip's expiring address. The room token alone is not
 * enough: it travels in links and browser histories, and the zip holds the candidate's face, ID card
 * and recordings, so the code proves the reader also holds the session's mailbox.
 */
export function registerCandidateDataRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { candidateData } = services;

  app.post<TokenRoute>('/:token/data/code', { schema: sendCodeSchema }, async (request, reply) => {
    const sent = await candidateData.sendCode(request.params.token, auditClientOf(request));
    return reply.code(202).send({ sent_to: sent.sentTo, expires_at: new Date(sent.expiresAt).toISOString() });
  });

  app.post<TokenRoute>('/:token/data/access', { schema: redeemSchema }, async (request) => {
    const grant = await candidateData.redeem(request.params.token, request.input.values);
    return { url: `/candidate-data/${grant.key}`, expires_at: new Date(grant.expiresAt).toISOString() };
  });
}

/** The rules of the request page (no script: a form the server answers). */
const PAGE_POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

function pageShell(locale: PageLocale, title: string, body: string): string {
  const styles = (webBuild().entry('room')?.styles ?? [])
    .map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}">`)
    .join('\n');
  return `<!DOCTYPE html>
${htmlOpenTag(locale)}
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="/favicon.ico" sizes="16x16 32x32">
${styles}
</head>
<body>
<header class="top"><h1 id="page-heading">${escapeHtml(title)}</h1></header>
<main id="main" class="stage">
${body}
</main>
</body>
</html>
`;
}

type PageState = 'form' | 'sent' | 'invalid' | 'limited';

/** The request page in `locale`: the form, with the answer to a sent form above it. */
export function requestPageHtml(locale: PageLocale, state: PageState, email = ''): string {
  const t = translator(locale);
  const w = (key: string) => escapeHtml(t.t(key));
  const notes: Record<PageState, string> = {
    form: '',
    sent: `<p id="data-request-answer" class="good" role="status">${w('server.candidateData.page.sent')}</p>`,
    invalid: `<p id="data-request-answer" class="warning" role="alert">${w('server.candidateData.page.invalid')}</p>`,
    limited: `<p id="data-request-answer" class="warning" role="alert">${w('server.candidateData.page.limited')}</p>`,
  };
  const body = `${notes[state]}
<p>${w('server.candidateData.page.intro')}</p>
<form method="post" action="/my-data" id="data-request-form">
  <p>
    <label for="data-request-email">${w('server.candidateData.page.emailLabel')}</label>
    <input id="data-request-email" name="email" type="email" autocomplete="email" required maxlength="320" value="${escapeHtml(email)}">
  </p>
  <p><button type="submit" id="data-request-submit">${w('server.candidateData.page.submit')}</button></p>
</form>
<p class="help">${w('server.candidateData.page.help')}</p>`;
  return pageShell(locale, t.t('server.candidateData.page.title'), body);
}

function hashedAddress(email: string): string {
  return crypto.createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}

/**
 * The public parts (docs/candidate-data.md): `GET /my-data`, a page where a candidate who no longer
 * has the exam's link enters their address, `POST /my-data`, which emails a code and the room link
 * to each ended session of that address and answers the same page whether or not there is one (no
 * account enumeration), limited per address and per client address with the room's shared limiter;
 * and `GET /candidate-data/:key`, the zip's expiring address, streamed. Returns once registered.
 */
export function registerCandidateDataPages(app: FastifyInstance, deps: RouteDeps): void {
  const { services, config } = deps;
  const limiter = (max: number): RateLimiter => {
    const made = createRateLimiter({
      db: deps.database.db,
      clock: systemClock,
      logger: deps.logger.child({ component: 'candidate-data-rate-limit' }),
      max,
      windowMs: REQUEST_WINDOW_MS,
      flushMs: 1000,
      purgeMs: 60_000,
    });
    made.start();
    app.addHook('onClose', () => made.stop());
    return made;
  };
  const perAddress = limiter(REQUESTS_PER_ADDRESS);
  const perIp = limiter(REQUESTS_PER_IP);

  const localeOf = (request: FastifyRequest): PageLocale =>
    resolveCandidateLanguage(
      languageFacts(null, null, null),
      languageRequestOf(request, config, { withOverride: true }),
    ).current;
  const page = (reply: FastifyReply, status: number, html: string) =>
    reply
      .code(status)
      .header('content-security-policy', PAGE_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(html);

  app.get('/my-data', { schema: { hide: true } }, (request, reply) =>
    page(reply, 200, requestPageHtml(localeOf(request), 'form')),
  );

  app.post('/my-data', { schema: { hide: true } }, async (request, reply) => {
    const locale = localeOf(request);
    const typed = request.input.values.email;
    const email = typeof typed === 'string' ? typed.trim() : '';
    if (!perIp.hit(`data-ip:${request.ip}`).allowed) {
      return page(reply, 429, requestPageHtml(locale, 'limited', email));
    }
    if (email !== '' && !perAddress.hit(`data-email:${hashedAddress(email)}`).allowed) {
      return page(reply, 429, requestPageHtml(locale, 'limited', email));
    }
    try {
      await services.candidateData.requestByEmail({ email }, auditClientOf(request));
    } catch (error) {
      if (error instanceof Invalid || error instanceof ParamMissing) {
        return page(reply, 422, requestPageHtml(locale, 'invalid', email));
      }
      if (error instanceof RateLimited) return page(reply, 429, requestPageHtml(locale, 'limited', email));
      throw error;
    }
    return page(reply, 200, requestPageHtml(locale, 'sent'));
  });

  app.get<{ Params: { key: string } }>(
    '/candidate-data/:key',
    {
      schema: {
        tags,
        summary: 'Download the candidate’s data (zip)',
        description:
          'The expiring address the code gave: a zip of the session’s recordings, photos, uploads, ' +
          '`manifest.json` and `summary.txt`, built as it streams. 404 with a sentence once the address ' +
          'expired, or once the session’s data was purged.',
        params: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
        response: {
          200: {
            description: 'The zip archive (application/zip), streamed',
            type: 'string',
            format: 'binary',
          },
          404: { description: 'The address expired or is unknown, or the data was purged', ...errorBody },
        },
      },
    },
    async (request, reply) => {
      const zip = await services.candidateData.open(request.params.key, auditClientOf(request));
      return reply
        .type('application/zip')
        .header('content-disposition', contentDisposition(zip.fileName))
        .header('cache-control', 'private, no-store')
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .send(zip.body);
    },
  );
}
