/**
 * The durable job queue's vocabulary: a job's life, what a handler receives, and the retry schedule.
 *
 * A job moves `queued` → `running` → `succeeded`, or back to `queued` after a failed attempt while
 * attempts remain, or to `failed` once they are spent. A `running` job whose lease has expired (its
 * worker crashed or lost the database) counts as claimable again; see docs/jobs.md.
 */

/** Every status a job can have. */
export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;

/**
 * - `queued`: waiting for a worker; `runAt` says from when (a retry waits out its backoff here).
 * - `running`: a worker holds it until `lockedUntil` and renews that while the handler works.
 * - `succeeded`: the handler resolved; final.
 * - `failed`: the last attempt threw (or no handler knows the kind); `lastError` says why; final.
 */
export type JobStatus = (typeof JOB_STATUSES)[number];

/** The statuses during which a job with a dedupe key blocks another with the same kind and key. */
export const ACTIVE_JOB_STATUSES: readonly JobStatus[] = ['queued', 'running'];

/** Attempts a job gets when its enqueuer does not say. */
export const DEFAULT_MAX_ATTEMPTS = 5;

/** The longest wait between two attempts. */
export const MAX_RETRY_DELAY_MS = 60 * 60 * 1000;

/** A job as a status page sees it. */
export interface Job {
  readonly id: number;
  readonly kind: string;
  /** The enqueued payload, parsed back from JSON. */
  readonly payload: unknown;
  readonly status: JobStatus;
  readonly dedupeKey: string | null;
  /** Attempts started so far (a claim counts, whether or not it finished). */
  readonly attempts: number;
  readonly maxAttempts: number;
  /** Epoch ms from which a queued job may run. */
  readonly runAt: number;
  /** The worker holding a running job. */
  readonly lockedBy: string | null;
  /** Epoch ms at which a running job's lease ends unless renewed. */
  readonly lockedUntil: number | null;
  /** Why the last failed attempt failed. */
  readonly lastError: string | null;
  /** Free text the handler reported last (e.g. "12/40 files"). */
  readonly progress: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Epoch ms at which it became `succeeded` or `failed`. */
  readonly finishedAt: number | null;
}

/** What the caller of `enqueue` describes. */
export interface NewJob {
  /** Which handler runs it. */
  readonly kind: string;
  /** Anything JSON.stringify accepts; the handler receives JSON.parse of it. */
  readonly payload: unknown;
  /** While a job of this kind with this key is queued or running, no second one is created. */
  readonly dedupeKey?: string;
  /** Defaults to DEFAULT_MAX_ATTEMPTS; at least 1. */
  readonly maxAttempts?: number;
  /** Epoch ms; defaults to now. */
  readonly runAt?: number;
}

/** What a handler gets besides its payload. */
export interface JobContext {
  readonly jobId: number;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /**
   * Aborted when this worker has lost the job's lease (another worker may now run it): stop at the
   * next safe point. Anything the handler finishes after that is discarded.
   */
  readonly signal: AbortSignal;
  /** Records progress for status pages and renews the lease. */
  progress(value: string): Promise<void>;
}

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
