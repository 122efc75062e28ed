import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import type { Storage } from '../../storage/storage.ts';
import { type Actor, auditLogScope } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, Invalid, ParamMissing } from '../errors.ts';
import { has, optionalBoolean, optionalString, type Params } from '../input.ts';
import { type ListQuery, type Page, parseListQuery } from '../listing.ts';
import { findVisibleSession } from '../student-sessions/session-access.ts';
import {
  findDueSessions,
  findLegalHold,
  findSessionMedia,
  forgetSessionMedia,
  isStillDue,
  listPurges,
  saveLegalHold,
} from './retention.repository.ts';
import {
  DEFAULT_SESSION_RETENTION_BATCH,
  type DueSession,
  LEGAL_HOLD_REASON_MAX,
  type LegalHold,
  type MediaItem,
  PURGE_LIST_FIELDS,
  type Purge,
  type SessionRetentionResult,
  tallyByKind,
} from './retention.ts';

/** How a sweep is run. */
export interface SweepOptions {
  /** Sessions looked at per query. Default DEFAULT_SESSION_RETENTION_BATCH. */
  readonly batchSize?: number;
  /** Aborted: the sweep stops after the session in progress (the next sweep carries on). */
  readonly signal?: AbortSignal;
  /** Told after each session (the job renews its lease with it). */
  readonly progress?: (text: string) => Promise<void>;
}

/** What one sweep did, with the sessions whose objects could not be deleted. */
export interface SweepOutcome extends SessionRetentionResult {
  readonly failed: number;
}

export interface RetentionService {
  /**
   * The session's legal hold, for a superuser or an administrator of its institute. Returns it;
   * throws NotFound (Student Session) when the session is missing or out of scope, Forbidden for any
   * other role that sees it.
   */
  legalHold(actor: Actor, sessionId: string | number): Promise<LegalHold>;
  /**
   * Sets (`hold` true) or clears (false) the session's legal hold with an optional `reason`, as the
   * actor, now. Returns the hold as saved and whether it changed; throws as `legalHold` does, and
   * ParamMissing (`hold`), Invalid (`hold`, `reason`) for bad input.
   */
  setLegalHold(
    actor: Actor,
    sessionId: string | number,
    params: Params,
  ): Promise<{ readonly hold: LegalHold; readonly changed: boolean }>;
  /** One page of the session's purge-log entries; access as `legalHold`, Invalid for a bad query. */
  sessionPurges(actor: Actor, sessionId: string | number, params: Params): Promise<Page<Purge>>;
  /**
   * One page of purge-log entries: every institute's for a superuser, its own for an administrator.
   * Throws Forbidden for any other role, Invalid for a bad filter, sort, page or limit.
   */
  purges(actor: Actor, params: Params): Promise<Page<Purge>>;
  /**
   * Purges the media of every session due at the clock's now, batch by batch (docs/retention.md):
   * for each, the stored objects first, then, in one transaction, the rows naming them, the purge
   * log and the session's `media_purged_at`. A crash in between leaves the rows, so the next sweep
   * deletes again (deleting a missing object is no error) and completes. A session whose objects
   * could not be deleted is left for the next sweep. Returns what was done; throws what the database
   * throws.
   */
  sweep(options?: SweepOptions): Promise<SweepOutcome>;
}

/** The actor may manage legal holds and read the purge log (superusers, administrators); else Forbidden. */
function assertRetentionAdmin(actor: Actor): void {
  if (auditLogScope(actor) === undefined) throw new Forbidden();
}

/** `hold` and `reason` of a legal-hold change. Throws ParamMissing, Invalid. */
function readHoldChange(params: Params): { held: boolean; reason: string | null } {
  if (!has(params, 'hold')) throw new ParamMissing('hold');
  const held = optionalBoolean(params, 'hold');
  if (held === undefined) throw new ParamMissing('hold');
  const reason = optionalString(params, 'reason')?.trim() ?? null;
  if (reason !== null && reason.length > LEGAL_HOLD_REASON_MAX) {
    throw new Invalid('reason', `is too long (maximum is ${LEGAL_HOLD_REASON_MAX} characters)`);
  }
  return { held, reason: reason === '' ? null : reason };
}

/** A log is read from its end: without a sort, the newest entry comes first. */
function newestFirst(params: Params): ListQuery {
  const parsed = parseListQuery(params, PURGE_LIST_FIELDS);
  if (has(params, 'sort')) return parsed;
  return { ...parsed, sort: [{ column: 'id', direction: 'desc', notNull: true }] };
}

/** The items once each, by storage key (a file named by two rows is deleted and counted once). */
function distinct(items: readonly MediaItem[]): MediaItem[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    if (seen.has(item.storageKey)) return false;
    seen.add(item.storageKey);
    return true;
  });
}

/** Builds the retention use cases. Returns the service; building it throws nothing. */
export function createRetentionService(deps: {
  readonly db: Db;
  readonly clock: Clock;
  readonly storage: Storage;
  readonly logger: Logger;
}): RetentionService {
  const { db, clock, storage, logger } = deps;

  async function heldSession(actor: Actor, sessionId: string | number): Promise<LegalHold> {
    const { session } = await findVisibleSession(db, actor, sessionId);
    assertRetentionAdmin(actor);
    const hold = await findLegalHold(db, session.id);
    if (hold === undefined) throw new Error(`student session ${session.id} vanished`);
    return hold;
  }

  /**
   * Purges one due session. Returns what went (undefined when it was no longer due or another sweep
   * finished it first); throws what the storage or database throws, rows then untouched.
   */
  async function purgeSession(due: DueSession): Promise<{ files: number; bytes: number } | undefined> {
    if (!(await isStillDue(db, due.id))) return undefined;
    const items = distinct(await findSessionMedia(db, due.id));
    for (const item of items) await storage.delete(item.storageKey);
    const now = clock.now();
    const tally = tallyByKind(items);
    const done = await db.transaction().execute((trx) =>
      forgetSessionMedia(
        trx,
        due.id,
        items.flatMap((item) => (item.fileId === null ? [] : [item.fileId])),
        tally.map((entry) => ({
          instituteId: due.instituteId,
          examId: due.examId,
          studentSessionId: due.id,
          kind: entry.kind,
          files: entry.files,
          bytes: entry.bytes,
          reason: 'retention',
          retentionPeriod: due.retentionPeriod,
          purgedAt: now,
        })),
        now,
      ),
    );
    if (!done) return undefined;
    const files = items.length;
    const bytes = items.reduce((sum, item) => sum + item.size, 0);
    if (files > 0) {
      logger.info(
        {
          studentSessionId: due.id,
          instituteId: due.instituteId,
          retentionPeriod: due.retentionPeriod,
          files,
          bytes,
        },
        'session media past retention purged',
      );
    }
    return { files, bytes };
  }

  return {
    legalHold: heldSession,

    async setLegalHold(actor, sessionId, params) {
      const before = await heldSession(actor, sessionId);
      const change = readHoldChange(params);
      await saveLegalHold(db, before.studentSessionId, { ...change, setBy: actor.id, now: clock.now() });
      const hold = await findLegalHold(db, before.studentSessionId);
      if (hold === undefined) throw new Error(`student session ${before.studentSessionId} vanished`);
      return { hold, changed: before.held !== hold.held };
    },

    async sessionPurges(actor, sessionId, params) {
      const { session } = await findVisibleSession(db, actor, sessionId);
      assertRetentionAdmin(actor);
      return listPurges(db, { studentSessionId: session.id }, newestFirst(params));
    },

    async purges(actor, params) {
      const scope = auditLogScope(actor);
      if (scope === undefined) throw new Forbidden();
      const list = newestFirst(params);
      return listPurges(db, scope.kind === 'all' ? {} : { instituteId: scope.instituteId }, list);
    },

    async sweep(options = {}) {
      const limit = options.batchSize ?? DEFAULT_SESSION_RETENTION_BATCH;
      if (!Number.isInteger(limit) || limit < 1) {
        throw new TypeError(`batchSize must be a whole number of at least 1, got ${limit}`);
      }
      const now = clock.now();
      // Sessions passed over in this sweep (a hold set meanwhile, a storage failure) are not asked for again.
      const passedOver = new Set<number>();
      let sessions = 0;
      let files = 0;
      let bytes = 0;
      let skipped = 0;
      let failed = 0;
      const stopped = (): boolean => options.signal?.aborted === true;
      while (!stopped()) {
        const due = await findDueSessions(db, { now, limit, excludeIds: [...passedOver] });
        for (const session of due) {
          if (stopped()) break;
          try {
            const purged = await purgeSession(session);
            if (purged === undefined) {
              skipped += 1;
              passedOver.add(session.id);
            } else {
              sessions += 1;
              files += purged.files;
              bytes += purged.bytes;
            }
          } catch (error) {
            failed += 1;
            passedOver.add(session.id);
            logger.warn(
              { err: error, studentSessionId: session.id },
              'session media not purged; next sweep tries again',
            );
          }
          await options.progress?.(`${sessions} sessions purged, ${failed} failed`);
        }
        if (due.length < limit) break;
      }
      return { sessions, files, bytes, skipped, failed };
    },
  };
}
