import type { Db } from '../../db/database.ts';

/**
 * A port: the durable job queue as the domain uses it (docs/jobs.md). A service that must have work
 * done later (an email sent, an archive built, a recording finalised, a webhook or an LTI control
 * message delivered) enqueues a job in the transaction of the change that causes it, so the job
 * exists exactly when the change commits. The queue and its worker are src/jobs (queue.ts,
 * worker.ts); app.ts builds the queue and passes it to the services as `jobs`.
 *
 * A job moves `queued` → `running` → `succeeded`, or back to `queued` after a failed attempt while
 * attempts remain, or to `failed` once they are spent. A `running` job whose lease has expired (its
 * worker crashed or lost the database) counts as claimable again.
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
  /** Defaults to the queue's default (5, src/jobs/job.ts DEFAULT_MAX_ATTEMPTS); at least 1. */
  readonly maxAttempts?: number;
  /** Epoch ms; defaults to now. */
  readonly runAt?: number;
  /**
   * When the job is written (epoch ms): its creation time and, without `runAt`, when it may run.
   * Defaults to the queue's clock; an enqueuer writing in the transaction of a decision that has its
   * own time (a webhook event, an LTI control message) passes that time.
   */
  readonly now?: number;
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

/** The durable queue as the services see it: enqueue and look up; the worker runs the jobs. */
export interface JobQueue {
  /**
   * Adds a job. Pass the caller's transaction as `db` to make the job part of it (it exists only if
   * the transaction commits). With a `dedupeKey`, while a job of the same kind and key is queued or
   * running no second one is created and the existing one's id comes back with `created: false`.
   * Returns the job's id; throws a TypeError for a payload JSON cannot hold or maxAttempts below 1.
   */
  enqueue(db: Db, job: NewJob): Promise<{ id: number; created: boolean }>;
  /** Returns the job, or undefined. */
  find(id: number): Promise<Job | undefined>;
  /** Returns the most recently enqueued job of this kind and dedupe key (any status), or undefined. */
  latest(kind: string, dedupeKey: string): Promise<Job | undefined>;
}
