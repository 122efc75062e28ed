import { type Selectable, type SqlBool, sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import type { SessionPurgesTable } from '../../db/tables.ts';
import type { ListQuery, Page } from '../listing.ts';
import { RECORDING_KINDS } from '../room/room.ts';
import {
  DAY_MS,
  type DueSession,
  FINAL_VERDICTS,
  ID_PHOTO_AFTER_VERDICT_HOURS,
  type KindPurge,
  type LegalHold,
  type MediaItem,
  type NewPurge,
  PURGE_KINDS,
  type Purge,
  RETENTION_DEFAULT_DAYS,
  RETENTION_KINDS,
  type RetentionKind,
} from './retention.ts';

/** Session-file kinds that are recording chunks (webcam, screen, phone); every other kind is an upload. */
const CHUNK_KINDS: readonly string[] = Object.values(RECORDING_KINDS);

/** The kinds whose purge removes stored files; once all went, the session's media are purged. */
const MEDIA_KINDS: RetentionKind[] = ['id_photo', 'face_photo', 'recording', 'upload'];

/** Transcoding states in which the finalisation job may still write a recording. */
const ASSEMBLING = ['queued', 'processing'];

function purgeFromRow(row: Selectable<SessionPurgesTable>): Purge {
  return {
    id: row.id,
    instituteId: row.institute_id,
    examId: row.exam_id,
    studentSessionId: row.student_session_id,
    kind: PURGE_KINDS.find((kind) => kind === row.kind) ?? 'upload',
    files: Number(row.files),
    bytes: Number(row.bytes),
    reason: 'retention',
    retentionPeriod: row.retention_period === null ? null : Number(row.retention_period),
    rule: row.rule === 'final_verdict' ? 'final_verdict' : row.rule === 'period' ? 'period' : null,
    purgedAt: Number(row.purged_at),
  };
}

/** The final verdict's time of the session aliased `student_sessions`: its newest entry, when final. */
const FINAL_VERDICT_AT = sql<number | null>`(select r.created_at from session_reviews r
  where r.student_session_id = student_sessions.id
    and r.verdict in (${sql.join(FINAL_VERDICTS)}) and r.second_review <> 'pending'
    and not exists (select 1 from session_reviews l
      where l.student_session_id = r.student_session_id and l.id > r.id))`;

/** The kind's period in force (days) for the row's institute: its setting, else the default, else the session period. */
function periodOf(kind: RetentionKind) {
  const fallback = RETENTION_DEFAULT_DAYS[kind];
  return sql<number | null>`coalesce(case when retention_policies.institute_id is null
    then cast(${fallback} as integer) else retention_policies.days end,
    institutes.session_retention_period)`;
}

/**
 * Up to `limit` sessions one `kind` of whose data is due to go at `now`: not held, that kind not
 * purged yet, no recording still being assembled (for `recording`), not among `excludeIds`, and
 * ended more than the kind's period before `now` or, for the ID photo, with a verdict final for
 * more than ID_PHOTO_AFTER_VERDICT_HOURS. Returns them with the rule that applies (the one whose
 * time came first), the longest-ended first.
 */
export async function findDueSessions(
  db: Db,
  kind: RetentionKind,
  options: { readonly now: number; readonly limit: number; readonly excludeIds?: readonly number[] },
): Promise<DueSession[]> {
  const period = periodOf(kind);
  // bigint: a period of a month in milliseconds is past PostgreSQL's integer.
  const periodPassed = sql<SqlBool>`(student_sessions.end_time is not null and ${period} is not null
    and student_sessions.end_time + cast(${period} as bigint) * ${DAY_MS} < ${options.now})`;
  const verdictMs = ID_PHOTO_AFTER_VERDICT_HOURS * 60 * 60 * 1000;
  const verdictPassed =
    kind === 'id_photo'
      ? sql<SqlBool>`(${FINAL_VERDICT_AT} + ${verdictMs} < ${options.now})`
      : sql<SqlBool>`1 = 0`;
  let query = db
    .selectFrom('student_sessions')
    .innerJoin('exams', 'exams.id', 'student_sessions.exam_id')
    .innerJoin('institutes', 'institutes.id', 'exams.institute_id')
    .leftJoin('retention_policies', (join) =>
      join
        .onRef('retention_policies.institute_id', '=', 'institutes.id')
        .on('retention_policies.kind', '=', kind),
    )
    .select([
      'student_sessions.id',
      'student_sessions.exam_id',
      'student_sessions.end_time',
      'exams.institute_id',
      period.as('period'),
      (kind === 'id_photo' ? FINAL_VERDICT_AT : sql<number | null>`cast(null as bigint)`).as('final_at'),
    ])
    .where('student_sessions.legal_hold', '=', false)
    // An open appeal holds the session like a legal hold, until it is decided (docs/appeals.md).
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('appeals')
            .select('appeals.id')
            .whereRef('appeals.student_session_id', '=', 'student_sessions.id')
            .where('appeals.status', '=', 'open'),
        ),
      ),
    )
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('session_kind_purges')
            .select('session_kind_purges.kind')
            .whereRef('session_kind_purges.student_session_id', '=', 'student_sessions.id')
            .where('session_kind_purges.kind', '=', kind),
        ),
      ),
    )
    .where(sql<SqlBool>`(${periodPassed} or ${verdictPassed})`)
    .orderBy('student_sessions.end_time')
    .orderBy('student_sessions.id')
    .limit(options.limit);
  if (kind === 'recording') query = query.where('student_sessions.transcoding_status', 'not in', ASSEMBLING);
  const excluded = options.excludeIds ?? [];
  if (excluded.length > 0) query = query.where('student_sessions.id', 'not in', excluded);
  const rows = await query.execute();
  return rows.map((row) => {
    const days = row.period === null ? null : Number(row.period);
    const byPeriod = row.end_time === null || days === null ? Infinity : Number(row.end_time) + days * DAY_MS;
    const byVerdict = row.final_at === null ? Infinity : Number(row.final_at) + verdictMs;
    return {
      id: row.id,
      examId: row.exam_id,
      instituteId: row.institute_id,
      kind,
      retentionPeriod: days,
      rule: byVerdict < byPeriod ? 'final_verdict' : 'period',
    };
  });
}

/**
 * True when the session's `kind` may be purged now: the session exists, is not held, that kind is
 * not purged yet, and (for recordings) none is being assembled. Read again just before deleting.
 */
export async function isStillDue(db: Db, sessionId: number, kind: RetentionKind): Promise<boolean> {
  const row = await db
    .selectFrom('student_sessions')
    .select(['legal_hold', 'transcoding_status'])
    .where('id', '=', sessionId)
    .executeTakeFirst();
  if (row === undefined || Boolean(row.legal_hold)) return false;
  if (kind === 'recording' && ASSEMBLING.includes(row.transcoding_status)) return false;
  const appeal = await db
    .selectFrom('appeals')
    .select('id')
    .where('student_session_id', '=', sessionId)
    .where('status', '=', 'open')
    .executeTakeFirst();
  if (appeal !== undefined) return false;
  const mark = await db
    .selectFrom('session_kind_purges')
    .select('kind')
    .where('student_session_id', '=', sessionId)
    .where('kind', '=', kind)
    .executeTakeFirst();
  return mark === undefined;
}

/**
 * Every stored object of one kind the session holds (none for `incident`): the ID card or face
 * photo file, finalised recordings and recording chunks, or uploads and the exam document. A new
 * kind of session media adds its query here (and its rows to forgetSessionMedia). Returns them.
 */
export async function findSessionMedia(db: Db, sessionId: number, kind: RetentionKind): Promise<MediaItem[]> {
  if (kind === 'incident') return [];
  if (kind === 'id_photo' || kind === 'face_photo') {
    const column =
      kind === 'id_photo' ? 'student_sessions.id_card_file_id' : 'student_sessions.face_photo_file_id';
    const rows = await db
      .selectFrom('student_sessions')
      .innerJoin('files', 'files.id', column)
      .select(['files.id', 'files.storage_key', 'files.size'])
      .where('student_sessions.id', '=', sessionId)
      .execute();
    return rows.map((row) => ({ kind, fileId: row.id, storageKey: row.storage_key, size: Number(row.size) }));
  }
  const items: MediaItem[] = [];
  const sessionFiles = await db
    .selectFrom('session_files')
    .innerJoin('files', 'files.id', 'session_files.file_id')
    .select(['session_files.kind', 'files.id', 'files.storage_key', 'files.size'])
    .where('session_files.student_session_id', '=', sessionId)
    .execute();
  const chunks = kind === 'recording';
  for (const row of sessionFiles) {
    if (CHUNK_KINDS.includes(row.kind) !== chunks) continue;
    items.push({
      kind: chunks ? 'recording_chunk' : 'upload',
      fileId: row.id,
      storageKey: row.storage_key,
      size: Number(row.size),
    });
  }
  if (kind === 'upload') {
    const documents = await db
      .selectFrom('student_sessions')
      .innerJoin('files', 'files.id', 'student_sessions.exam_document_file_id')
      .select(['files.id', 'files.storage_key', 'files.size'])
      .where('student_sessions.id', '=', sessionId)
      .execute();
    for (const row of documents) {
      items.push({ kind: 'upload', fileId: row.id, storageKey: row.storage_key, size: Number(row.size) });
    }
    // The files the candidate sent with an appeal go with the uploads.
    const appealFiles = await db
      .selectFrom('appeal_files')
      .innerJoin('appeals', 'appeals.id', 'appeal_files.appeal_id')
      .innerJoin('files', 'files.id', 'appeal_files.file_id')
      .select(['files.id', 'files.storage_key', 'files.size'])
      .where('appeals.student_session_id', '=', sessionId)
      .execute();
    for (const row of appealFiles) {
      items.push({ kind: 'upload', fileId: row.id, storageKey: row.storage_key, size: Number(row.size) });
    }
    return items;
  }
  const recordings = await db
    .selectFrom('recordings')
    .leftJoin('files', 'files.id', 'recordings.file_id')
    .select([
      'recordings.file_id',
      'recordings.storage_key',
      'recordings.size',
      'files.storage_key as file_key',
      'files.size as file_size',
    ])
    .where('recordings.student_session_id', '=', sessionId)
    .execute();
  for (const row of recordings) {
    const storageKey = row.file_key ?? row.storage_key;
    if (storageKey === null) continue; // not assembled: nothing stored yet
    items.push({
      kind: 'recording',
      fileId: row.file_key === null ? null : row.file_id,
      storageKey,
      size: Number(row.file_size ?? row.size ?? 0),
    });
    // A recording stored under a key of its own besides its file record loses both.
    if (row.file_key !== null && row.storage_key !== null && row.storage_key !== row.file_key) {
      items.push({ kind: 'recording', fileId: null, storageKey: row.storage_key, size: 0 });
    }
  }
  return items;
}

/** How many of the session's incidents still carry written details (a non-empty comment). */
export async function countIncidentDetails(db: Db, sessionId: number): Promise<number> {
  const row = await db
    .selectFrom('incidents')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('student_session_id', '=', sessionId)
    .where('comment', '<>', '')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * The fact that the session's ID was checked: the reviewer of its final verdict (the verdict
 * settles the review of the ID photo with the rest), or undefined when no verdict is final.
 */
export async function findIdCheck(
  db: Db,
  sessionId: number,
): Promise<{ checkedBy: number | null; checkedByName: string | null; checkedAt: number } | undefined> {
  const newest = await db
    .selectFrom('session_reviews')
    .select(['verdict', 'second_review', 'reviewer_id', 'reviewer_name', 'created_at'])
    .where('student_session_id', '=', sessionId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (
    newest === undefined ||
    !FINAL_VERDICTS.includes(newest.verdict) ||
    newest.second_review === 'pending'
  ) {
    return undefined;
  }
  return {
    checkedBy: newest.reviewer_id,
    checkedByName: newest.reviewer_name,
    checkedAt: Number(newest.created_at),
  };
}

const PHOTO_FIELDS = {
  id_photo: {
    id_card_file_id: null,
    id_card_file_name: null,
    id_card_content_type: null,
    id_card_file_size: null,
  },
  face_photo: {
    face_photo_file_id: null,
    face_photo_file_name: null,
    face_photo_content_type: null,
    face_photo_file_size: null,
  },
} as const;

/**
 * In the caller's transaction: marks `mark.kind` of the session purged unless it already is, and
 * only then forgets that kind's rows (the photo's fields, the recordings and chunks, the uploads and
 * exam document, or the incidents' comments), the `files` rows in `fileIds`, and writes `log`. The
 * session's `media_purged_at` is set once every media kind went. Returns false, changing nothing,
 * when the kind was purged already (by another sweep).
 */
export async function forgetSessionMedia(
  trx: Db,
  mark: KindPurge,
  fileIds: readonly number[],
  log: readonly NewPurge[],
): Promise<boolean> {
  const sessionId = mark.studentSessionId;
  const now = mark.purgedAt;
  const inserted = await trx
    .insertInto('session_kind_purges')
    .values({
      student_session_id: sessionId,
      kind: mark.kind,
      rule: mark.rule,
      days: mark.days,
      purged_at: now,
      id_checked: mark.idCheck !== null,
      id_checked_by: mark.idCheck?.checkedBy ?? null,
      id_checked_by_name: mark.idCheck?.checkedByName ?? null,
      id_checked_at: mark.idCheck?.checkedAt ?? null,
    })
    .onConflict((conflict) => conflict.columns(['student_session_id', 'kind']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return false;
  const chunkKinds = [...CHUNK_KINDS];
  switch (mark.kind) {
    case 'id_photo':
    case 'face_photo':
      await trx
        .updateTable('student_sessions')
        .set({ ...PHOTO_FIELDS[mark.kind], updated_at: now })
        .where('id', '=', sessionId)
        .execute();
      break;
    case 'recording':
      await trx.deleteFrom('recordings').where('student_session_id', '=', sessionId).execute();
      await trx
        .deleteFrom('session_files')
        .where('student_session_id', '=', sessionId)
        .where('kind', 'in', chunkKinds)
        .execute();
      break;
    case 'upload':
      await trx
        .deleteFrom('session_files')
        .where('student_session_id', '=', sessionId)
        .where('kind', 'not in', chunkKinds)
        .execute();
      await trx
        .deleteFrom('appeal_files')
        .where('appeal_id', 'in', (eb) =>
          eb.selectFrom('appeals').select('appeals.id').where('appeals.student_session_id', '=', sessionId),
        )
        .execute();
      await trx
        .updateTable('student_sessions')
        .set({
          exam_document_file_id: null,
          exam_document_content_type: null,
          exam_document_file_size: null,
          exam_document_updated_at: null,
          updated_at: now,
        })
        .where('id', '=', sessionId)
        .execute();
      break;
    case 'incident':
      await trx
        .updateTable('incidents')
        .set({ comment: '', updated_at: now })
        .where('student_session_id', '=', sessionId)
        .execute();
      break;
  }
  if (mark.kind !== 'incident') {
    // `media_purged_at` means every stored media kind went (the candidate's data download reads it).
    const marks = await trx
      .selectFrom('session_kind_purges')
      .select('kind')
      .where('student_session_id', '=', sessionId)
      .where('kind', 'in', MEDIA_KINDS)
      .execute();
    if (marks.length === MEDIA_KINDS.length) {
      await trx
        .updateTable('student_sessions')
        .set({ media_purged_at: now })
        .where('id', '=', sessionId)
        .where('media_purged_at', 'is', null)
        .execute();
    }
  }
  if (fileIds.length > 0) await trx.deleteFrom('files').where('id', 'in', fileIds).execute();
  if (log.length > 0) {
    await trx
      .insertInto('session_purges')
      .values(
        log.map((entry) => ({
          institute_id: entry.instituteId,
          exam_id: entry.examId,
          student_session_id: entry.studentSessionId,
          kind: entry.kind,
          files: entry.files,
          bytes: entry.bytes,
          reason: entry.reason,
          retention_period: entry.retentionPeriod,
          rule: entry.rule,
          purged_at: entry.purgedAt,
        })),
      )
      .execute();
  }
  return true;
}

/** What the sweep purged of the session, kind by kind, in RETENTION_KINDS order. Returns them. */
export async function findKindPurges(db: Db, sessionId: number): Promise<KindPurge[]> {
  const rows = await db
    .selectFrom('session_kind_purges')
    .selectAll()
    .where('student_session_id', '=', sessionId)
    .execute();
  return RETENTION_KINDS.flatMap((kind) => {
    const row = rows.find((candidate) => candidate.kind === kind);
    if (row === undefined) return [];
    return [
      {
        studentSessionId: sessionId,
        kind,
        rule: row.rule === 'final_verdict' ? 'final_verdict' : 'period',
        days: row.days === null ? null : Number(row.days),
        purgedAt: Number(row.purged_at),
        idCheck: row.id_checked
          ? {
              checkedBy: row.id_checked_by,
              checkedByName: row.id_checked_by_name,
              checkedAt: Number(row.id_checked_at ?? row.purged_at),
            }
          : null,
      } satisfies KindPurge,
    ];
  });
}

/**
 * The institute's retention settings (a kind absent when it set nothing) and its
 * session_retention_period, or undefined when there is no such institute.
 */
export async function findRetentionSettings(
  db: Db,
  instituteId: number,
): Promise<{ settings: Map<RetentionKind, number | null>; sessionPeriod: number | null } | undefined> {
  const institute = await db
    .selectFrom('institutes')
    .select('session_retention_period')
    .where('id', '=', instituteId)
    .executeTakeFirst();
  if (institute === undefined) return undefined;
  const rows = await db
    .selectFrom('retention_policies')
    .select(['kind', 'days'])
    .where('institute_id', '=', instituteId)
    .execute();
  const settings = new Map<RetentionKind, number | null>();
  for (const row of rows) {
    const kind = RETENTION_KINDS.find((known) => known === row.kind);
    if (kind !== undefined) settings.set(kind, row.days === null ? null : Number(row.days));
  }
  const period = institute.session_retention_period;
  return { settings, sessionPeriod: period === null ? null : Number(period) };
}

/** Saves the institute's setting for each kind in `changes` (null: follow the session period). Returns nothing. */
export async function saveRetentionSettings(
  db: Db,
  instituteId: number,
  changes: ReadonlyMap<RetentionKind, number | null>,
  by: number,
  now: number,
): Promise<void> {
  for (const [kind, days] of changes) {
    await db
      .insertInto('retention_policies')
      .values({ institute_id: instituteId, kind, days, updated_by: by, updated_at: now })
      .onConflict((conflict) =>
        conflict.columns(['institute_id', 'kind']).doUpdateSet({ days, updated_by: by, updated_at: now }),
      )
      .execute();
  }
}

/** The session's legal hold, or undefined when there is no such session. */
export async function findLegalHold(db: Db, sessionId: number): Promise<LegalHold | undefined> {
  const row = await db
    .selectFrom('student_sessions')
    .select([
      'id',
      'legal_hold',
      'legal_hold_reason',
      'legal_hold_set_by',
      'legal_hold_set_at',
      'media_purged_at',
    ])
    .where('id', '=', sessionId)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    studentSessionId: row.id,
    held: Boolean(row.legal_hold),
    reason: row.legal_hold_reason,
    setBy: row.legal_hold_set_by,
    setAt: row.legal_hold_set_at === null ? null : Number(row.legal_hold_set_at),
    mediaPurgedAt: row.media_purged_at === null ? null : Number(row.media_purged_at),
  };
}

/** Sets or clears the session's legal hold, recording who and when. Returns nothing. */
export async function saveLegalHold(
  db: Db,
  sessionId: number,
  change: {
    readonly held: boolean;
    readonly reason: string | null;
    readonly setBy: number;
    readonly now: number;
  },
): Promise<void> {
  await db
    .updateTable('student_sessions')
    .set({
      legal_hold: change.held,
      legal_hold_reason: change.reason,
      legal_hold_set_by: change.setBy,
      legal_hold_set_at: change.now,
      updated_at: change.now,
    })
    .where('id', '=', sessionId)
    .execute();
}

/**
 * One page of purge-log entries: of one institute (`instituteId`), of one session
 * (`studentSessionId`), or every one. Returns the page.
 */
export async function listPurges(
  db: Db,
  scope: { readonly instituteId?: number; readonly studentSessionId?: number },
  list: ListQuery,
): Promise<Page<Purge>> {
  let scoped = db.selectFrom('session_purges');
  if (scope.instituteId !== undefined)
    scoped = scoped.where('session_purges.institute_id', '=', scope.instituteId);
  if (scope.studentSessionId !== undefined) {
    scoped = scoped.where('session_purges.student_session_id', '=', scope.studentSessionId);
  }
  const base = applyConditions(scoped, list, 'session_purges');
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    applyOrderAndPage(base.selectAll('session_purges'), list, 'session_purges').execute(),
  ]);
  return { items: rows.map(purgeFromRow), total: Number(countRow.count), page: list.page, limit: list.limit };
}
