import type { FastifyReply, FastifyRequest } from 'fastify';
import { translator } from '../../i18n/catalogues.ts';
import { chooseLocale, textDirection } from '../../i18n/locales.ts';
import type { Translator } from '../../i18n/translate.ts';
import { escapeHtml } from '../../security/html.ts';
import { entryHeadTags, webBuild } from '../web-build.ts';

/**
 * The small server-rendered pages of LMS launches (docs/lti.md): a message, a button that opens
 * Invigil in a top-level window, a form that posts itself to the platform, and the platform-storage
 * step. They are shown inside the LMS's iframe, so they may be framed by anyone; what they may do is
 * held down by a strict Content-Security-Policy: no inline script or style, scripts and the style
 * sheet only from the service (the web build's lti entries, web/lti, served at /assets/*), and forms
 * posted only where the page means to post them. Every word on them comes from the catalogue's
 * `server.lti.*` messages, in the language of the launch (pageTranslator).
 */

/**
 * The translator of a page for `request`: the language the launch names (LTI 1.3
 * `launch_presentation.locale`, LTI 1.1 `launch_presentation_locale`) when the service speaks it,
 * else the browser's Accept-Language, else English. Returns it.
 */
export function pageTranslator(request: FastifyRequest, launchLocale?: string | null): Translator {
  return translator(
    chooseLocale({ choice: launchLocale, acceptLanguage: request.headers['accept-language'] }),
  );
}

/** The catalogue's message for each refusal code a launch, a deep link or a start may end with. */
const REFUSAL_KEYS: Readonly<Record<string, string>> = {
  binding_missing: 'server.lti.refused.bindingMissing',
  binding_mismatch: 'server.lti.refused.bindingMismatch',
  platform_error: 'server.lti.refused.platformError',
  invalid_ticket: 'server.lti.refused.invalidTicket',
  invalid_state: 'server.lti.refused.invalidState',
  expired: 'server.lti.refused.expired',
  stale_timestamp: 'server.lti.refused.staleTimestamp',
  replayed_nonce: 'server.lti.refused.replayedNonce',
  missing_user: 'server.lti.refused.missingUser',
  login_throttled: 'server.lti.refused.loginThrottled',
  email_taken: 'server.lti.refused.emailTaken',
  email_missing: 'server.lti.refused.emailMissing',
  unknown_session: 'server.lti.refused.unknownSession',
  user_in_other_institute: 'server.lti.refused.userInOtherInstitute',
  superuser: 'server.lti.refused.superuser',
  user_deactivated: 'server.lti.refused.userDeactivated',
  user_unavailable: 'server.lti.refused.userUnavailable',
  deep_linking_not_staff: 'server.lti.refused.deepLinkingNotStaff',
  unknown_platform: 'server.lti.refused.unknownPlatform',
  unknown_deployment: 'server.lti.refused.unknownDeployment',
  no_proctoring_launch: 'server.lti.refused.noProctoringLaunch',
  incomplete_registration: 'server.lti.refused.incompleteRegistration',
  finished: 'server.lti.refused.finished',
  not_started: 'server.lti.refused.notStarted',
  bad_ticket: 'server.lti.refused.badTicket',
  unknown_tool_provider: 'server.lti.refused.unknownToolProvider',
  other_institute: 'server.lti.refused.otherInstitute',
  links_not_accepted: 'server.lti.refused.linksNotAccepted',
};

/**
 * What a refusal says in `t`'s language. In English, the refusal's own message, as it was written
 * where the launch was refused (some name a parameter or a claim). In another language, the
 * catalogue's message for its code; for a code the catalogue has none for (a registration's
 * technical fault, which the platform's administrator must fix), a sentence that asks the reader
 * to pass on the English detail. Returns the text.
 */
export function refusalText(t: Translator, code: string, english: string): string {
  if (t.locale === 'en') return english;
  const key = REFUSAL_KEYS[code];
  return key === undefined ? t.t('server.lti.refused.other', { reason: english }) : t.t(key);
}

/** A page ready to send: status, HTML and the Content-Security-Policy that goes with it. */
export interface LtiPage {
  readonly status: number;
  readonly html: string;
  readonly policy: string;
}

/** The web build's entries of these pages (web/entries.ts): the style sheet alone, or a script with it. */
type LtiEntry = 'lti' | 'lti-auto-submit' | 'lti-platform-storage';

/**
 * The policy of a page. `formAction` lists the origins (or 'self') its forms may post to; no form
 * at all when empty. Scripts only when `scripts` is true. Framing is left open on purpose: the
 * platform's page frames these (the room, which refuses framing, is never one of them).
 */
function policyOf(options: { formAction?: readonly string[]; scripts?: boolean } = {}): string {
  const formAction = options.formAction ?? [];
  return [
    "default-src 'none'",
    options.scripts === true ? "script-src 'self'" : undefined,
    "style-src 'self'",
    "img-src 'self'",
    "base-uri 'none'",
    `form-action ${formAction.length === 0 ? "'none'" : formAction.join(' ')}`,
  ]
    .filter((part) => part !== undefined)
    .join('; ');
}

/**
 * The `<head>` tags of `entry`: for the plain `lti` entry its style sheet only (those pages run no
 * script, and their policy allows none), else the module script with its style sheet. Empty when the
 * build lacks the entry (no `npm run build:web` yet): the page still says its message.
 */
function headTagsOf(entry: LtiEntry): string {
  const files = webBuild().entry(entry);
  if (files === undefined) return '';
  if (entry !== 'lti') return entryHeadTags(files);
  return files.styles.map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}">`).join('\n');
}

/**
 * A whole HTML document around `body` in `t`'s language and writing direction, loading `entry` of
 * the web build (its style sheet, and its script if any).
 */
function documentOf(t: Translator, title: string, body: string, entry: LtiEntry = 'lti'): string {
  return `<!DOCTYPE html>
<html lang="${escapeHtml(t.locale)}" dir="${textDirection(t.locale)}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · Invigil</title>
${headTagsOf(entry)}
</head>
<body><main>
${body}
</main></body></html>
`;
}

/**
 * A page that says one thing: `title` as heading, `message` (plain text) under it, and, when given,
 * a link back to the platform (`returnUrl`, http or https only), in the language of `options.t`
 * (English by default). Returns it with `status` (200 by default).
 */
export function messagePage(
  title: string,
  message: string,
  options: { status?: number; returnUrl?: string | null; t?: Translator } = {},
): LtiPage {
  const t = options.t ?? translator('en');
  const back = safeHttpUrl(options.returnUrl);
  const body = [
    `<h1>${escapeHtml(title)}</h1>`,
    `<p>${escapeHtml(message)}</p>`,
    back === undefined
      ? ''
      : `<p><a href="${escapeHtml(back)}" target="_top" rel="noreferrer">${escapeHtml(t.t('server.lti.page.backToCourse'))}</a></p>`,
  ].join('\n');
  return { status: options.status ?? 200, html: documentOf(t, title, body), policy: policyOf() };
}

/**
 * A page whose one action opens `url` in a new top-level window (a link with target=_blank, so it
 * is a navigation the user started and no pop-up blocker stops it): for what cannot run in the
 * platform's iframe (the room needs camera and screen capture and refuses framing; a cookie the
 * iframe cannot keep). `url` must be http or https. Returns it with status 200.
 */
export function newWindowPage(options: {
  title: string;
  message: string;
  url: string;
  button: string;
  t?: Translator;
}): LtiPage {
  const url = safeHttpUrl(options.url);
  if (url === undefined) throw new TypeError(`newWindowPage: not an http(s) address: ${options.url}`);
  const body = [
    `<h1>${escapeHtml(options.title)}</h1>`,
    `<p>${escapeHtml(options.message)}</p>`,
    `<p><a class="button" id="open" href="${escapeHtml(url)}" target="_blank" rel="noopener">${escapeHtml(options.button)}</a></p>`,
  ].join('\n');
  return {
    status: 200,
    html: documentOf(options.t ?? translator('en'), options.title, body),
    policy: policyOf(),
  };
}

/**
 * A page with a form that posts `fields` to `action` (an http or https address) and submits itself
 * through the `lti-auto-submit` script (web/lti/auto-submit.ts); without script, its Continue button does the same. The policy
 * lets the form post to the action's origin only. Returns it with status 200; throws a TypeError
 * for an action that is not http(s).
 */
export function autoSubmitPage(
  action: string,
  fields: Readonly<Record<string, string>>,
  options: { title?: string; message?: string; target?: '_self' | '_top' | '_blank'; t?: Translator } = {},
): LtiPage {
  const url = safeHttpUrl(action);
  if (url === undefined) throw new TypeError(`autoSubmitPage: not an http(s) address: ${action}`);
  const t = options.t ?? translator('en');
  const title = options.title ?? t.t('server.lti.autoSubmit.title');
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const target = options.target === undefined ? '' : ` target="${options.target}"`;
  const body = [
    `<h1>${escapeHtml(title)}</h1>`,
    `<p>${escapeHtml(options.message ?? t.t('server.lti.autoSubmit.message'))}</p>`,
    `<form method="post" action="${escapeHtml(url)}" id="auto-submit" data-auto-submit${target}>`,
    inputs,
    `<button type="submit">${escapeHtml(t.t('server.lti.page.continue'))}</button>`,
    '</form>',
  ].join('\n');
  return {
    status: 200,
    html: documentOf(t, title, body, 'lti-auto-submit'),
    policy: policyOf({ formAction: [new URL(url).origin], scripts: true }),
  };
}

/**
 * The platform-storage step (1EdTech "Client Side postMessages"): the `lti-platform-storage` script
 * (web/lti/platform-storage.ts) reads its instructions from the page. `put`: store `key`=`value` in the platform, then go to
 * `next` (the platform's authorization address). `get`: read `key` back and post it with `fields`
 * to `verifyAction` (an Invigil address). `target` is the frame the platform named in
 * `lti_storage_target` (`_parent` means the parent window itself); `origin` the platform's origin
 * the messages are sent to and accepted from. When the platform does not answer, the page goes on
 * without it (`put`: to `next` all the same; `get`: posts without a value, and the verification
 * offers a new window). In `t`'s language (English by default). Returns the page with status 200.
 */
export function platformStoragePage(
  options:
    | {
        mode: 'put';
        target: string;
        origin: string;
        key: string;
        value: string;
        next: string;
      }
    | {
        mode: 'get';
        target: string;
        origin: string;
        key: string;
        verifyAction: string;
        fields: Readonly<Record<string, string>>;
      },
  t: Translator = translator('en'),
): LtiPage {
  const data: Record<string, string> = {
    mode: options.mode,
    target: options.target,
    origin: options.origin,
    key: options.key,
  };
  let form = '';
  let formAction: string[] = [];
  if (options.mode === 'put') {
    const next = safeHttpUrl(options.next);
    if (next === undefined)
      throw new TypeError(`platformStoragePage: not an http(s) address: ${options.next}`);
    data.value = options.value;
    data.next = next;
  } else {
    const inputs = Object.entries(options.fields)
      .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
      .join('\n');
    form = [
      `<form method="post" action="${escapeHtml(options.verifyAction)}" id="storage-verify">`,
      inputs,
      '<input type="hidden" name="binding" value="">',
      `<button type="submit">${escapeHtml(t.t('server.lti.page.continue'))}</button>`,
      '</form>',
    ].join('\n');
    formAction = ["'self'"];
  }
  const attributes = Object.entries(data)
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join('');
  const body = [
    `<h1>${escapeHtml(t.t('server.lti.storage.heading'))}</h1>`,
    `<p id="platform-storage"${attributes}>${escapeHtml(t.t('server.lti.storage.message'))}</p>`,
    form,
  ].join('\n');
  return {
    status: 200,
    html: documentOf(t, t.t('server.lti.storage.title'), body, 'lti-platform-storage'),
    // The put step navigates to the platform by script (a navigation, not a form post).
    policy: policyOf({ formAction, scripts: true }),
  };
}

/** `text` when it is an absolute http or https address, else undefined. */
function safeHttpUrl(text: string | null | undefined): string | undefined {
  if (text === null || text === undefined || text === '') return undefined;
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** Sends `page`: HTML, its policy, never cached, no referrer. Returns the reply. */
export function sendPage(reply: FastifyReply, page: LtiPage): FastifyReply {
  return reply
    .code(page.status)
    .header('content-security-policy', page.policy)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(page.html);
}
