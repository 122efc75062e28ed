import type { Db } from '../../db/database.ts';
import { recordingExtension } from '../recordings/recording.ts';
import { RECORDING_KINDS, RECORDING_SOURCES } from '../room/room.ts';
import { UPLOAD_KIND } from '../student-sessions/session-file.ts';
import {
  type CandidateFile,
  type CandidateIncident,
  type CandidateSessionFacts,
  STAFF_VIEW_ACTIONS,
  type StaffView,
  staffViewKindOf,
} from './candidate-data.ts';

/** All SQL of the candidate's data access. Rows never leave this file. */

/** A session as this module needs it: its facts plus what addressing it takes. */
export interface CandidateSession extends CandidateSessionFacts {
  readonly token: string;
  readonly instituteId: number;
  readonly examStatus: string;
}

const SESSION_COLUMNS = [
  'student_sessions.id',
  'student_sessions.exam_id',
  'student_sessions.name',
  'student_sessions.email',
  'student_sessions.status',
  'student_sessions.start_time',
  'student_sessions.end_time',
  'student_sessions.end_reason',
  'student_sessions.language',
  'student_sessions.media_purged_at',
  'student_sessions.token',
  'exams.name as exam_name',
  'exams.institute_id',
  'exams.status as exam_status',
] as const;

function sessionFrom(row: {
  id: number;
  exam_id: number;
  name: string;
  email: string;
  status: string;
  start_time: number | null;
  end_time: number | null;
  end_reason: string | null;
  language: string | null;
  media_purged_at: number | null;
  token: string;
  exam_name: string;
  institute_id: number;
  exam_status: string;
}): CandidateSession {
  const time = (value: number | null) => (value === null ? null : Number(value));
  return {
    id: row.id,
    examId: row.exam_id,
    examName: row.exam_name,
    name: row.name,
    email: row.email,
    status: row.status,
    startTime: time(row.start_time),
    endTime: time(row.end_time),
    endReason: row.end_reason,
    language: row.language,
    mediaPurgedAt: time(row.media_purged_at),
    token: row.token,
    instituteId: row.institute_id,
    examStatus: row.exam_status,
  };
}

/** The session of a room token (its exam not deleted), or undefined. */
export async function findSessionByToken(db: Db, token: string): Promise<CandidateSession | undefined> {
  const row = await db
    .selectFrom('student_sessions')
    .innerJoin('exams', 'exams.id', 'student_sessions.exam_id')
    .select(SESSION_COLUMNS)
    .where('student_sessions.token', '=', token)
    .where('exams.status', '!=', 'deleted')
    .executeTakeFirst();
  return row === undefined ? undefined : sessionFrom(row);
}

/** The session `id` (its exam not deleted), or undefined. */
export async function findCandidateSession(db: Db, id: number): Promise<CandidateSession | undefined> {
  const row = await db
    .selectFrom('student_sessions')
    .innerJoin('exams', 'exams.id', 'student_sessions.exam_id')
    .select(SESSION_COLUMNS)
    .where('student_sessions.id', '=', id)
    .where('exams.status', '!=', 'deleted')
    .executeTakeFirst();
  return row === undefined ? undefined : sessionFrom(row);
}

/** The ended sessions of an address (any case), newest first, at most `limit`. */
export async function listEndedSessionsOf(db: Db, email: string, limit: number): Promise<CandidateSession[]> {
  const rows = await db
    .selectFrom('student_sessions')
    .innerJoin('exams', 'exams.id', 'student_sessions.exam_id')
    .select(SESSION_COLUMNS)
    .where((eb) => eb(eb.fn('lower', ['student_sessions.email']), '=', email.toLowerCase()))
    .where('student_sessions.end_time', 'is not', null)
    .where('exams.status', '!=', 'deleted')
    .orderBy('student_sessions.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(sessionFrom);
}

/** How many codes the session was sent since `since`. */
export async function countCodesSince(db: Db, sessionId: number, since: number): Promise<number> {
  const row = await db
    .selectFrom('candidate_data_codes')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('student_session_id', '=', sessionId)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Records a code (its hash). */
export async function insertCode(
  db: Db,
  code: { sessionId: number; codeHash: string; now: number; expiresAt: number },
): Promise<void> {
  await db
    .insertInto('candidate_data_codes')
    .values({
      student_session_id: code.sessionId,
      code_hash: code.codeHash,
      attempts: 0,
      created_at: code.now,
      expires_at: code.expiresAt,
      used_at: null,
      download_hash: null,
      download_expires_at: null,
    })
    .execute();
}

/** A code that may still be entered. */
export interface LiveCode {
  readonly id: number;
  readonly codeHash: string;
  readonly attempts: number;
}

/** The session's codes that still work at `now` (unused, unexpired, under `maxAttempts`), newest first. */
export async function listLiveCodes(
  db: Db,
  sessionId: number,
  now: number,
  maxAttempts: number,
): Promise<LiveCode[]> {
  const rows = await db
    .selectFrom('candidate_data_codes')
    .select(['id', 'code_hash', 'attempts'])
    .where('student_session_id', '=', sessionId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where('attempts', '<', maxAttempts)
    .orderBy('id', 'desc')
    .execute();
  return rows.map((row) => ({ id: row.id, codeHash: row.code_hash, attempts: row.attempts }));
}

/** Counts a wrong try against each of the codes. */
export async function addWrongAttempt(db: Db, codeIds: readonly number[]): Promise<void> {
  if (codeIds.length === 0) return;
  await db
    .updateTable('candidate_data_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', 'in', codeIds)
    .execute();
}

/**
 * Uses the code once: records when, and the download key's hash and expiry. Returns false when
 * another request used it first.
 */
export async function useCode(
  db: Db,
  codeId: number,
  use: { now: number; downloadHash: string; downloadExpiresAt: number },
): Promise<boolean> {
  const result = await db
    .updateTable('candidate_data_codes')
    .set({ used_at: use.now, download_hash: use.downloadHash, download_expires_at: use.downloadExpiresAt })
    .where('id', '=', codeId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The session a download key opens at `now`, or undefined (unknown or expired). */
export async function findDownloadSession(
  db: Db,
  downloadHash: string,
  now: number,
): Promise<number | undefined> {
  const row = await db
    .selectFrom('candidate_data_codes')
    .select('student_session_id')
    .where('download_hash', '=', downloadHash)
    .where('download_expires_at', '>', now)
    .executeTakeFirst();
  return row?.student_session_id;
}

/** The files of a `files` row, with the column names this module uses. */
const FILE_COLUMNS = [
  'files.id as file_id',
  'files.storage_key',
  'files.original_name',
  'files.content_type',
  'files.size',
  'files.sha256',
  'files.created_at',
] as const;

interface FileRow {
  file_id: number;
  storage_key: string;
  original_name: string;
  content_type: string;
  size: number;
  sha256: string;
  created_at: number;
}

function fileFrom(row: FileRow, kind: string, folder: CandidateFile['folder'], name?: string): CandidateFile {
  return {
    fileId: row.file_id,
    storageKey: row.storage_key,
    kind,
    folder,
    originalName: name ?? row.original_name,
    contentType: row.content_type,
    size: Number(row.size),
    sha256: row.sha256,
    createdAt: Number(row.created_at),
  };
}

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
 * Every stored file of the session the candidate gets: the finalised recording of each source,
 * else that source's raw chunks in order; the ID card and face photo; the exam document, the
 * uploads in sequence and the files sent with an appeal. Returns them in that order.
 */
export async function listCandidateFiles(db: Db, sessionId: number): Promise<CandidateFile[]> {
  const listed: CandidateFile[] = [];
  const finalised = await db
    .selectFrom('recordings')
    .innerJoin('files', 'files.id', 'recordings.file_id')
    .select(['recordings.source', ...FILE_COLUMNS])
    .where('recordings.student_session_id', '=', sessionId)
    .where('recordings.status', '=', 'completed')
    .orderBy('recordings.id')
    .execute();
  const done = new Set(finalised.map((row) => row.source));
  for (const row of finalised) {
    listed.push(
      fileFrom(
        row,
        'recording',
        'recordings',
        `recording-${row.source}.${recordingExtension(row.content_type)}`,
      ),
    );
  }
  for (const source of RECORDING_SOURCES) {
    if (done.has(source)) continue;
    const chunks = await db
      .selectFrom('session_files')
      .innerJoin('files', 'files.id', 'session_files.file_id')
      .select(['session_files.sequence', ...FILE_COLUMNS])
      .where('session_files.student_session_id', '=', sessionId)
      .where('session_files.kind', '=', RECORDING_KINDS[source])
      .orderBy('session_files.sequence')
      .execute();
    for (const row of chunks) {
      const extension = row.content_type.includes('mp4') ? 'mp4' : 'webm';
      const name = `${source}-chunk-${String(row.sequence).padStart(5, '0')}.${extension}`;
      listed.push(fileFrom(row, 'recording_chunk', 'recordings', name));
    }
  }
  for (const kind of ['id_card', 'face_photo'] as const) {
    const column =
      kind === 'id_card' ? 'student_sessions.id_card_file_id' : 'student_sessions.face_photo_file_id';
    const row = await db
      .selectFrom('student_sessions')
      .innerJoin('files', 'files.id', column)
      .select(FILE_COLUMNS)
      .where('student_sessions.id', '=', sessionId)
      .executeTakeFirst();
    if (row === undefined) continue;
    const base = kind === 'id_card' ? 'id-card' : 'face-photo';
    listed.push(fileFrom(row, kind, 'photos', `${base}${photoExtension(row.content_type)}`));
  }
  const document = await db
    .selectFrom('student_sessions')
    .innerJoin('files', 'files.id', 'student_sessions.exam_document_file_id')
    .select(FILE_COLUMNS)
    .where('student_sessions.id', '=', sessionId)
    .executeTakeFirst();
  if (document !== undefined) listed.push(fileFrom(document, 'exam_document', 'uploads'));
  const uploads = await db
    .selectFrom('session_files')
    .innerJoin('files', 'files.id', 'session_files.file_id')
    .select(FILE_COLUMNS)
    .where('session_files.student_session_id', '=', sessionId)
    .where('session_files.kind', '=', UPLOAD_KIND)
    .orderBy('session_files.sequence')
    .execute();
  for (const row of uploads) listed.push(fileFrom(row, 'upload', 'uploads'));
  const appealed = await db
    .selectFrom('appeal_files')
    .innerJoin('appeals', 'appeals.id', 'appeal_files.appeal_id')
    .innerJoin('files', 'files.id', 'appeal_files.file_id')
    .select(FILE_COLUMNS)
    .where('appeals.student_session_id', '=', sessionId)
    .orderBy('appeal_files.position')
    .execute();
  for (const row of appealed) listed.push(fileFrom(row, 'appeal_file', 'uploads'));
  return listed;
}

/** The session's incidents, flags and room events, in time order. */
export async function listCandidateIncidents(db: Db, sessionId: number): Promise<CandidateIncident[]> {
  const rows = await db
    .selectFrom('incidents')
    .select([
      'comment',
      'kind',
      'type',
      'source',
      'offset_time',
      'end_offset_time',
      'confidence',
      'dismissed_at',
      'informational',
      'created_at',
    ])
    .where('student_session_id', '=', sessionId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    comment: row.comment,
    kind: row.kind,
    type: row.type,
    source: row.source,
    offsetSeconds: row.offset_time === null ? null : Number(row.offset_time),
    endOffsetSeconds: row.end_offset_time === null ? null : Number(row.end_offset_time),
    confidence: row.confidence === null ? null : Number(row.confidence),
    dismissed: row.dismissed_at !== null,
    informational: Boolean(row.informational),
    createdAt: Number(row.created_at),
  }));
}

/**
 * The staff views of a session, oldest first: its own events (`student_sessions`, the session's id)
 * and the downloads of its exam's zip (`exams`, the exam's id), each with the user's name and role
 * as they are now. Returns them.
 */
export async function listStaffViews(db: Db, sessionId: number, examId: number): Promise<StaffView[]> {
  const sessionActions = Object.values(STAFF_VIEW_ACTIONS).filter(
    (action) => action !== STAFF_VIEW_ACTIONS.exam_zip,
  );
  const rows = await db
    .selectFrom('audit_events')
    .leftJoin('users', 'users.id', 'audit_events.user_id')
    .select([
      'audit_events.user_id',
      'audit_events.action',
      'audit_events.created_at',
      'users.name',
      'users.role',
    ])
    .where((eb) =>
      eb.or([
        eb.and([
          eb('audit_events.target_type', '=', 'student_sessions'),
          eb('audit_events.target_id', '=', sessionId),
          eb('audit_events.action', 'in', sessionActions),
        ]),
        eb.and([
          eb('audit_events.target_type', '=', 'exams'),
          eb('audit_events.target_id', '=', examId),
          eb('audit_events.action', '=', STAFF_VIEW_ACTIONS.exam_zip),
        ]),
      ]),
    )
    .orderBy('audit_events.created_at')
    .orderBy('audit_events.id')
    .execute();
  const views: StaffView[] = [];
  for (const row of rows) {
    const kind = staffViewKindOf(row.action);
    if (kind === undefined) continue;
    views.push({
      userId: row.user_id,
      name: row.name ?? null,
      role: row.role ?? null,
      kind,
      at: Number(row.created_at),
    });
  }
  return views;
}

/** True when the user has an event of `action` on the target since `since` (the flood rule). */
export async function hasRecentEvent(
  db: Db,
  event: { userId: number; action: string; targetType: string; targetId: number; since: number },
): Promise<boolean> {
  const row = await db
    .selectFrom('audit_events')
    .select('id')
    .where('user_id', '=', event.userId)
    .where('action', '=', event.action)
    .where('target_type', '=', event.targetType)
    .where('target_id', '=', event.targetId)
    .where('created_at', '>=', event.since)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Records a candidate's request or download (no user: the candidate is not staff). */
export async function insertCandidateEvent(
  db: Db,
  event: {
    instituteId: number;
    action: string;
    sessionId: number;
    status: number;
    ip: string | null;
    userAgent: string | null;
    now: number;
  },
): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      institute_id: event.instituteId,
      user_id: null,
      action: event.action,
      email: null,
      target_type: 'student_sessions',
      target_id: event.sessionId,
      status: event.status,
      ip: event.ip,
      user_agent: event.userAgent,
      created_at: event.now,
    })
    .execute();
}
