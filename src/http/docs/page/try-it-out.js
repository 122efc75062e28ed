// @ts-check
/* global window, fetch, URL */
/**
 * "Try it out" at /api/docs with the console's session cookie (docs/console/account.md). Served with
 * the Swagger UI page (src/http/docs/docs-page.ts) and loaded after Swagger UI's own scripts, before
 * the page's initializer runs on `load`: it wraps the global `SwaggerUIBundle` so that the UI is
 * built with a request interceptor. For a request to /api/v3 that carries no Authorization header
 * (a signed request is left as it is), the interceptor
 *
 *   - names the V3 media type in Accept (Swagger UI would ask for application/json: 406), and
 *   - on anything but GET and HEAD, adds X-CSRF-Token, read from GET /auth/session just before the
 *     request (so a sign-in in another tab is picked up; signed out, the service answers 403).
 *
 * The browser sends the session cookie itself (same origin). Nothing here weakens a check: the
 * service judges the request exactly as it judges the console's own.
 */

/** The media type every /api/v3 request must name in Accept. */
const V3_ACCEPT = 'application/vnd.procwise.v3';

/**
 * @typedef {{ url: string, method?: string, headers?: Record<string, string>, credentials?: string }} SwaggerRequest
 * @typedef {((config: Record<string, unknown>) => unknown) & Record<string, unknown>} SwaggerBundle
 */

/**
 * The CSRF token of the browser's console session, or undefined when nobody is signed in.
 * @returns {Promise<string | undefined>}
 */
async function csrfToken() {
  try {
    const answer = await fetch('/auth/session', { credentials: 'same-origin', cache: 'no-store' });
    if (!answer.ok) return undefined;
    const session = /** @type {unknown} */ (JSON.parse(await answer.text()));
    const token =
      typeof session === 'object' && session !== null && 'csrf_token' in session
        ? session.csrf_token
        : undefined;
    return typeof token === 'string' ? token : undefined;
  } catch {
    return undefined;
  }
}

/**
 * True when `headers` has `name`, in any case.
 * @param {Record<string, string>} headers
 * @param {string} name
 */
function hasHeader(headers, name) {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

/**
 * Sets header `name` to `value`, replacing any spelling of it already there.
 * @param {Record<string, string>} headers
 * @param {string} name
 * @param {string} value
 */
function setHeader(headers, name, value) {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name.toLowerCase()) delete headers[key];
  headers[name] = value;
}

/**
 * Swagger UI's request interceptor: a same-origin /api/v3 request without Authorization goes with
 * the session cookie, the V3 Accept and (on a change) the CSRF token. Returns the request.
 * @param {SwaggerRequest} request
 * @returns {Promise<SwaggerRequest>}
 */
async function requestInterceptor(request) {
  const url = new URL(request.url, window.location.href);
  if (url.origin !== window.location.origin || !url.pathname.startsWith('/api/v3/')) return request;
  const headers = request.headers ?? {};
  request.headers = headers;
  if (hasHeader(headers, 'authorization')) return request;
  setHeader(headers, 'Accept', V3_ACCEPT);
  const method = (request.method ?? 'GET').toUpperCase();
  if (method !== 'GET' && method !== 'HEAD') {
    const token = await csrfToken();
    if (token !== undefined) setHeader(headers, 'X-CSRF-Token', token);
  }
  request.credentials = 'same-origin';
  return request;
}

// The initializer calls the global `SwaggerUIBundle(config)` on `load`; the wrapper adds the
// interceptor to that config and keeps the bundle's own members (presets, plugins) in place.
const host = /** @type {{ SwaggerUIBundle?: SwaggerBundle }} */ (/** @type {unknown} */ (window));
const bundle = host.SwaggerUIBundle;
if (typeof bundle === 'function') {
  /** @type {SwaggerBundle} */
  const wrapped = Object.assign(
    /** @param {Record<string, unknown>} config */
    (config) => bundle({ ...config, requestInterceptor }),
    bundle,
  );
  host.SwaggerUIBundle = wrapped;
}
