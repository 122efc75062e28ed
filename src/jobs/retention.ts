import type { Db, DialectName } from '../db/database.ts';
import { deleteSentOutboxMessages } from '../domain/mail/outbox.repository.ts';
import { deleteFinishedJobs } from './jobs.repository.ts';

/** One day in milliseconds. */
const DAY_MS = 24 * 60 * 60 * 1000;

/** Rows deleted per statement: small enough that no batch holds its locks for long. */
export const DEFAULT_RETENTION_BATCH = 500;

/** What a retention sweep removed. */
export interface RetentionResult {
  /** Finished jobs (succeeded, or failed for good) deleted. */
  readonly jobs: number;
  /** Sent outbox messages deleted. */
  readonly mail: number;
}

/**
 * The moment before which finished history may go: `retentionDays` whole days before `now`.
 * Returns epoch milliseconds.
 */
export function retentionCutoff(now: number, retentionDays: number): number {
  return now - retentionDays * DAY_MS;
}

/**
 * Deletes the jobs that finished and the outbox messages that were sent more than `retentionDays`
 * before `now`, in batches of `batchSize` rows, one statement each, until a batch comes back short
 * (or `signal` is aborted between two batches). Jobs go first, then mail: a sent message whose
 * delivery job is still queued or running stays (see deleteSentOutboxMessages), and nothing an
 * export, a delivery or a redelivery still needs is touched. Returns how many rows of each went;
 * throws what the database throws (rows deleted by earlier batches stay deleted).
 */
export async function purgeFinishedHistory(
  db: Db,
  dialect: DialectName,
  options: {
    readonly now: number;
    readonly retentionDays: number;
    readonly batchSize?: number;
    readonly signal?: AbortSignal;
  },
): Promise<RetentionResult> {
  const batch = {
    before: retentionCutoff(options.now, options.retentionDays),
    limit: options.batchSize ?? DEFAULT_RETENTION_BATCH,
  };
  if (!Number.isInteger(batch.limit) || batch.limit < 1) {
    throw new TypeError(`batchSize must be a whole number of at least 1, got ${batch.limit}`);
  }
  const drain = async (deleteBatch: () => Promise<number>): Promise<number> => {
    let total = 0;
    while (options.signal?.aborted !== true) {
      const deleted = await deleteBatch();
      total += deleted;
      if (deleted < batch.limit) break;
    }
    return total;
  };
  const jobs = await drain(() => deleteFinishedJobs(db, dialect, batch));
  const mail = await drain(() => deleteSentOutboxMessages(db, dialect, batch));
  return { jobs, mail };
}
