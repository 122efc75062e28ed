import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Database } from '../../db/database.ts';
import { systemClock } from '../../domain/clock.ts';
import { RateLimited } from '../../domain/errors.ts';
import { createRateLimiter, type RateLimiter } from '../../domain/room/rate-limiter.ts';

/** Requests one room token may make per window: a page polling every few seconds stays far below. */
export const ROOM_RATE_LIMIT = { max: 120, timeWindowMs: 60_000 } as const;

/**
 * How often each process adds its room request counts to the shared table and reads the others'
 * back. Shorter: closer to an exact shared limit, one more statement a second per process.
 */
export const ROOM_RATE_FLUSH_MS = 1000;

/** How often rows of windows that are over are deleted. */
const PURGE_MS = 60_000;

/** The token a room request names (the rate-limit key: one bucket per candidate, whatever the IP). */
function tokenOf(request: FastifyRequest): string {
  const params = request.params as { token?: unknown } | undefined;
  return typeof params?.token === 'string' ? params.token : '';
}

/**
 * Limits the room API in `app`'s scope to ROOM_RATE_LIMIT per token, counted across every process
 * on the database (see domain/room/rate-limiter.ts): each answer carries `x-ratelimit-limit`,
 * `-remaining` and `-reset` (seconds); a request over the limit is answered 429 `rate_limited` with
 * `retry-after`. The counts are flushed when the server closes. `prefix` names the kind of token
 * (`room`, or `phone` for the phone's pairing token). Returns the limiter (started).
 */
export function registerRoomRateLimit(
  app: FastifyInstance,
  deps: { readonly database: Database; readonly logger: Logger },
  prefix = 'room',
): RateLimiter {
  const limiter = createRateLimiter({
    db: deps.database.db,
    // Real time, not the service clock: tests move that one by minutes to reach exam deadlines.
    clock: systemClock,
    logger: deps.logger.child({ component: 'room-rate-limit' }),
    max: ROOM_RATE_LIMIT.max,
    windowMs: ROOM_RATE_LIMIT.timeWindowMs,
    flushMs: ROOM_RATE_FLUSH_MS,
    purgeMs: PURGE_MS,
  });
  limiter.start();
  app.addHook('onClose', () => limiter.stop());
  app.addHook('onRequest', (request, reply, done) => {
    const decision = limiter.hit(`${prefix}:${tokenOf(request)}`);
    const resetSeconds = Math.max(1, Math.ceil(decision.resetMs / 1000));
    reply.header('x-ratelimit-limit', String(decision.limit));
    reply.header('x-ratelimit-remaining', String(decision.remaining));
    reply.header('x-ratelimit-reset', String(resetSeconds));
    if (decision.allowed) {
      done();
      return;
    }
    reply.header('retry-after', String(resetSeconds));
    done(new RateLimited(`Too many requests: try again in ${resetSeconds} seconds`));
  });
  return limiter;
}
