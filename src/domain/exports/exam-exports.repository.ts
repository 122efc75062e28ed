import type { Selectable, Updateable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { ExamZipExportsTable } from '../../db/tables.ts';
import { recordingExtension } from '../recordings/recording.ts';
import { UPLOAD_KIND } from '../student-sessions/session-file.ts';
import { EXPORT_STATUSES, type ExamExport, type ExamStudent, type HandedInFile } from './exam-export.ts';

function exportFromRow(row: Selectable<ExamZipExportsTable>): ExamExport {
  const status = EXPORT_STATUSES.find((known) => known === row.status);
  if (status === undefined) throw new Error(`exam zip export ${row.id} has an unknown status`);
  return {
    id: row.id,
    examId: row.exam_id,
    status,
    jobId: row.job_id,
    fileId: row.file_id,
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Records a new export of the exam, queued under `jobId`. Returns it. */
export async function insertExport(
  db: Db,
  values: { readonly examId: number; readonly jobId: number; readonly now: number },
): Promise<ExamExport> {
  const row = await db
    .insertInto('exam_zip_exports')
    .values({
      exam_id: values.examId,
      status: 'queued',
      job_id: values.jobId,
      file_id: null,
      error: null,
      created_at: values.now,
      updated_at: values.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return exportFromRow(row);
}

/** Returns the exam's most recent export, or undefined when it has none. */
export async function findLatestExport(db: Db, examId: number): Promise<ExamExport | undefined> {
  const row = await db
    .selectFrom('exam_zip_exports')
    .selectAll()
    .where('exam_id', '=', examId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : exportFromRow(row);
}

/** Returns the export the job builds, or undefined (its exam, and with it the export, was deleted). */
export async function findExportByJob(db: Db, jobId: number): Promise<ExamExport | undefined> {
  const row = await db
    .selectFrom('exam_zip_exports')
    .selectAll()
    .where('job_id', '=', jobId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : exportFromRow(row);
}

/** Which attempt of the export's job is writing (the worker's claim, as the handler knows it). */
export interface HeldAttempt {
  readonly jobId: number;
  readonly attempt: number;
}

/**
 * Updates the export only while `held` is still the job's current attempt (the job `running` with
 * that attempt count): a worker that lost its lease to another must not overwrite the newer
 * attempt's outcome, the same rule the queue applies to the job row itself. Returns true when the
 * row changed.
 */
export async function updateHeldExport(
  db: Db,
  exportId: number,
  held: HeldAttempt,
  change: Updateable<ExamZipExportsTable> & { readonly updated_at: number },
): Promise<boolean> {
  const result = await db
    .updateTable('exam_zip_exports')
    .set(change)
    .where('id', '=', exportId)
    .where('job_id', '=', held.jobId)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('jobs')
          .select('jobs.id')
          .where('jobs.id', '=', held.jobId)
          .where('jobs.status', '=', 'running')
          .where('jobs.attempts', '=', held.attempt),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Lets go of the archives of the exam's exports older than `exportId` (a newer one replaces them):
 * their `file_id` becomes null. Run it in the transaction that records the newer archive. Returns
 * the ids of the released files, now free to remove.
 */
export async function releaseEarlierArchives(
  db: Db,
  examId: number,
  exportId: number,
  now: number,
): Promise<number[]> {
  const rows = await db
    .selectFrom('exam_zip_exports')
    .select('file_id')
    .where('exam_id', '=', examId)
    .where('id', '<', exportId)
    .where('file_id', 'is not', null)
    .execute();
  if (rows.length === 0) return [];
  await db
    .updateTable('exam_zip_exports')
    .set({ file_id: null, updated_at: now })
    .where('exam_id', '=', examId)
    .where('id', '<', exportId)
    .where('file_id', 'is not', null)
    .execute();
  return rows.map((row) => row.file_id).filter((id): id is number => id !== null);
}

/**
 * Every file the students of the exam handed in: each session's exam document and its uploads
 * (session_files of kind UPLOAD_KIND), archived sessions included; recordings and ID or face photos
 * are not. Ordered by session id, then the exam document, then uploads by sequence. Returns them.
 */
export async function listHandedInFiles(db: Db, examId: number): Promise<HandedInFile[]> {
  const documents = await db
    .selectFrom('student_sessions')
    .innerJoin('files', 'files.id', 'student_sessions.exam_document_file_id')
    .select([
      'student_sessions.id as session_id',
      'student_sessions.email',
      'files.id as file_id',
      'files.storage_key',
      'files.original_name',
      'files.content_type',
      'files.size',
      'files.sha256',
      'files.created_at',
    ])
    .where('student_sessions.exam_id', '=', examId)
    .execute();
  const uploads = await db
    .selectFrom('session_files')
    .innerJoin('student_sessions', 'student_sessions.id', 'session_files.student_session_id')
    .innerJoin('files', 'files.id', 'session_files.file_id')
    .select([
      'student_sessions.id as session_id',
      'student_sessions.email',
      'session_files.sequence',
      'files.id as file_id',
      'files.storage_key',
      'files.original_name',
      'files.content_type',
      'files.size',
      'files.sha256',
      'files.created_at',
    ])
    .where('student_sessions.exam_id', '=', examId)
    .where('session_files.kind', '=', UPLOAD_KIND)
    .execute();
  const listed = [
    ...documents.map((row) => ({ ...row, kind: 'exam_document' as const, order: -1 })),
    ...uploads.map((row) => ({ ...row, kind: 'upload' as const, order: row.sequence })),
  ];
  listed.sort((a, b) => a.session_id - b.session_id || a.order - b.order || a.file_id - b.file_id);
  return listed.map((row) => ({
    sessionId: row.session_id,
    email: row.email,
    kind: row.kind,
    fileId: row.file_id,
    storageKey: row.storage_key,
    originalName: row.original_name,
    contentType: row.content_type,
    size: row.size,
    sha256: row.sha256,
    createdAt: row.created_at,
  }));
}

/**
 * Every student session of the exam, archived ones included (they took place), ordered by id: the
 * rows of the archive's index, whether or not they handed anything in. Returns them.
 */
export async function listExamStudents(db: Db, examId: number): Promise<ExamStudent[]> {
  const rows = await db
    .selectFrom('student_sessions')
    .select(['id', 'name', 'email', 'status', 'archived', 'start_time', 'end_time', 'end_reason'])
    .where('exam_id', '=', examId)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    sessionId: row.id,
    name: row.name,
    email: row.email,
    status: row.status,
    archived: Boolean(row.archived),
    startTime: row.start_time,
    endTime: row.end_time,
    endReason: row.end_reason,
  }));
}

/** The extension a photo gets in the archive, by its (sniffed) type. */
function photoExtension(contentType: string): string {
  const known: Readonly<Record<string, string>> = {
    'image/png': '.png',
    'image/jpeg': '.jpg',
    'image/gif': '.gif',
    'image/webp': '.webp',
  };
  return known[contentType] ?? '';
}

/**
 * The ID card and face photo of every session of the exam that has them (include=photos), archived
 * sessions included, named `id-card.<ext>` and `face-photo.<ext>`. Ordered by session id, the ID
 * card first. Returns them.
 */
export async function listExamPhotos(db: Db, examId: number): Promise<HandedInFile[]> {
  const photos: (HandedInFile & { order: number })[] = [];
  for (const [order, kind] of (['id_card', 'face_photo'] as const).entries()) {
    const column =
      kind === 'id_card' ? 'student_sessions.id_card_file_id' : 'student_sessions.face_photo_file_id';
    const rows = await db
      .selectFrom('student_sessions')
      .innerJoin('files', 'files.id', column)
      .select([
        'student_sessions.id as session_id',
        'student_sessions.email',
        'files.id as file_id',
        'files.storage_key',
        'files.content_type',
        'files.size',
        'files.sha256',
        'files.created_at',
      ])
      .where('student_sessions.exam_id', '=', examId)
      .execute();
    for (const row of rows) {
      photos.push({
        order,
        sessionId: row.session_id,
        email: row.email,
        kind,
        fileId: row.file_id,
        storageKey: row.storage_key,
        originalName: `${kind === 'id_card' ? 'id-card' : 'face-photo'}${photoExtension(row.content_type)}`,
        contentType: row.content_type,
        size: Number(row.size),
        sha256: row.sha256,
        createdAt: Number(row.created_at),
      });
    }
  }
  photos.sort((a, b) => a.sessionId - b.sessionId || a.order - b.order);
  return photos.map(({ order: _order, ...photo }) => photo);
}

/**
 * The finalised recordings of every session of the exam (include=recordings): `recordings` rows
 * that are `completed` with a file, named `recording-<source>.webm` (`.mp4` for an MP4 recording). Ordered by session id, webcam
 * before screen. Returns them.
 */
export async function listExamRecordings(db: Db, examId: number): Promise<HandedInFile[]> {
  const rows = await db
    .selectFrom('recordings')
    .innerJoin('student_sessions', 'student_sessions.id', 'recordings.student_session_id')
    .innerJoin('files', 'files.id', 'recordings.file_id')
    .select([
      'student_sessions.id as session_id',
      'student_sessions.email',
      'recordings.source',
      'files.id as file_id',
      'files.storage_key',
      'files.content_type',
      'files.size',
      'files.sha256',
      'files.created_at',
    ])
    .where('student_sessions.exam_id', '=', examId)
    .where('recordings.status', '=', 'completed')
    .orderBy('student_sessions.id')
    .orderBy('recordings.source', 'desc')
    .execute();
  return rows.map((row) => ({
    sessionId: row.session_id,
    email: row.email,
    kind: 'recording' as const,
    fileId: row.file_id,
    storageKey: row.storage_key,
    originalName: `recording-${row.source}.${recordingExtension(row.content_type)}`,
    contentType: row.content_type,
    size: Number(row.size),
    sha256: row.sha256,
    createdAt: Number(row.created_at),
  }));
}
