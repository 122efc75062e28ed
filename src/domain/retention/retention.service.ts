import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import type { Storage } from '../../storage/storage.ts';
import { type Actor, auditLogScope, instituteStanding } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, Invalid, NotFound, ParamMissing } from '../errors.ts';
import { parseId } from '../ids.ts';
import { has, optionalBoolean, optionalInteger, optionalString, type Params } from '../input.ts';
import { type ListQuery, type Page, parseListQuery } from '../listing.ts';
import { findVisibleSession } from '../student-sessions/session-access.ts';
import {
  countIncidentDetails,
  findDueSessions,
  findIdCheck,
  findKindPurges,
  findLegalHold,
  findRetentionSettings,
  findSessionMedia,
  forgetSessionMedia,
  isStillDue,
  listPurges,
  saveLegalHold,
  saveRetentionSettings,
} from './retention.repository.ts';
import {
  DEFAULT_SESSION_RETENTION_BATCH,
  type DueSession,
  effectiveRetention,
  type KindPurge,
  type KindRetention,
  LEGAL_HOLD_REASON_MAX,
  type LegalHold,
  type MediaItem,
  type NewPurge,
  PURGE_LIST_FIELDS,
  type Purge,
  RETENTION_KINDS,
  RETENTION_MAX_DAYS,
  type RetentionKind,
  type SessionRetentionResult,
  tallyByKind,
} from './retention.ts';

/**
 * The retention of every kind of session data at the institute, as the sweep applies it now (the
 * privacy panel and the record of processing read it). Returns them in RETENTION_KINDS order;
 * throws NotFound (Institute) when there is no such institute.
 */
export async function retentionFor(db: Db, instituteId: number): Promise<KindRetention[]> {
  const found = await findRetentionSettings(db, instituteId);
  if (found === undefined) throw new NotFound('Institute', instituteId);
  return effectiveRetention(found.settings, found.sessionPeriod);
}

/** What retention purged of the session, kind by kind (the review and the room show it). Returns them. */
export async function purgedKindsOf(db: Db, sessionId: number): Promise<KindPurge[]> {
  return findKindPurges(db, sessionId);
}

/** The setting name of a kind in a request: `id_photo_days`. */
export function retentionParamName(kind: RetentionKind): string {
  return `${kind}_days`;
}

/**
 * Reads a retention settings change: for each kind sent, `<kind>_days` a whole number of days
 * (1 to RETENTION_MAX_DAYS) or null/empty to follow the session period. Returns the changes;
 * throws ParamMissing when no kind is sent, Invalid naming the field.
 */
export function readRetentionChanges(params: Params): Map<RetentionKind, number | null> {
  const changes = new Map<RetentionKind, number | null>();
  for (const kind of RETENTION_KINDS) {
    const days = optionalInteger(params, retentionParamName(kind), 1, RETENTION_MAX_DAYS);
    if (days !== undefined) changes.set(kind, days);
  }
  if (changes.size === 0) throw new ParamMissing(retentionParamName('id_photo'));
  return changes;
}

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
  /**
   * The institute's retention per kind, for a superuser or its administrator. Returns it; throws
   * NotFound (Institute) when missing or another institute, Forbidden for any other member.
   */
  policies(actor: Actor, instituteId: string | number): Promise<KindRetention[]>;
  /**
   * Saves the sent `<kind>_days` settings (readRetentionChanges) as the actor, now. Returns the
   * retention as saved; throws as `policies` does, and ParamMissing or Invalid for bad input.
   */
  setPolicies(actor: Actor, instituteId: string | number, params: Params): Promise<KindRetention[]>;
  /** What retention purged of the session, kind by kind; access as `legalHold`. */
  purgedKinds(actor: Actor, sessionId: string | number): Promise<KindPurge[]>;
  /**
   * What retention purged of the session, kind by kind, for anyone who may see the session (the
   * review shows it). Returns them; throws NotFound (Student Session) when missing or out of sight.
   */
  sessionRetention(actor: Actor, sessionId: string | number): Promise<KindPurge[]>;
  /** retentionFor, with the service's database. */
  retentionFor(instituteId: number): Promise<KindRetention[]>;
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

  /** The institute when the actor may manage it; NotFound or Forbidden otherwise. */
  function managedInstitute(actor: Actor, instituteId: string | number): number {
    const id = parseId(instituteId);
    if (id === undefined) throw new NotFound('Institute', instituteId);
    const standing = instituteStanding(actor, id);
    if (standing === 'hidden') throw new NotFound('Institute', instituteId);
    if (standing !== 'manage') throw new Forbidden();
    return id;
  }

  /**
   * Purges one kind of one due session. Returns what went (undefined when it was no longer due or
   * another sweep finished it first); throws what the storage or database throws, rows then untouched.
   */
  async function purgeSession(due: DueSession): Promise<{ files: number; bytes: number } | undefined> {
    if (!(await isStillDue(db, due.id, due.kind))) return undefined;
    const items = distinct(await findSessionMedia(db, due.id, due.kind));
    for (const item of items) await storage.delete(item.storageKey);
    const now = clock.now();
    const entry = (kind: Purge['kind'], files: number, bytes: number): NewPurge => ({
      instituteId: due.instituteId,
      examId: due.examId,
      studentSessionId: due.id,
      kind,
      files,
      bytes,
      reason: 'retention',
      retentionPeriod: due.retentionPeriod,
      rule: due.rule,
      purgedAt: now,
    });
    const log = tallyByKind(items).map((tally) => entry(tally.kind, tally.files, tally.bytes));
    if (due.kind === 'incident') {
      const incidents = await countIncidentDetails(db, due.id);
      if (incidents > 0) log.push(entry('incident', incidents, 0));
    }
    const idCheck =
      due.kind === 'id_photo' && items.length > 0 ? ((await findIdCheck(db, due.id)) ?? null) : null;
    const mark: KindPurge = {
      studentSessionId: due.id,
      kind: due.kind,
      rule: due.rule,
      days: due.retentionPeriod,
      purgedAt: now,
      idCheck,
    };
    const done = await db.transaction().execute((trx) =>
      forgetSessionMedia(
        trx,
        mark,
        items.flatMap((item) => (item.fileId === null ? [] : [item.fileId])),
        log,
      ),
    );
    if (!done) return undefined;
    const files = items.length;
    const bytes = items.reduce((sum, item) => sum + item.size, 0);
    if (log.length > 0) {
      logger.info(
        {
          studentSessionId: due.id,
          instituteId: due.instituteId,
          kind: due.kind,
          rule: due.rule,
          retentionPeriod: due.retentionPeriod,
          files,
          bytes,
        },
        'session data past retention purged',
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
      const purgedSessions = new Set<number>();
      let files = 0;
      let bytes = 0;
      let skipped = 0;
      let failed = 0;
      const stopped = (): boolean => options.signal?.aborted === true;
      for (const kind of RETENTION_KINDS) {
        const passedOverKind = new Set<number>();
        while (!stopped()) {
          const excludeIds = [...new Set([...passedOver, ...passedOverKind])];
          const due = await findDueSessions(db, kind, { now, limit, excludeIds });
          for (const session of due) {
            if (stopped()) break;
            try {
              const purged = await purgeSession(session);
              if (purged === undefined) {
                skipped += 1;
                passedOverKind.add(session.id);
              } else {
                purgedSessions.add(session.id);
                files += purged.files;
                bytes += purged.bytes;
              }
            } catch (error) {
              failed += 1;
              passedOver.add(session.id);
              logger.warn(
                { err: error, studentSessionId: session.id, kind },
                'session data not purged; next sweep tries again',
              );
            }
            await options.progress?.(`${purgedSessions.size} sessions purged, ${failed} failed`);
          }
          if (due.length < limit) break;
        }
      }
      const sessions = purgedSessions.size;
      return { sessions, files, bytes, skipped, failed };
    },

    async policies(actor, instituteId) {
      return retentionFor(db, managedInstitute(actor, instituteId));
    },

    async setPolicies(actor, instituteId, params) {
      const id = managedInstitute(actor, instituteId);
      const changes = readRetentionChanges(params);
      await retentionFor(db, id); // NotFound for a missing institute, before anything is saved
      await saveRetentionSettings(db, id, changes, actor.id, clock.now());
      return retentionFor(db, id);
    },

    async purgedKinds(actor, sessionId) {
      const hold = await heldSession(actor, sessionId);
      return findKindPurges(db, hold.studentSessionId);
    },

    async sessionRetention(actor, sessionId) {
      const { session } = await findVisibleSession(db, actor, sessionId);
      return findKindPurges(db, session.id);
    },

    retentionFor: (instituteId) => retentionFor(db, instituteId),
  };
}
