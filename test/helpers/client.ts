import { type HttpAnswer, httpRequest } from './http.ts';
import { canonical, hmac, nextNonce, type Scalar } from './signing.ts';

export interface Credentials {
  readonly apiToken: string;
  readonly secretKey: string;
}

export type BodyKind = 'json' | 'form' | 'query';

export interface CallOptions {
  /** Where the parameters travel; reads and deletes default to the query string, writes to JSON. */
  readonly as?: BodyKind;
  /** Overrides for the signed parameters (a stale timestamp, a chosen nonce, a wrong signature). */
  readonly timestamp?: string | number;
  readonly nonce?: string;
  readonly signature?: string;
  /** Extra or replacement headers; `accept: undefined`-style removal via `omitHeaders`. */
  readonly headers?: Record<string, string>;
  readonly omitHeaders?: readonly string[];
  /** Send without any signing parameters at all. */
  readonly unsigned?: boolean;
}

export const V3_ACCEPT = 'application/vnd.procwise.v3';

interface ServerClock {
  readonly now: () => number;
  readonly windowMs: number;
}

/** The clocks of the test servers running in this process, by port (startTestServer registers). */
const serverClocks = new Map<string, ServerClock>();

/** The signature window a server uses unless SIGNATURE_WINDOW_SECONDS says otherwise. */
const DEFAULT_WINDOW_MS = 86_400_000;

function portOf(baseUrl: string): string {
  return new URL(baseUrl).port;
}

/** Makes every client of the server at `baseUrl` sign with that server's clock; returns the undo. */
export function registerServerClock(baseUrl: string, now: () => number, windowSeconds?: number): () => void {
  const port = portOf(baseUrl);
  serverClocks.set(port, {
    now,
    windowMs: windowSeconds === undefined ? DEFAULT_WINDOW_MS : windowSeconds * 1000,
  });
  return () => serverClocks.delete(port);
}

/**
 * The time a request to `baseUrl` is signed with: the server's own clock when it is a test server
 * of this process (tests on a fixed date), the real time otherwise (a server in a child process).
 */
export function signingTime(baseUrl: string): number {
  return serverClocks.get(portOf(baseUrl))?.now() ?? Date.now();
}

/**
 * Refuses to sign a request outside the server's window unless the test asked for that timestamp:
 * a client that signs with the wrong clock fails loudly here, whatever today's date is, instead of
 * as an unexplained 403 once the fixed test date falls out of the window.
 */
export function assertInsideWindow(baseUrl: string, timestamp: number): void {
  const server = serverClocks.get(portOf(baseUrl));
  const reference = server?.now() ?? Date.now();
  const windowMs = server?.windowMs ?? DEFAULT_WINDOW_MS;
  if (Math.abs(timestamp - reference) > windowMs) {
    throw new Error(
      `test client signs at ${new Date(timestamp).toISOString()}, outside the window of the server at ` +
        `${baseUrl} (its clock reads ${new Date(reference).toISOString()}): sign with signingTime(baseUrl)`,
    );
  }
}

/** Fills `:name` segments of a path template; returns the path and the route parameters used. */
export function fillPath(
  template: string,
  params: Record<string, Scalar>,
): { path: string; route: Record<string, string> } {
  const route: Record<string, string> = {};
  const path = template.replace(/:([a-z_]+)/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined || value === null) throw new Error(`path parameter ${name} missing`);
    route[name] = String(value);
    return encodeURIComponent(String(value));
  });
  return { path, route };
}

function encodeForm(params: Record<string, Scalar>): string {
  const pairs: [string, string][] = Object.entries(params).map(([k, v]) => [k, v === null ? '' : String(v)]);
  return new URLSearchParams(pairs).toString();
}

/**
 * A signed API client as an integrator writes one. `v3` sends the token header and V3 Accept;
 * `v2` signs `api_token` as a parameter under /api.
 */
export class ApiClient {
  readonly baseUrl: string;
  readonly credentials: Credentials;
  /** The time the timestamps are taken from: the server's clock when it runs on a test clock. */
  readonly now: () => number;

  constructor(baseUrl: string, credentials: Credentials, now?: () => number) {
    this.baseUrl = baseUrl;
    this.credentials = credentials;
    this.now = now ?? (() => signingTime(baseUrl));
  }

  /** Signs and sends a V3 call to `/api/v3` + template (route parameters filled from `params`). */
  v3(
    method: string,
    template: string,
    params: Record<string, Scalar> = {},
    options: CallOptions = {},
  ): Promise<HttpAnswer> {
    return this.send('v3', method, template, params, options);
  }

  /** Signs and sends a V2 call to `/api` + template. */
  v2(
    method: string,
    template: string,
    params: Record<string, Scalar> = {},
    options: CallOptions = {},
  ): Promise<HttpAnswer> {
    return this.send('v2', method, template, params, options);
  }

  /** The fully signed parameter set for a call, as it would be sent (exposed for replay tests). */
  sign(
    params: Record<string, Scalar>,
    route: Record<string, string>,
    version: 'v2' | 'v3',
    options: CallOptions = {},
  ) {
    const sent: Record<string, Scalar> = { ...params };
    for (const name of Object.keys(route)) delete sent[name];
    if (version === 'v2') sent.api_token = this.credentials.apiToken;
    if (options.unsigned) return sent;
    if (options.timestamp === undefined) {
      const now = this.now();
      assertInsideWindow(this.baseUrl, now);
      sent.timestamp = String(now);
    } else {
      sent.timestamp = String(options.timestamp);
    }
    sent.nonce = options.nonce ?? nextNonce();
    sent.signature = options.signature ?? hmac(this.credentials.secretKey, canonical({ ...sent, ...route }));
    return sent;
  }

  private async send(
    version: 'v2' | 'v3',
    method: string,
    template: string,
    params: Record<string, Scalar>,
    options: CallOptions,
  ): Promise<HttpAnswer> {
    const { path, route } = fillPath(template, params);
    const sent = this.sign(params, route, version, options);
    const kind = options.as ?? (method === 'GET' || method === 'DELETE' ? 'query' : 'json');
    const headers: Record<string, string> = {};
    if (version === 'v3') {
      headers.accept = V3_ACCEPT;
      headers.authorization = `Token token=${this.credentials.apiToken}`;
    }
    let url = `${this.baseUrl}${version === 'v3' ? '/api/v3' : '/api'}${path}`;
    let body: string | undefined;
    if (kind === 'query') {
      const query = encodeForm(sent);
      if (query !== '') url += `?${query}`;
    } else if (kind === 'form') {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = encodeForm(sent);
    } else {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(sent);
    }
    Object.assign(headers, options.headers);
    for (const name of options.omitHeaders ?? []) delete headers[name];
    return httpRequest({ url, method, headers, ...(body === undefined ? {} : { body }) });
  }
}
