/**
 * Retention of session media (docs/retention.md): a session's recordings, photos and uploads are
 * purged `session_retention_period` days (an institute setting) after the session ended, unless an
 * administrator holds the session (legal hold). The session record itself stays; the purge log says
 * what went.
 */
import type { ListFields } from '../listing.ts';

/** One day in milliseconds: `session_retention_period` counts whole days. */
export const DAY_MS = 24 * 60 * 60 * 1000;

/** Sessions purged per batch: each is one storage round per file and one short transaction. */
export const DEFAULT_SESSION_RETENTION_BATCH = 50;

/** The job kind of the sweep, and its dedupe key (one sweep at a time across every worker). */
export const SESSION_RETENTION_JOB = 'session.retention';
export const SESSION_RETENTION_DEDUPE_KEY = 'sweep';

/** Longest reason a legal hold keeps. */
export const LEGAL_HOLD_REASON_MAX = 1000;

/**
 * The kinds of media a purge removes, one purge-log row per session and kind:
 * - `recording`: finalised recordings (the `recordings` rows and their WebM files);
 * - `recording_chunk`: the room's webcam and screen chunks not (yet) assembled or kept by setting;
 * - `photo`: the ID card and face photo;
 * - `upload`: files the candidate handed in, the session's exam document included.
 */
export const PURGE_KINDS = ['recording', 'recording_chunk', 'photo', 'upload'] as const;
export type PurgeKind = (typeof PURGE_KINDS)[number];

/** Why media went: the sweep (the only cause so far). */
export type PurgeReason = 'retention';

/** A session's legal hold as it stands: the last set or clear, who did it and when. */
export interface LegalHold {
  readonly studentSessionId: number;
  readonly held: boolean;
  /** The reason given with the last change (null when none was given, or never changed). */
  readonly reason: string | null;
  /** The user who last set or cleared it; null when never changed. */
  readonly setBy: number | null;
  /** Epoch ms of the last change; null when never changed. */
  readonly setAt: number | null;
  /** Epoch ms at which the sweep purged the session's media; null while they are kept. */
  readonly mediaPurgedAt: number | null;
}

/** One purge-log entry. Times are epoch milliseconds. */
export interface Purge {
  readonly id: number;
  readonly instituteId: number;
  readonly examId: number;
  readonly studentSessionId: number;
  readonly kind: PurgeKind;
  readonly files: number;
  readonly bytes: number;
  readonly reason: PurgeReason;
  /** The retention period (days) in force when the media went. */
  readonly retentionPeriod: number | null;
  readonly purgedAt: number;
}

/** A purge-log entry to write (the id comes from the database). */
export type NewPurge = Omit<Purge, 'id'>;

/** What the purge-log listings filter and sort on. */
export const PURGE_LIST_FIELDS: ListFields = {
  id: { column: 'id', type: 'integer', notNull: true },
  institute_id: { column: 'institute_id', type: 'integer', notNull: true },
  exam_id: { column: 'exam_id', type: 'integer', notNull: true },
  student_session_id: { column: 'student_session_id', type: 'integer', notNull: true },
  kind: { column: 'kind', type: 'string', notNull: true },
  files: { column: 'files', type: 'integer', notNull: true },
  bytes: { column: 'bytes', type: 'integer', notNull: true },
  reason: { column: 'reason', type: 'string', notNull: true },
  purged_at: { column: 'purged_at', type: 'time', notNull: true },
};

/** A stored object of a session that a purge removes, and the row that names it. */
export interface MediaItem {
  readonly kind: PurgeKind;
  /** The `files` row (null for a recording that names its object by storage key alone). */
  readonly fileId: number | null;
  readonly storageKey: string;
  readonly size: number;
}

/** A session the sweep is due to purge. */
export interface DueSession {
  readonly id: number;
  readonly examId: number;
  readonly instituteId: number;
  readonly retentionPeriod: number;
}

/** What one sweep did. */
export interface SessionRetentionResult {
  /** Sessions whose media went (those that had none are counted too: they are done). */
  readonly sessions: number;
  readonly files: number;
  readonly bytes: number;
  /** Sessions passed over because a hold was set, or a recording was still being assembled. */
  readonly skipped: number;
}

/**
 * Totals of `items` per kind, in PURGE_KINDS order, leaving out kinds with no file. Returns them.
 */
export function tallyByKind(
  items: readonly MediaItem[],
): { readonly kind: PurgeKind; readonly files: number; readonly bytes: number }[] {
  return PURGE_KINDS.flatMap((kind) => {
    const ofKind = items.filter((item) => item.kind === kind);
    if (ofKind.length === 0) return [];
    return [{ kind, files: ofKind.length, bytes: ofKind.reduce((sum, item) => sum + item.size, 0) }];
  });
}
