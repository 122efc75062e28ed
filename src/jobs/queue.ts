import { PostgresAdapter } from 'kysely';
import type { Db } from '../db/database.ts';
import type { Clock } from '../domain/clock.ts';
import type { JobQueue } from '../domain/ports/jobs.ts';
import { DEFAULT_MAX_ATTEMPTS } from './job.ts';
import {
  findActiveJobId,
  findJob,
  findLatestJob,
  insertJob,
  insertJobUnlessActive,
  type JobValues,
  lockDedupeKey,
} from './jobs.repository.ts';

/** How often enqueue retries when the job blocking its dedupe key finished between two statements. */
const DEDUPE_ROUNDS = 5;

function serialise(payload: unknown): string {
  const text: unknown = JSON.stringify(payload);
  if (typeof text !== 'string') throw new TypeError('a job payload must be JSON-serialisable');
  return text;
}

/** Runs `work` inside a transaction: the caller's when `db` is one, else a new one. */
function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

async function enqueueDeduped(
  db: Db,
  values: JobValues & { readonly dedupeKey: string },
  lock: boolean,
): Promise<{ id: number; created: boolean }> {
  // PostgreSQL: the advisory lock is held to the end of the transaction, so a concurrent enqueuer of
  // the same key waits, then sees this job once committed (or none after a rollback). SQLite needs no
  // lock: the conditional insert is one statement under the single writer.
  if (lock) await lockDedupeKey(db, values.kind, values.dedupeKey);
  for (let round = 0; round < DEDUPE_ROUNDS; round += 1) {
    const id = await insertJobUnlessActive(db, values);
    if (id !== undefined) return { id, created: true };
    const existing = await findActiveJobId(db, values.kind, values.dedupeKey);
    if (existing !== undefined) return { id: existing, created: false };
    // The blocking job finished in between (only possible across connections on SQLite): try again.
  }
  throw new Error(`could not enqueue ${values.kind} job "${values.dedupeKey}": its key kept changing hands`);
}

/**
 * Builds the queue over `db` (used for lookups; enqueue writes through the `db` it is given): the
 * implementation of the domain's JobQueue port, built once by app.ts.
 */
export function createJobQueue(deps: { db: Db; clock: Clock }): JobQueue {
  const { db, clock } = deps;
  return {
    async enqueue(target, job) {
      const maxAttempts = job.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
      if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
        throw new TypeError(`maxAttempts must be a whole number of at least 1, got ${maxAttempts}`);
      }
      const now = job.now ?? clock.now();
      const values: JobValues = {
        kind: job.kind,
        payload: serialise(job.payload),
        dedupeKey: job.dedupeKey ?? null,
        maxAttempts,
        runAt: job.runAt ?? now,
        now,
      };
      const { dedupeKey } = job;
      if (dedupeKey === undefined) return { id: await insertJob(target, values), created: true };
      const deduped = { ...values, dedupeKey };
      // The dialect is read from the executor, so a transaction passed in is handled like its database.
      if (!(target.getExecutor().adapter instanceof PostgresAdapter)) {
        return enqueueDeduped(target, deduped, false);
      }
      return inTransaction(target, (trx) => enqueueDeduped(trx, deduped, true));
    },
    find: (id) => findJob(db, id),
    latest: (kind, dedupeKey) => findLatestJob(db, kind, dedupeKey),
  };
}
