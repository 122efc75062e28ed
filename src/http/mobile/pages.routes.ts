import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.ts';
import { systemClock } from '../../domain/clock.ts';
import { DomainError, Invalid, NotFoundMessage, ParamMissing } from '../../domain/errors.ts';
import { PHONE_NOT_NEEDED, WRONG_PIN } from '../../domain/mobile/mobile.ts';
import { languageFacts, resolveCandidateLanguage } from '../../domain/room/language.ts';
import { translator } from '../../i18n/catalogues.ts';
import { localeOfTag, type PageLocale } from '../../i18n/locales.ts';
import type { RichPart, Translator } from '../../i18n/translate.ts';
import { createRateLimiter, type RateDecision } from '../../domain/room/rate-limiter.ts';
import { escapeHtml } from '../../security/html.ts';
import { v3Answer } from '../errors.ts';
import { entryHeadTags, webBuild } from '../web-build.ts';
import { languageRequestOf } from '../room/candidate-language.ts';
import { htmlOpenTag, roomContentSecurityPolicy } from '../room/page.routes.ts';
import { ROOM_RATE_FLUSH_MS } from '../room/rate-limit.ts';
import type { RouteDeps } from '../route-deps.ts';

/**
 * PIN tries allowed per email and client address together, per window. Six digits are a million
 * codes; ten tries in ten minutes make guessing one student's PIN from one address take years, while
 * a student who mistypes a few times is not locked out. Counted per pair rather than per email, so
 * someone who knows a student's email cannot use up the student's tries from elsewhere and block the
 * pairing. Counted in the room's shared table, so every process of the service adds to the same counts.
 */
export const PIN_RATE_LIMIT = { max: 10, windowMs: 10 * 60_000 } as const;

/**
 * PIN tries allowed per client IP and window, whatever the emails: higher than per email, because an
 * exam hall behind one address pairs many students' phones at once (those that cannot scan), while
 * one client spraying guesses over many emails is still held to a few a minute.
 */
export const PIN_IP_RATE_LIMIT = { max: 60, windowMs: 10 * 60_000 } as const;

/** How often rows of PIN windows that are over are deleted. */
const PURGE_MS = 60_000;

/**
 * The PIN form's rules for the browser: the phone page's (below), with forms allowed to post to the
 * service itself, which the PIN form does. Returns the header's value.
 */
export function pinPageContentSecurityPolicy(config: Pick<Config, 'publicUrl' | 'live'>): string {
  return phonePageContentSecurityPolicy(config)
    .split('; ')
    .map((directive) => (directive.startsWith('form-action ') ? "form-action 'self'" : directive))
    .join('; ');
}

/**
 * The phone page's rules: the room's (scripts, styles and connections only from the service and its
 * live-proctoring servers, nothing framing it), without WebAssembly, since the phone runs no detector.
 */
export function phonePageContentSecurityPolicy(config: Pick<Config, 'publicUrl' | 'live'>): string {
  return roomContentSecurityPolicy(config, { detectors: false });
}

function securityHeaders(reply: FastifyReply, policy: string): FastifyReply {
  return (
    reply
      .header('content-security-policy', policy)
      .header('x-content-type-options', 'nosniff')
      // The pairing token is in the page's address: it must not leave in a Referer.
      .header('referrer-policy', 'no-referrer')
      // The phone films; it never listens or shares its screen.
      .header('permissions-policy', 'camera=(self), microphone=(), display-capture=()')
  );
}

/**
 * The phone entry of the web build (web/phone): with `script`, its style sheets, module script and
 * preloads; without, its style sheets only (the PIN form and the not-found page run no script).
 * Empty when the build lacks the entry (no `npm run build:web` yet): the page still says its words.
 */
function phoneEntryTags(script: boolean, locale?: PageLocale): string {
  const files = webBuild().entry('phone');
  if (files === undefined) return '';
  if (script) return entryHeadTags(files, locale);
  return files.styles.map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}">`).join('\n');
}

/** The head every phone page shares: phone viewport, the phone entry's files, the service's icon. */
function head(title: string, script = false, locale?: PageLocale): string {
  return `<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="/favicon.ico" sizes="16x16 32x32">
${phoneEntryTags(script, locale)}`;
}

/** What the PIN form shows again after a refusal: the sentence, the values typed, whether they are wrong. */
interface PinFormState {
  readonly error?: string;
  readonly pin?: string;
  readonly email?: string;
  /** The PIN and email do not match (as opposed to a finished exam, or too many tries). */
  readonly invalid?: boolean;
  /** The `?lang=` the form was opened with, kept on its address so the answer speaks it too. */
  readonly lang?: string;
}

/** A translator whose text comes out escaped for HTML. */
function htmlWords(locale: PageLocale): { t: (key: string) => string; words: Translator } {
  const words = translator(locale);
  return { t: (key) => escapeHtml(words.t(key)), words };
}

/**
 * The PIN page: a plain form that works without JavaScript (there is none on it), one field a row,
 * large enough for a thumb, in the reader's language. After a refusal the sentence comes first, as
 * an alert, and the fields it concerns are marked invalid.
 */
function pinPageHtml(locale: PageLocale, state: PinFormState = {}): string {
  const { t, words } = htmlWords(locale);
  const { error, invalid = false } = state;
  const marked = invalid ? ' aria-invalid="true"' : '';
  const pinDescribed = error === undefined ? 'pin-help' : 'pin-help pin-error';
  const emailDescribed = error === undefined ? '' : ' aria-describedby="pin-error"';
  const action = state.lang === undefined ? '/m' : `/m?lang=${encodeURIComponent(state.lang)}`;
  return `<!DOCTYPE html>
${htmlOpenTag(locale)}
<head>
${head(words.t(error === undefined ? 'server.phone.pin.title' : 'server.phone.pin.errorTitle'))}
</head>
<body>
<header class="top">
  <h1>${t('server.phone.pin.title')}</h1>
</header>
<main id="main">
${error === undefined ? '' : `  <div class="alert" role="alert" id="pin-error"><p>${escapeHtml(error)}</p></div>\n`}  <p class="lead">${t('server.phone.pin.lead')}</p>
  <form class="pin-form" method="post" action="${escapeHtml(action)}">
    <div class="field">
      <label for="pin">${t('server.phone.pin.pinLabel')}</label>
      <p class="help" id="pin-help">${t('server.phone.pin.pinHelp')}</p>
      <input id="pin" name="pin" type="text" inputmode="numeric" autocomplete="one-time-code"
        required value="${escapeHtml(state.pin ?? '')}" aria-describedby="${pinDescribed}"${marked}>
    </div>
    <div class="field">
      <label for="email">${t('server.phone.pin.emailLabel')}</label>
      <input id="email" name="email" type="email" autocomplete="email" autocapitalize="off" spellcheck="false"
        required value="${escapeHtml(state.email ?? '')}"${emailDescribed}${marked}>
    </div>
    <button type="submit" class="primary">${t('server.phone.pin.submit')}</button>
  </form>
  <p class="help">${t('server.phone.pin.scanInstead')}</p>
</main>
</body>
</html>
`;
}

/**
 * The phone page's shell. The phone entry (web/phone) draws everything the student sees from the
 * phone API, replacing the contents of #app; the server names the exam and says the page is
 * opening, in the candidate's language (`<html lang dir>`, which the script reads), so the page
 * reads right before the script runs.
 */
function phonePageHtml(examName: string, locale: PageLocale): string {
  const { t, words } = htmlWords(locale);
  return `<!DOCTYPE html>
${htmlOpenTag(locale)}
<head>
${head(words.t('server.phone.page.title', { exam: examName }), true, locale)}
</head>
<body>
<div id="app">
<header class="top">
  <h1 id="exam-name">${escapeHtml(examName)}</h1>
  <p class="subtitle">${t('server.phone.page.subtitle')}</p>
</header>
<main id="main" tabindex="-1">
  <section id="stage-loading" class="stage" aria-busy="true"><p>${t('server.phone.page.opening')}</p></section>
  <noscript><p class="alert">${t('server.phone.page.needsJavaScript')}</p></noscript>
</main>
</div>
</body>
</html>
`;
}

/** A message with tags as HTML: its text escaped, `<link>` the link to the PIN form. */
function richHtml(parts: readonly RichPart[]): string {
  return parts
    .map((part) => {
      if (typeof part === 'string') return escapeHtml(part);
      return part.tag === 'link' ? `<a href="/m">${escapeHtml(part.text)}</a>` : escapeHtml(part.text);
    })
    .join('');
}

function notFoundHtml(locale: PageLocale): string {
  const { t, words } = htmlWords(locale);
  return `<!DOCTYPE html>
${htmlOpenTag(locale)}
<head>
${head(words.t('server.phone.notFound.title'))}
</head>
<body>
<header class="top">
  <h1>${t('server.phone.notFound.title')}</h1>
</header>
<main id="main">
  <p class="lead">${t('server.phone.notFound.lead')}</p>
  <p>${richHtml(words.rich('server.phone.notFound.text'))}</p>
</main>
</body>
</html>
`;
}

/** True when the caller asked for JSON rather than a page (a script posting the PIN form). */
function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

/** A parameter as text: trimmed, '' when absent or not text. */
function textParam(request: FastifyRequest, name: string): string {
  const value = request.input.values[name];
  return typeof value === 'string' ? value.trim() : '';
}

/** The catalogue's words for the refusals a candidate meets on the PIN form, by their English sentence. */
const REFUSALS: Readonly<Record<string, string>> = {
  [WRONG_PIN]: 'server.phone.pin.wrongPin',
  [PHONE_NOT_NEEDED]: 'server.phone.pin.examFinished',
};

/**
 * The sentence a refusal shows on the form, in the reader's language: a field's own detail rather
 * than its coded form. A refusal the catalogue has no words for keeps the domain's sentence.
 */
function refusalText(error: DomainError, locale: PageLocale): string {
  const words = translator(locale);
  if (error instanceof ParamMissing) {
    return words.t(error.field === 'email' ? 'server.phone.pin.missingEmail' : 'server.phone.pin.missingPin');
  }
  const sentence = error instanceof Invalid ? error.detail : errorSentence(error);
  const key = Object.hasOwn(REFUSALS, sentence) ? REFUSALS[sentence] : undefined;
  return key === undefined ? sentence : words.t(key);
}

/** The sentence of the V3 answer to `error`. */
function errorSentence(error: DomainError): string {
  const body = v3Answer(error).body;
  return typeof body?.error === 'string' ? body.error : error.message;
}

/**
 * The phone's pages (docs/room.md "The phone"): `GET /m`, the PIN form; `POST /m`, which pairs by
 * PIN and email and sends the phone on to its page (303), or shows the form again with the refusal
 * (422 wrong PIN, 409 finished exam, 429 too many tries, with Retry-After); `GET /m/:token`, the phone
 * page (404 with a readable page for a token that names no session), whose script and style sheet
 * are the `phone` entry of the web build (served at /assets/*; the old /m/assets/mobile-live.js is
 * an alias of the `phone-live` entry, src/http/live/assets.routes.ts). The phone page works only
 * through the phone API (`/api/mobile`). The PIN tries are counted per client
 * IP and per (client IP, email) pair across every process; the counts are flushed when the server
 * closes.
 */
export function registerMobilePages(app: FastifyInstance, deps: RouteDeps): void {
  const { services, config } = deps;
  const pagePolicy = phonePageContentSecurityPolicy(config);
  const pinPolicy = pinPageContentSecurityPolicy(config);

  const pinLimiter = (component: string, limit: { max: number; windowMs: number }) =>
    createRateLimiter({
      db: deps.database.db,
      // Real time, as the room's limit: tests move the service clock by minutes.
      clock: systemClock,
      logger: deps.logger.child({ component }),
      max: limit.max,
      windowMs: limit.windowMs,
      flushMs: ROOM_RATE_FLUSH_MS,
      purgeMs: PURGE_MS,
    });
  const byIpLimiter = pinLimiter('pin-ip-rate-limit', PIN_IP_RATE_LIMIT);
  const byEmailLimiter = pinLimiter('pin-email-rate-limit', PIN_RATE_LIMIT);
  for (const limiter of [byIpLimiter, byEmailLimiter]) {
    limiter.start();
    app.addHook('onClose', () => limiter.stop());
  }

  /** Counts one PIN try against the IP and then the (IP, email) pair; the first refusal decides. */
  function pinTry(request: FastifyRequest, email: string): RateDecision {
    const byIp = byIpLimiter.hit(`pin-ip:${request.ip}`);
    if (!byIp.allowed) return byIp;
    return byEmailLimiter.hit(`pin-email:${request.ip} ${email.toLowerCase()}`);
  }

  /** The language of a page without a session: Accept-Language, or the `?lang=` of the load. */
  function sessionlessLocale(request: FastifyRequest): PageLocale {
    const reader = languageRequestOf(request, config, { withOverride: true });
    return resolveCandidateLanguage(languageFacts(null, null, null), reader).current;
  }

  /** The `?lang=` to keep on the PIN form's address, when it names a language the page may show. */
  function keptLang(request: FastifyRequest): { lang?: string } {
    const { override } = languageRequestOf(request, config, { withOverride: true });
    if (override === null || override === undefined) return {};
    const reader = { acceptLanguage: null, override, pseudo: config.pseudoLocale };
    const locale = resolveCandidateLanguage(languageFacts(null, null, null), reader).current;
    return localeOfTag(override) === locale ? { lang: locale } : {};
  }

  function sendPinPage(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    state: PinFormState,
  ): FastifyReply {
    securityHeaders(reply, pinPolicy)
      .header('cache-control', 'no-store')
      .header('vary', 'accept-language')
      .code(status);
    if (wantsJson(request) && state.error !== undefined) {
      return reply.type('application/json; charset=utf-8').send({ error: state.error });
    }
    const page = pinPageHtml(sessionlessLocale(request), { ...state, ...keptLang(request) });
    return reply.type('text/html; charset=utf-8').send(page);
  }

  app.get('/m', { schema: { hide: true } }, (request, reply) => sendPinPage(request, reply, 200, {}));

  app.post('/m', { schema: { hide: true } }, async (request, reply) => {
    // Spaces are how a PIN is often read out and typed ("123 456"); they are not part of it.
    const pin = textParam(request, 'pin').replace(/\s+/g, '');
    const email = textParam(request, 'email');
    const decision = pinTry(request, email);
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil(decision.resetMs / 1000));
      reply.header('retry-after', String(seconds));
      const minutes = Math.max(1, Math.ceil(seconds / 60));
      return sendPinPage(request, reply, 429, {
        error: translator(sessionlessLocale(request)).t('server.phone.pin.tooManyTries', { minutes }),
        pin,
        email,
      });
    }
    try {
      const { mobileToken } = await services.mobile.pairByPin(pin, email);
      securityHeaders(reply, pinPolicy).header('cache-control', 'no-store');
      return reply.redirect(`/m/${encodeURIComponent(mobileToken)}`, 303);
    } catch (error) {
      if (!(error instanceof DomainError) || error.code === 'unavailable') throw error;
      const status = v3Answer(error).status;
      return sendPinPage(request, reply, status, {
        error: refusalText(error, sessionlessLocale(request)),
        pin,
        email,
        invalid: status === 422,
      });
    }
  });

  app.get<{ Params: { token: string } }>('/m/:token', { schema: { hide: true } }, async (request, reply) => {
    securityHeaders(reply, pagePolicy).header('cache-control', 'no-store');
    const reader = languageRequestOf(request, config, { withOverride: true });
    try {
      const page = await services.mobile.page(request.params.token);
      const { current } = resolveCandidateLanguage(page.languageFacts, reader);
      return reply.type('text/html; charset=utf-8').send(phonePageHtml(page.examName, current));
    } catch (error) {
      if (!(error instanceof NotFoundMessage)) throw error;
      return reply
        .code(404)
        .type('text/html; charset=utf-8')
        .send(notFoundHtml(sessionlessLocale(request)));
    }
  });
}
