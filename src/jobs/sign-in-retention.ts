import type { Db, DialectName } from '../db/database.ts';
import { deleteAuditEventsBefore } from '../domain/audit/audit.repository.ts';
import { FORGET_AFTER_MS } from '../domain/staff-auth/sign-in-throttle.ts';
import { SESSION_IDLE_MS } from '../domain/staff-auth/staff-auth.service.ts';
import { DEFAULT_RETENTION_BATCH, retentionCutoff } from './retention.ts';

/** What one sweep of the audit log and the sign-in tables removed. */
export interface SignInRetentionResult {
  /** Audit events older than AUDIT_RETENTION_DAYS. */
  readonly auditEvents: number;
  /** Browser sessions past their idle or absolute limit (nobody presented them since). */
  readonly staffSessions: number;
  /** Invitation and reset links used or expired. */
  readonly oneTimeLinks: number;
  /** Throttle counts whose last failure is past FORGET_AFTER_MS and whose block is over. */
  readonly throttles: number;
}

/**
 * Deletes, in batches of `batchSize` rows (one statement each) until a batch comes back short or
 * `signal` is aborted between two batches: audit events created more than `auditRetentionDays`
 * before `now`, staff sessions that ended by a limit, one-time links used or expired, and throttle
 * rows that no longer slow anyone (their count would start again from zero anyway). Nothing still
 * able to sign someone in, or still counting failures, is touched. Returns how many rows of each
 * went; throws what the database throws (rows deleted by earlier batches stay deleted).
 */
export async function purgeSignInHistory(
  db: Db,
  dialect: DialectName,
  options: {
    readonly now: number;
    readonly auditRetentionDays: number;
    readonly batchSize?: number;
    readonly signal?: AbortSignal;
  },
): Promise<SignInRetentionResult> {
  const { now } = options;
  const limit = options.batchSize ?? DEFAULT_RETENTION_BATCH;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new TypeError(`batchSize must be a whole number of at least 1, got ${limit}`);
  }
  const drain = async (deleteBatch: () => Promise<bigint | number>): Promise<number> => {
    let total = 0;
    while (options.signal?.aborted !== true) {
      const deleted = Number(await deleteBatch());
      total += deleted;
      if (deleted < limit) break;
    }
    return total;
  };
  // PostgreSQL has no DELETE ... LIMIT: each batch deletes the ids a limited select picks; there,
  // rows another sweep holds are skipped rather than waited for.
  const lockFree = <Q extends { forUpdate(): { skipLocked(): Q } }>(query: Q): Q =>
    dialect === 'postgres' ? query.forUpdate().skipLocked() : query;

  const auditEvents = await drain(() =>
    deleteAuditEventsBefore(db, dialect, {
      before: retentionCutoff(now, options.auditRetentionDays),
      limit,
    }),
  );
  const staffSessions = await drain(async () => {
    const ended = db
      .selectFrom('staff_sessions')
      .select('id')
      .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', now - SESSION_IDLE_MS)]))
      .limit(limit);
    const result = await db
      .deleteFrom('staff_sessions')
      .where('id', 'in', lockFree(ended))
      .executeTakeFirst();
    return result.numDeletedRows;
  });
  const oneTimeLinks = await drain(async () => {
    const spent = db
      .selectFrom('one_time_links')
      .select('id')
      .where((eb) => eb.or([eb('used_at', 'is not', null), eb('expires_at', '<=', now)]))
      .limit(limit);
    const result = await db
      .deleteFrom('one_time_links')
      .where('id', 'in', lockFree(spent))
      .executeTakeFirst();
    return result.numDeletedRows;
  });
  const throttles = await drain(async () => {
    const stale = db
      .selectFrom('sign_in_throttles')
      .select('key')
      .where('last_failure_at', '<=', now - FORGET_AFTER_MS)
      .where('blocked_until', '<=', now)
      .limit(limit);
    const result = await db
      .deleteFrom('sign_in_throttles')
      .where('key', 'in', lockFree(stale))
      .executeTakeFirst();
    return result.numDeletedRows;
  });
  return { auditEvents, staffSessions, oneTimeLinks, throttles };
}
