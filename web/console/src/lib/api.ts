/**
 * The console's one API client, typed by the generated `api-schema.d.ts` (scripts/console-client.ts).
 * Requests carry the staff session cookie; changes also carry the session's CSRF token; V3 paths get
 * the V3 media type. Screens call `api.GET('/api/v3/exams', …)` and read `data` or `error`.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '../../../shared/api-schema';
import { t } from '../../../shared/i18n.svelte.ts';

/** The V3 media type every /api/v3 request names in Accept. */
const V3_ACCEPT = 'application/vnd.procwise.v3';

let csrfToken: string | undefined;

/** Remembers the CSRF token of the signed-in session (undefined after sign-out). */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

const consoleHeaders: Middleware = {
  onRequest({ request }) {
    const url = new URL(request.url);
    if (url.pathname.startsWith('/api/v3/')) request.headers.set('accept', V3_ACCEPT);
    if (request.method !== 'GET' && request.method !== 'HEAD' && csrfToken !== undefined) {
      request.headers.set('x-csrf-token', csrfToken);
    }
    return request;
  },
};

/** Called when an answer says the session is gone (403 on a V3 call from a signed-out cookie). */
let onSessionLost: (() => void) | undefined;

/** Registers what to do when the session ends under the console's feet (expiry, sign-out elsewhere). */
export function whenSessionLost(handler: () => void): void {
  onSessionLost = handler;
}

const sessionWatch: Middleware = {
  async onResponse({ request, response }) {
    if (response.status !== 403 || !new URL(request.url).pathname.startsWith('/api/v3/')) return response;
    // A 403 is also a plain "not allowed"; only a dead session sends the user back to sign-in.
    const alive = await fetch('/auth/session', { credentials: 'same-origin' });
    // Only the status matters; an unread body would keep the request open (and the page never idle).
    await alive.body?.cancel();
    if (alive.status === 403) onSessionLost?.();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });
api.use(consoleHeaders, sessionWatch);

/** The `error` member of a failed answer, as the service sends it. */
interface ErrorAnswer {
  readonly error?: unknown;
  readonly errors?: unknown;
}

/**
 * A sentence for the user from a failed call: the service's own message (it names the field and the
 * rule, in English: the API speaks English), and what to do when the message alone does not say it.
 */
export function problem(error: unknown, response?: Response): string {
  if (response?.status === 403) return t('console.common.notAllowed');
  if (response?.status === 503) return t('console.common.unavailable');
  if (response?.status === 429) return t('console.common.tooManyAttempts');
  const answer = (typeof error === 'object' && error !== null ? error : {}) as ErrorAnswer;
  const message = answer.error;
  if (typeof message === 'string' && message !== '') return message;
  if (typeof message === 'object' && message !== null) {
    const parts = Object.entries(message as Record<string, unknown>).map(
      ([field, detail]) =>
        `${field.replaceAll('_', ' ')} ${Array.isArray(detail) ? detail.join(', ') : String(detail)}`,
    );
    if (parts.length > 0) return t('console.common.pleaseCorrect', { problems: parts.join('; ') });
  }
  if (response !== undefined && response.status >= 500) return t('console.common.serverError');
  return t('console.common.requestFailed');
}

/**
 * How many pages and items a paginated list answer says there are (its `X-Pagination-*` headers),
 * for a page showing `shown` items; an answer without the headers counts as one page of those.
 */
export function pageCounts(response: Response, shown: number): { pageCount: number; itemCount: number } {
  return {
    pageCount: Number(response.headers.get('x-pagination-page-count') ?? '1'),
    itemCount: Number(response.headers.get('x-pagination-item-count') ?? String(shown)),
  };
}
