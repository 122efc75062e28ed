import type { JobContext } from '../domain/ports/jobs.ts';

/**
 * The worker's side of the durable job queue: attempts, the retry schedule and what a handler is.
 * The vocabulary the enqueuers share (a job's statuses, its shape, the queue itself) is the domain's
 * port, src/domain/ports/jobs.ts; see docs/jobs.md.
 */

/** Attempts a job gets when its enqueuer does not say. */
export const DEFAULT_MAX_ATTEMPTS = 5;

/** The longest wait between two attempts. */
export const MAX_RETRY_DELAY_MS = 60 * 60 * 1000;

/**
 * Runs one kind of job. Handlers are idempotent by contract: an attempt may be cut short by a crash
 * after part of its work, and the next attempt starts from the payload again. Throwing fails the
 * attempt (retried with backoff while attempts remain).
 */
export interface JobHandler {
  readonly kind: string;
  run(payload: unknown, ctx: JobContext): Promise<void>;
}

/**
 * The wait before the attempt after `attempt` (1-based): 2^attempt seconds, capped at an hour, with
 * "equal jitter" (a random point in the upper half) so failed jobs do not retry in lockstep.
 * Returns milliseconds; `random` must return a number in [0, 1).
 */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(1000 * 2 ** Math.max(attempt, 0), MAX_RETRY_DELAY_MS);
  return Math.round(base / 2 + (random() * base) / 2);
}
