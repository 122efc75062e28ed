import { type Selectable, type SqlBool, sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import type { SessionPurgesTable } from '../../db/tables.ts';
import type { ListQuery, Page } from '../listing.ts';
import { RECORDING_KINDS } from '../room/room.ts';
import {
  DAY_MS,
  type DueSession,
  type LegalHold,
  type MediaItem,
  type NewPurge,
  PURGE_KINDS,
  type Purge,
} from './retention.ts';

/** Session-file kinds that are recording chunks (webcam, screen, phone); every other kind is an upload. */
const CHUNK_KINDS: readonly string[] = Object.values(RECORDING_KINDS);

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
    purgedAt: Number(row.purged_at),
  };
}

/**
 * Up to `limit` sessions whose media are due to go at `now`: ended more than their institute's
 * session_retention_period days before it, not held, not purged yet, and no recording still being
 * assembled, and not among `excludeIds`. Returns them, the longest-ended first.
 */
export async function findDueSessions(
  db: Db,
  options: { readonly now: number; readonly limit: number; readonly excludeIds?: readonly number[] },
): Promise<DueSession[]> {
  let query = db
    .selectFrom('student_sessions')
    .innerJoin('exams', 'exams.id', 'student_sessions.exam_id')
    .innerJoin('institutes', 'institutes.id', 'exams.institute_id')
    .select([
      'student_sessions.id',
      'student_sessions.exam_id',
      'exams.institute_id',
      'institutes.session_retention_period',
    ])
    .where('student_sessions.media_purged_at', 'is', null)
    .where('student_sessions.end_time', 'is not', null)
    .where('student_sessions.legal_hold', '=', false)
    .where('student_sessions.transcoding_status', 'not in', ASSEMBLING)
    .where('institutes.session_retention_period', 'is not', null)
    // bigint: a period of a month in milliseconds is past PostgreSQL's integer.
    .where(
      sql<SqlBool>`student_sessions.end_time + cast(institutes.session_retention_period as bigint) * ${DAY_MS} < ${options.now}`,
    )
    .orderBy('student_sessions.end_time')
    .orderBy('student_sessions.id')
    .limit(options.limit);
  const excluded = options.excludeIds ?? [];
  if (excluded.length > 0) query = query.where('student_sessions.id', 'not in', excluded);
  const rows = await query.execute();
  return rows.flatMap((row) =>
    row.session_retention_period === null
      ? []
      : [
          {
            id: row.id,
            examId: row.exam_id,
            instituteId: row.institute_id,
            retentionPeriod: Number(row.session_retention_period),
          },
        ],
  );
}

/**
 * True when the session may be purged now: it exists, is not held, not purged yet, and has no
 * recording being assembled (read again just before its objects are deleted).
 */
export async function isStillDue(db: Db, sessionId: number): Promise<boolean> {
  const row = await db
    .selectFrom('student_sessions')
    .select(['legal_hold', 'media_purged_at', 'transcoding_status'])
    .where('id', '=', sessionId)
    .executeTakeFirst();
  if (row === undefined) return false;
  return !row.legal_hold && row.media_purged_at === null && !ASSEMBLING.includes(row.transcoding_status);
}

/**
 * Every stored object the session holds: finalised recordings, recording chunks, the two photos,
 * uploads and the exam document. A new kind of session media adds its query here (and its rows to
 * forgetSessionMedia). Returns them.
 */
export async function findSessionMedia(db: Db, sessionId: number): Promise<MediaItem[]> {
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
  const sessionFiles = await db
    .selectFrom('session_files')
    .innerJoin('files', 'files.id', 'session_files.file_id')
    .select(['session_files.kind', 'files.id', 'files.storage_key', 'files.size'])
    .where('session_files.student_session_id', '=', sessionId)
    .execute();
  const ownFiles = await db
    .selectFrom('student_sessions')
    .innerJoin('files', (join) =>
      join.on((eb) =>
        eb.or([
          eb('files.id', '=', eb.ref('student_sessions.id_card_file_id')),
          eb('files.id', '=', eb.ref('student_sessions.face_photo_file_id')),
          eb('files.id', '=', eb.ref('student_sessions.exam_document_file_id')),
        ]),
      ),
    )
    .select(['files.id', 'files.storage_key', 'files.size', 'student_sessions.exam_document_file_id'])
    .where('student_sessions.id', '=', sessionId)
    .execute();

  const items: MediaItem[] = [];
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
  for (const row of sessionFiles) {
    items.push({
      kind: CHUNK_KINDS.includes(row.kind) ? 'recording_chunk' : 'upload',
      fileId: row.id,
      storageKey: row.storage_key,
      size: Number(row.size),
    });
  }
  for (const row of ownFiles) {
    items.push({
      kind: row.exam_document_file_id === row.id ? 'upload' : 'photo',
      fileId: row.id,
      storageKey: row.storage_key,
      size: Number(row.size),
    });
  }
  return items;
}

/**
 * In the caller's transaction: marks the session purged at `now` unless it already is, and only
 * then forgets every media row it has (recordings, session files, the photo and exam-document
 * fields, the `files` rows in `fileIds`) and writes `log`. Returns false, changing nothing, when the
 * session was purged already (by another sweep) or is gone.
 */
export async function forgetSessionMedia(
  trx: Db,
  sessionId: number,
  fileIds: readonly number[],
  log: readonly NewPurge[],
  now: number,
): Promise<boolean> {
  const marked = await trx
    .updateTable('student_sessions')
    .set({
      media_purged_at: now,
      id_card_file_id: null,
      id_card_file_name: null,
      id_card_content_type: null,
      id_card_file_size: null,
      face_photo_file_id: null,
      face_photo_file_name: null,
      face_photo_content_type: null,
      face_photo_file_size: null,
      exam_document_file_id: null,
      exam_document_content_type: null,
      exam_document_file_size: null,
      exam_document_updated_at: null,
      updated_at: now,
    })
    .where('id', '=', sessionId)
    .where('media_purged_at', 'is', null)
    .executeTakeFirst();
  if (marked.numUpdatedRows === 0n) return false;
  await trx.deleteFrom('recordings').where('student_session_id', '=', sessionId).execute();
  await trx.deleteFrom('session_files').where('student_session_id', '=', sessionId).execute();
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
          purged_at: entry.purgedAt,
        })),
      )
      .execute();
  }
  return true;
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
