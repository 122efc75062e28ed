import crypto from 'node:crypto';

/**
 * Request signing as docs/signing.md describes it, written the way an integrator would rather than
 * imported from the server: every parameter (route parameters included) as `name=value`, sorted by
 * name, joined by `?`, then HMAC-SHA256 hex under the user's secret key.
 */

export const V3_ACCEPT = 'application/vnd.procwise.v3';

export interface Credentials {
  readonly apiToken: string;
  readonly secretKey: string;
}

/** The text a client signs. Names are ASCII here, so code-unit order is byte order. */
export function canonical(params: Readonly<Record<string, string>>): string {
  return Object.keys(params)
    .sort()
    .map((name) => `${name}=${params[name]}`)
    .join('?');
}

/** HMAC-SHA256 of `message` under `secretKey`, lower-case hex. */
export function sign(secretKey: string, message: string): string {
  return crypto.createHmac('sha256', secretKey).update(message, 'utf8').digest('hex');
}

/** The V3 headers that go with every signed call. */
export function v3Headers(credentials: Credentials): Record<string, string> {
  return { accept: V3_ACCEPT, authorization: `Token token=${credentials.apiToken}` };
}

/**
 * Fresh nonces for one process: all digits, a per-run prefix then a counter, so no two calls in a
 * run (or in two runs against the same database) share one.
 */
export function nonceSource(): () => string {
  const prefix = `${Date.now()}${crypto.randomInt(1000, 10000)}`;
  let counter = 0;
  return () => {
    counter += 1;
    return `${prefix}${String(counter).padStart(9, '0')}`;
  };
}

/** Adds timestamp, nonce and signature to `params` (which must include route parameters). */
export function signedParams(
  credentials: Credentials,
  params: Readonly<Record<string, string>>,
  nonce: string,
  timestamp: number = Date.now(),
): Record<string, string> {
  const sent = { ...params, timestamp: String(timestamp), nonce };
  return { ...sent, signature: sign(credentials.secretKey, canonical(sent)) };
}
