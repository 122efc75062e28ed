import type { FastifyBaseLogger } from 'fastify';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { ServiceUnavailable } from '../domain/errors.ts';

/**
 * What a client is told to wait before trying again while the database is away (`Retry-After`,
 * seconds). Short: a restart of PostgreSQL takes seconds, and the answer costs the service nothing.
 */
export const RETRY_AFTER_SECONDS = 5;

/** While the database stays away, one log line per this long, not one per refused request. */
const LOG_EVERY_MS = 10_000;

/**
 * Turns a request's failure into the 503 answer when it means the database is unreachable (see
 * db/unavailable.ts), logging the outage at most once per LOG_EVERY_MS with the count answered
 * since. Returns a function giving the ServiceUnavailable error for such a failure and undefined
 * for any other; that function never throws.
 */
export function createUnavailableMapper(
  logger: FastifyBaseLogger,
): (error: unknown) => ServiceUnavailable | undefined {
  let lastLogged = Number.NEGATIVE_INFINITY;
  let unlogged = 0;
  return (error) => {
    if (!isDatabaseUnavailable(error)) return undefined;
    unlogged += 1;
    const now = Date.now();
    if (now - lastLogged >= LOG_EVERY_MS) {
      const reason = error instanceof Error ? error.message : String(error);
      logger.warn({ reason, answered503: unlogged }, 'database unavailable: answering 503');
      lastLogged = now;
      unlogged = 0;
    }
    return new ServiceUnavailable();
  };
}
