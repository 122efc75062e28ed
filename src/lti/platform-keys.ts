import {
  createLocalJWKSet,
  errors as joseErrors,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
  type JWTVerifyGetKey,
} from 'jose';
import type { Clock } from '../domain/clock.ts';
import type { OutboundHttp } from '../security/outbound-http.ts';

/**
 * Learning platforms' key sets (LTI 1.3 `jwks_url`), fetched through the guarded outbound client
 * and cached as their HTTP headers say: `Cache-Control: max-age` (bounded to between one minute and
 * a day; ten minutes when absent), revalidated with the ETag when stale. A token signed with a key
 * the cached set does not hold makes one refetch (at most one a minute per key set), so a platform
 * that rotated its key is followed at once while a stream of made-up `kid`s costs nothing.
 */

/** Bounds and default of how long a key set is kept, in ms. */
export const KEY_SET_MIN_MS = 60_000;
export const KEY_SET_MAX_MS = 24 * 60 * 60_000;
export const KEY_SET_DEFAULT_MS = 10 * 60_000;
/** Least time between two fetches of one key set caused by an unknown kid, in ms. */
export const UNKNOWN_KID_REFETCH_MS = 60_000;
/** Largest key set read. */
const KEY_SET_MAX_BYTES = 256 * 1024;

/** A key set could not be fetched or read; the message says why (for the log). */
export class PlatformKeysUnavailable extends Error {
  override name = 'PlatformKeysUnavailable';
}

export interface PlatformKeys {
  /**
   * A key resolver for jose's `jwtVerify` over the key set at `jwksUrl`. The resolver throws
   * PlatformKeysUnavailable when the set cannot be fetched, and jose's JWKSNoMatchingKey when it
   * holds no key for the token.
   */
  resolver(jwksUrl: string): JWTVerifyGetKey;
}

interface CachedSet {
  keys: JSONWebKeySet;
  resolve: ReturnType<typeof createLocalJWKSet>;
  etag: string | undefined;
  expiresAt: number;
  fetchedAt: number;
}

/**
 * How long an answer may be kept, from its Cache-Control: max-age (or s-maxage) within the bounds;
 * no-store or no-cache keep it the least time. Returns ms.
 */
export function keySetLifetime(cacheControl: string | undefined): number {
  if (cacheControl === undefined) return KEY_SET_DEFAULT_MS;
  const directives = cacheControl
    .toLowerCase()
    .split(',')
    .map((part) => part.trim());
  if (directives.some((part) => part === 'no-store' || part === 'no-cache')) return KEY_SET_MIN_MS;
  const maxAge = directives
    .map((part) => /^(?:s-)?max-age\s*=\s*"?(\d+)"?$/.exec(part)?.[1])
    .find((value) => value !== undefined);
  if (maxAge === undefined) return KEY_SET_DEFAULT_MS;
  return Math.min(KEY_SET_MAX_MS, Math.max(KEY_SET_MIN_MS, Number(maxAge) * 1000));
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Builds the cache. Returns it; throws nothing. */
export function createPlatformKeys(deps: { outbound: OutboundHttp; clock: Clock }): PlatformKeys {
  const { outbound, clock } = deps;
  const cache = new Map<string, CachedSet>();
  /** Fetches under way by address, so concurrent launches share one. */
  const inFlight = new Map<string, Promise<CachedSet>>();

  async function fetchSet(url: string, previous: CachedSet | undefined): Promise<CachedSet> {
    let answer;
    try {
      answer = await outbound.request({
        url,
        method: 'GET',
        headers: {
          accept: 'application/json',
          ...(previous?.etag === undefined ? {} : { 'if-none-match': previous.etag }),
        },
        limits: { maxResponseBytes: KEY_SET_MAX_BYTES },
      });
    } catch (error) {
      throw new PlatformKeysUnavailable(`key set ${url} not fetched: ${(error as Error).message}`);
    }
    const now = clock.now();
    const lifetime = keySetLifetime(headerText(answer.headers['cache-control']));
    if (answer.status === 304 && previous !== undefined) {
      return { ...previous, expiresAt: now + lifetime, fetchedAt: now };
    }
    if (answer.status !== 200) {
      throw new PlatformKeysUnavailable(`key set ${url} answered ${answer.status}`);
    }
    let keys: JSONWebKeySet;
    try {
      const parsed = JSON.parse(answer.body.toString('utf8')) as { keys?: unknown };
      if (!Array.isArray(parsed.keys)) throw new Error('no keys array');
      keys = parsed as JSONWebKeySet;
    } catch (error) {
      throw new PlatformKeysUnavailable(`key set ${url} is not a JWK set: ${(error as Error).message}`);
    }
    return {
      keys,
      resolve: createLocalJWKSet(keys),
      etag: headerText(answer.headers.etag),
      expiresAt: now + lifetime,
      fetchedAt: now,
    };
  }

  /** The key set, fetched when absent or stale (or when `force`). Returns it. */
  function keySet(url: string, force: boolean): Promise<CachedSet> {
    const cached = cache.get(url);
    if (cached !== undefined && !force && clock.now() < cached.expiresAt) return Promise.resolve(cached);
    let pending = inFlight.get(url);
    if (pending === undefined) {
      pending = fetchSet(url, cached)
        .then((fresh) => {
          cache.set(url, fresh);
          return fresh;
        })
        .finally(() => inFlight.delete(url));
      inFlight.set(url, pending);
    }
    return pending;
  }

  return {
    resolver(jwksUrl) {
      return async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
        const set = await keySet(jwksUrl, false);
        try {
          return await set.resolve(header, token);
        } catch (error) {
          const unknownKey = error instanceof joseErrors.JWKSNoMatchingKey;
          if (!unknownKey || clock.now() - set.fetchedAt < UNKNOWN_KID_REFETCH_MS) throw error;
          // The platform may have rotated its key: one more look, then the answer stands.
          const fresh = await keySet(jwksUrl, true);
          return fresh.resolve(header, token);
        }
      };
    },
  };
}
