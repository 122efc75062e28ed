/**
 * Retention of session data (docs/retention.md): each kind of a session's data (the ID photo, the
 * face photo, recordings, uploads, incident details) is purged a number of days after the session
 * ended, set per institute and kind (null follows the institute's `session_retention_period`); the
 * ID photo also goes 24 hours after a final verdict, whichever comes first. A legal hold keeps every
 * kind. The session record itself stays; it and the purge log say what went, when, by which rule.
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
 * The kinds of a session's data with a retention period of their own (docs/retention.md):
 * - `id_photo`: the ID card photo (the fact that the ID was checked, by whom and when, stays);
 * - `face_photo`: the face photo taken in the room;
 * - `recording`: finalised recordings and the room's recording chunks;
 * - `upload`: files the candidate handed in, the session's exam document included;
 * - `incident`: the written details (comments) of incidents and flags; the rows stay, so their
 *   kinds, times and counts still serve the review.
 */
export const RETENTION_KINDS = ['id_photo', 'face_photo', 'recording', 'upload', 'incident'] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];

/**
 * Each kind's period in days after the session ended when the institute set none; null follows the
 * institute's session_retention_period (and, when that is null too, keeps the kind until the
 * session is deleted). The ID photo's 30 days are its review period.
 */
export const RETENTION_DEFAULT_DAYS: Readonly<Record<RetentionKind, number | null>> = {
  id_photo: 30,
  face_photo: null,
  recording: null,
  upload: null,
  incident: null,
};

/** The ID photo also goes this many hours after the session's verdict became final. */
export const ID_PHOTO_AFTER_VERDICT_HOURS = 24;

/** Verdicts that settle a review (a `violation` waiting for its second review does not). */
export const FINAL_VERDICTS: readonly string[] = ['passed', 'suspicious', 'violation'];

/** The longest period an institute may set for a kind: 100 years. */
export const RETENTION_MAX_DAYS = 36_500;

/**
 * How a kind is purged: `period` (days after the session ended) or `final_verdict_or_period` (the
 * ID photo: 24 hours after the verdict became final, or the period, whichever comes first).
 */
export type RetentionRule = 'period' | 'final_verdict_or_period';

/** Which rule purged a kind of one session. */
export type PurgeRule = 'period' | 'final_verdict';

/** The retention of one kind at one institute, as the sweep applies it now. */
export interface KindRetention {
  readonly kind: RetentionKind;
  /** Days after the session ended it is kept (the setting, or the session period it follows); null: not purged by time. */
  readonly days: number | null;
  /** What the institute set: a number of days, null to follow the session period, undefined when it set nothing (the default applies). */
  readonly setting: number | null | undefined;
  /** The kind's default (RETENTION_DEFAULT_DAYS). */
  readonly defaultDays: number | null;
  /** True when `days` is the institute's session_retention_period. */
  readonly followsSessionPeriod: boolean;
  /** Hours after a final verdict it goes (the ID photo), else null. */
  readonly afterFinalVerdictHours: number | null;
  readonly rule: RetentionRule;
}

/**
 * The retention of every kind, in RETENTION_KINDS order, from the institute's settings (`settings`,
 * a kind absent when it set nothing) and its session_retention_period. Returns them.
 */
export function effectiveRetention(
  settings: ReadonlyMap<RetentionKind, number | null>,
  sessionPeriod: number | null,
): KindRetention[] {
  return RETENTION_KINDS.map((kind) => {
    const setting = settings.has(kind) ? (settings.get(kind) ?? null) : undefined;
    const own = setting === undefined ? RETENTION_DEFAULT_DAYS[kind] : setting;
    const isIdPhoto = kind === 'id_photo';
    return {
      kind,
      days: own ?? sessionPeriod,
      setting,
      defaultDays: RETENTION_DEFAULT_DAYS[kind],
      followsSessionPeriod: own === null,
      afterFinalVerdictHours: isIdPhoto ? ID_PHOTO_AFTER_VERDICT_HOURS : null,
      rule: isIdPhoto ? 'final_verdict_or_period' : 'period',
    };
  });
}

/** What the sweep removed of one kind of one session, and when (the session's record of it). */
export interface KindPurge {
  readonly studentSessionId: number;
  readonly kind: RetentionKind;
  readonly rule: PurgeRule;
  /** The period (days) in force when it went; null when the final-verdict rule purged it without one. */
  readonly days: number | null;
  readonly purgedAt: number;
  /** For the ID photo: the ID was checked (a final verdict was recorded over it), by whom and when. */
  readonly idCheck: {
    readonly checkedBy: number | null;
    readonly checkedByName: string | null;
    readonly checkedAt: number;
  } | null;
}

/**
 * The entries a purge log holds, one per session and kind that had anything:
 * - `recording`, `recording_chunk`: finalised recordings, the room's webcam and screen chunks;
 * - `id_photo`, `face_photo`: the two photos (`photo`: both, in entries written before 0031);
 * - `upload`: files the candidate handed in, the session's exam document included;
 * - `incident`: incident comments erased (`files` counts the incidents).
 */
export const PURGE_KINDS = [
  'recording',
  'recording_chunk',
  'id_photo',
  'face_photo',
  'photo',
  'upload',
  'incident',
] as const;
export type PurgeKind = (typeof PURGE_KINDS)[number];

/** Why data went: the sweep (the only cause so far). */
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
  /** The rule that purged it; null for entries written before 0031_retention_per_kind. */
  readonly rule: PurgeRule | null;
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
  rule: { column: 'rule', type: 'string' },
};

/** A stored object of a session that a purge removes, and the row that names it. */
export interface MediaItem {
  readonly kind: PurgeKind;
  /** The `files` row (null for a recording that names its object by storage key alone). */
  readonly fileId: number | null;
  readonly storageKey: string;
  readonly size: number;
}

/** A session one kind of whose data the sweep is due to purge. */
export interface DueSession {
  readonly id: number;
  readonly examId: number;
  readonly instituteId: number;
  readonly kind: RetentionKind;
  /** The kind's period in force (days); null when only the final-verdict rule applies. */
  readonly retentionPeriod: number | null;
  readonly rule: PurgeRule;
}

/** What one sweep did. */
export interface SessionRetentionResult {
  /** Sessions some kind of whose data went (those that had none of it are counted too: they are done). */
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
