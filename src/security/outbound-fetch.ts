import type { OutboundHttp } from './outbound-http.ts';

/** What a Fetch-style caller (openid-client's `customFetch`) hands over for one request. */
export interface FetchLikeInit {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: ArrayBuffer | Uint8Array | string | URLSearchParams | ReadableStream | null | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** Statuses whose Response must be built without a body. */
const BODILESS = new Set([101, 204, 205, 304]);

/**
 * A Fetch-compatible function that sends every request through the guarded outbound client, so a
 * library that speaks Fetch (openid-client's discovery, token and user-info calls) gets the same
 * destination rules, time bounds and size bounds as webhooks and LTI key sets. Only GET and POST
 * with a body already in memory are supported; anything else rejects with a TypeError.
 */
export function fetchThrough(
  outbound: OutboundHttp,
): (url: string, init: FetchLikeInit) => Promise<Response> {
  return async (url, init) => {
    const method = init.method.toUpperCase();
    if (method !== 'GET' && method !== 'POST')
      throw new TypeError(`outbound fetch: method ${method} not supported`);
    let body: string | Buffer | undefined;
    if (typeof init.body === 'string') body = init.body;
    else if (init.body instanceof URLSearchParams) body = init.body.toString();
    else if (init.body instanceof Uint8Array) body = Buffer.from(init.body);
    else if (init.body instanceof ArrayBuffer) body = Buffer.from(new Uint8Array(init.body));
    else if (init.body !== undefined && init.body !== null)
      throw new TypeError('outbound fetch: streamed bodies not supported');
    const answer = await outbound.request({
      url,
      method,
      headers: init.headers,
      ...(body === undefined ? {} : { body }),
      ...(init.signal === undefined ? {} : { signal: init.signal }),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue;
      for (const each of Array.isArray(value) ? value : [value]) headers.append(name, each);
    }
    return new Response(BODILESS.has(answer.status) ? null : new Uint8Array(answer.body), {
      status: answer.status,
      headers,
    });
  };
}
