import crypto from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { Db, DialectName } from '../db/database.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import type { Clock } from '../domain/clock.ts';
import type { JobContext } from '../domain/ports/jobs.ts';
import { type JobHandler, retryDelayMs } from './job.ts';
import {
  type ClaimedJob,
  claimNextJob,
  failAbandonedJobs,
  markFailed,
  markForRetry,
  markSucceeded,
  renewLease,
} from './jobs.repository.ts';

/** How long a claim lasts unless renewed; a crashed worker's job is free again after this. */
export const DEFAULT_LEASE_MS = 60_000;
/** How long an idle worker waits before looking for due jobs again. */
export const DEFAULT_POLL_MS = 1000;
/**
 * Longest wait between two looks at an unreachable database. The wait starts at the polling
 * interval and doubles on each failed look up to this, so a long outage costs one attempt per this
 * long, and the worker is back at most this long after the database.
 */
export const MAX_OUTAGE_WAIT_MS = 8000;

export interface WorkerOptions {
  readonly db: Db;
  readonly dialect: DialectName;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly handlers: readonly JobHandler[];
  /** Written to `locked_by`; unique per worker (default: host, pid and a random suffix). */
  readonly workerId?: string;
  /** Lease length; renewed every third of it while a handler runs. Default DEFAULT_LEASE_MS. */
  readonly leaseMs?: number;
  /** Idle polling interval. Default DEFAULT_POLL_MS. */
  readonly pollMs?: number;
  /** Jobs this worker runs at once. Default 1. */
  readonly concurrency?: number;
}

export interface Worker {
  readonly id: string;
  /** Starts claiming and running jobs in the background. Calling it again does nothing. */
  start(): void;
  /**
   * Stops claiming and waits for the running jobs to finish their attempt and record the outcome.
   * Resolves when nothing runs any more; never rejects.
   */
  stop(): Promise<void>;
  /**
   * Fails abandoned jobs, then claims and runs at most one due job to its outcome, without the loop
   * (tests; one-shot use). Resolves true when a job was claimed; rejects when the database fails.
   */
  runOnce(): Promise<boolean>;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message === '' ? error.name : error.message;
  return String(error);
}

function defaultWorkerId(): string {
  return `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;
}

/**
 * Builds a worker over `handlers` (one per kind; a duplicate kind throws). It claims due jobs,
 * renews their lease while the handler runs, and records success, a retry with backoff, or failure.
 * A worker that lost a job's lease writes nothing about it. While the database is unreachable it
 * claims nothing and looks again after a growing wait (MAX_OUTAGE_WAIT_MS at most), carrying on by
 * itself once the database answers. Returns the worker, not yet started.
 */
export function createWorker(options: WorkerOptions): Worker {
  const { db, dialect, clock, logger } = options;
  const id = options.workerId ?? defaultWorkerId();
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const concurrency = options.concurrency ?? 1;
  const handlers = new Map<string, JobHandler>();
  for (const handler of options.handlers) {
    if (handlers.has(handler.kind)) throw new Error(`two job handlers for kind "${handler.kind}"`);
    handlers.set(handler.kind, handler);
  }
  const log = logger.child({ worker: id });

  const running = new Set<Promise<void>>();
  let loop: Promise<void> | undefined;
  let stopping = false;
  let wake: (() => void) | undefined;

  /** Resolves after `ms`, or earlier when stop() or a finished job wakes the loop. */
  function pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  }

  function claim(): Promise<ClaimedJob | undefined> {
    const now = clock.now();
    return claimNextJob(db, dialect, { workerId: id, now, leaseUntil: now + leaseMs });
  }

  async function settleFailure(job: ClaimedJob, error: string, final: boolean): Promise<boolean> {
    const now = clock.now();
    if (final) return markFailed(db, job, { now, error });
    return markForRetry(db, job, { now, error, runAt: now + retryDelayMs(job.attempt) });
  }

  /** Runs one claimed attempt and records its outcome; never rejects. */
  async function execute(job: ClaimedJob): Promise<void> {
    const jobLog = log.child({ jobId: job.id, kind: job.kind, attempt: job.attempt });
    const handler = handlers.get(job.kind);
    try {
      if (handler === undefined) {
        const error = `no handler for job kind "${job.kind}" in worker ${id}`;
        jobLog.error(error);
        await settleFailure(job, error, true);
        return;
      }
      const outcome = await attempt(handler, job, jobLog);
      const owned =
        outcome.ok === true
          ? await markSucceeded(db, job, clock.now())
          : await settleFailure(job, outcome.error, job.attempt >= job.maxAttempts);
      if (!owned) {
        jobLog.warn('lease lost before the attempt ended; its outcome is discarded');
      } else if (outcome.ok) {
        jobLog.debug('job succeeded');
      } else if (job.attempt >= job.maxAttempts) {
        jobLog.error({ err: outcome.cause }, 'job failed, no attempts left');
      } else {
        jobLog.warn({ err: outcome.cause }, 'job attempt failed, will retry');
      }
    } catch (error) {
      // The outcome could not be written: the lease runs out and another attempt takes the job.
      if (isDatabaseUnavailable(error))
        jobLog.warn({ err: error }, 'database unavailable: outcome not recorded');
      else jobLog.error({ err: error }, 'could not record the job outcome');
    }
  }

  /** Runs the handler with a lease heartbeat; resolves with what happened. */
  async function attempt(
    handler: JobHandler,
    job: ClaimedJob,
    jobLog: Logger,
  ): Promise<{ ok: true } | { ok: false; error: string; cause: unknown }> {
    const lost = new AbortController();
    const renew = async (progress?: string) => {
      if (lost.signal.aborted) return;
      const now = clock.now();
      const change = { now, leaseUntil: now + leaseMs, ...(progress === undefined ? {} : { progress }) };
      if (!(await renewLease(db, job, change))) {
        jobLog.warn('lease lost while running; signalling the handler to stop');
        lost.abort(new Error(`job ${job.id} was taken over after its lease expired`));
      }
    };
    let renewing: Promise<void> = Promise.resolve();
    const heartbeat = setInterval(
      () => {
        renewing = renew().catch((error: unknown) => jobLog.warn({ err: error }, 'lease renewal failed'));
      },
      Math.max(Math.floor(leaseMs / 3), 1),
    );
    const ctx: JobContext = {
      jobId: job.id,
      attempt: job.attempt,
      signal: lost.signal,
      progress: (value) => renew(value),
    };
    try {
      jobLog.debug('job attempt started');
      await handler.run(job.payload, ctx);
      return { ok: true };
    } catch (error) {
      return { ok: false, error: errorText(error), cause: error };
    } finally {
      clearInterval(heartbeat);
      // A renewal still in flight must land before the outcome is written and before stop() resolves.
      await renewing;
    }
  }

  /** While the database is unreachable: how long the loop waits before its next look (0: reachable). */
  let outageWaitMs = 0;

  /** Pauses claiming while the database is away: logs once, then waits longer after each failed look. */
  async function waitOutOutage(error: unknown): Promise<void> {
    if (outageWaitMs === 0) {
      const reason = error instanceof Error ? error.message : String(error);
      log.warn({ reason }, 'database unavailable: job worker paused until it is back');
    }
    outageWaitMs = outageWaitMs === 0 ? pollMs : Math.min(outageWaitMs * 2, MAX_OUTAGE_WAIT_MS);
    await pause(outageWaitMs);
  }

  async function runLoop(): Promise<void> {
    while (!stopping) {
      if (running.size >= concurrency) {
        await Promise.race([...running, pause(pollMs)]);
        continue;
      }
      let job: ClaimedJob | undefined;
      try {
        job = await claim();
        if (job === undefined) {
          const failed = await failAbandonedJobs(db, clock.now());
          if (failed > 0) log.warn({ failed }, 'jobs abandoned on their last attempt marked failed');
        }
      } catch (error) {
        if (isDatabaseUnavailable(error)) {
          if (!stopping) await waitOutOutage(error);
          continue;
        }
        log.error({ err: error }, 'could not claim a job');
      }
      if (outageWaitMs !== 0) {
        outageWaitMs = 0;
        log.info('database reachable again: job worker resumed');
      }
      if (job === undefined) {
        if (!stopping) await pause(pollMs);
        continue;
      }
      const run = execute(job).finally(() => {
        running.delete(run);
        wake?.();
      });
      running.add(run);
    }
  }

  return {
    id,
    start() {
      if (loop !== undefined || stopping) return;
      log.debug({ handlers: [...handlers.keys()], concurrency, leaseMs }, 'job worker started');
      loop = runLoop();
    },
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      await Promise.all([...running]);
      log.debug('job worker stopped');
    },
    async runOnce() {
      await failAbandonedJobs(db, clock.now());
      const job = await claim();
      if (job === undefined) return false;
      await execute(job);
      return true;
    },
  };
}
