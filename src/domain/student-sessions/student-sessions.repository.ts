import { parseMobileStatus } from '../mobile/mobile.ts';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import { prepared } from '../../db/prepared.ts';
import { scopedExams } from '../exams/exams.repository.ts';
import type { StudentSessionsTable } from '../../db/tables.ts';
import type { ExamListScope } from '../access.ts';
import type { ListQuery, Page } from '../listing.ts';
import { LIVE_STATUSES, type LiveStatus } from '../live/live.ts';
import { parseStoredAccommodations, storedAccommodations } from './accommodations.ts';
import { incidentsOf } from './incidents.repository.ts';
import { CHECK_VALUES, type CheckValue, parseStatus, TRANSCODING_STATUSES } from './status.ts';
import {
  CHECK_FIELDS,
  type CheckField,
  type GeneratedFields,
  type Incident,
  type NewStudentSession,
  PRACTICE_STATUSES,
  type StudentSession,
  type StudentSessionChanges,
} from './student-session.ts';

type SessionRow = Selectable<StudentSessionsTable>;

/** One session's row by id (every room request reads it), compiled once. */
const sessionById = prepared([1] as [number], (db, id) =>
  db.selectFrom('student_sessions').selectAll().where('id', '=', id),
);

/** One session's row by its room token, compiled once. */
const sessionByToken = prepared(['token'] as [string], (db, token) =>
  db.selectFrom('student_sessions').selectAll().where('token', '=', token),
);

/** Which sessions a listing may return: one exam's, or those of every exam in an exam scope. */
export type SessionListScope =
  | { readonly kind: 'exam'; readonly examId: number }
  | { readonly kind: 'exams'; readonly exams: ExamListScope };

function checkValue(row: SessionRow, column: keyof SessionRow): CheckValue {
  const value = CHECK_VALUES.find((known) => known === row[column]);
  if (value === undefined) throw new Error(`student session ${row.id} has an unknown ${column}`);
  return value;
}

/** The stored JSON array of RTC session ids; anything else reads as an empty list. */
function jsonArray(text: string): unknown[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
}

/** Reads a stored live status; throws for a value outside the set (a corrupted row, not a client error). */
function parseLiveStatus(value: string): LiveStatus {
  const status = LIVE_STATUSES.find((known) => known === value);
  if (status === undefined) throw new Error(`unknown live status ${value}`);
  return status;
}

function sessionFromRow(row: SessionRow, incidents: readonly Incident[]): StudentSession {
  const transcodingStatus = TRANSCODING_STATUSES.find((known) => known === row.transcoding_status);
  if (transcodingStatus === undefined)
    throw new Error(`student session ${row.id} has an unknown transcoding_status`);
  const checks = {} as { [K in CheckField]: CheckValue };
  for (const [key, column] of Object.entries(CHECK_FIELDS) as [CheckField, keyof SessionRow][]) {
    checks[key] = checkValue(row, column);
  }
  return {
    id: row.id,
    examId: row.exam_id,
    name: row.name,
    email: row.email,
    attempt: row.attempt,
    status: parseStatus(row.status),
    token: row.token,
    pinCode: row.pin_code,
    sessionId: row.session_id,
    studentId: row.student_id,
    timeSlot: row.time_slot,
    operatingSystem: row.operating_system,
    browser: row.browser,
    browserVersion: row.browser_version,
    ...checks,
    bandwidthSpeed: row.bandwidth_speed,
    dummyExamSurvey: row.dummy_exam_survey,
    skipRequirements: Boolean(row.skip_requirements),
    sendConfirmation: Boolean(row.send_confirmation),
    useDuration: Boolean(row.use_duration),
    startTime: row.start_time,
    endTime: row.end_time,
    openTime: row.open_time,
    reservationTime: row.reservation_time,
    expiresAt: row.expires_at,
    recordingStartedAt: row.recording_started_at,
    recordingEndedAt: row.recording_ended_at,
    enteredRoom: Boolean(row.entered_room),
    examDocumentFileId: row.exam_document_file_id,
    examDocumentContentType: row.exam_document_content_type,
    examDocumentFileSize: row.exam_document_file_size,
    examDocumentUpdatedAt: row.exam_document_updated_at,
    reviewed: row.reviewed,
    idCardFileId: row.id_card_file_id,
    idCardFileName: row.id_card_file_name,
    idCardContentType: row.id_card_content_type,
    idCardFileSize: row.id_card_file_size,
    facePhotoFileId: row.face_photo_file_id,
    facePhotoFileName: row.face_photo_file_name,
    facePhotoContentType: row.face_photo_content_type,
    facePhotoFileSize: row.face_photo_file_size,
    individualInfo: row.individual_info,
    isIndividualInfoHtml: Boolean(row.is_individual_info_html),
    rtcSessionId: row.rtc_session_id,
    rtcSessionIds: jsonArray(row.rtc_session_ids),
    inSetup: Boolean(row.in_setup),
    inCheckRequirements: Boolean(row.in_check_requirements),
    archived: Boolean(row.archived),
    currentExamMode: row.current_exam_mode,
    transcodingStatus,
    priority: row.priority,
    isEmailSent: Boolean(row.is_email_sent),
    proctorId: row.proctor_id,
    externalId: row.external_id,
    endReason: row.end_reason,
    ltiResourceId: row.lti_resource_id,
    lmsUserId: row.lms_user_id,
    resourceLinkId: row.resource_link_id,
    contextId: row.context_id,
    liveStatus: parseLiveStatus(row.live_status),
    clockPausedAt: row.clock_paused_at,
    clockPausedMs: Number(row.clock_paused_ms),
    mobileToken: row.mobile_token,
    mobileStatus: parseMobileStatus(row.mobile_status),
    mobileSeenAt: row.mobile_seen_at === null ? null : Number(row.mobile_seen_at),
    mobileDevice: row.mobile_device,
    termsAcceptedAt: row.terms_accepted_at === null ? null : Number(row.terms_accepted_at),
    termsSha256: row.terms_sha256,
    language: row.language,
    chosenLanguage: row.chosen_language,
    accommodations: parseStoredAccommodations(row.accommodations),
    breakStartedAt: row.break_started_at === null ? null : Number(row.break_started_at),
    breakMs: Number(row.break_ms),
    breaksTaken: Number(row.breaks_taken),
    practiceStatus: PRACTICE_STATUSES.find((known) => known === row.practice_status) ?? 'not_tried',
    practiceFailedCheck: row.practice_failed_check,
    practiceAt: row.practice_at === null ? null : Number(row.practice_at),
    practiceRemindedAt: row.practice_reminded_at === null ? null : Number(row.practice_reminded_at),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    incidents,
  };
}

function columnsFrom(changes: StudentSessionChanges): Updateable<StudentSessionsTable> {
  const values: Updateable<StudentSessionsTable> = {};
  if (changes.name !== undefined) values.name = changes.name;
  if (changes.email !== undefined) values.email = changes.email;
  if (changes.individualInfo !== undefined) values.individual_info = changes.individualInfo;
  if (changes.isIndividualInfoHtml !== undefined)
    values.is_individual_info_html = changes.isIndividualInfoHtml;
  if (changes.skipRequirements !== undefined) values.skip_requirements = changes.skipRequirements;
  if (changes.openTime !== undefined) values.open_time = changes.openTime;
  if (changes.priority !== undefined) values.priority = changes.priority;
  if (changes.externalId !== undefined) values.external_id = changes.externalId;
  if (changes.useDuration !== undefined) values.use_duration = changes.useDuration;
  if (changes.language !== undefined) values.language = changes.language;
  if (changes.lmsUserId !== undefined) values.lms_user_id = changes.lmsUserId;
  if (changes.resourceLinkId !== undefined) values.resource_link_id = changes.resourceLinkId;
  if (changes.contextId !== undefined) values.context_id = changes.contextId;
  if (changes.ltiResourceId !== undefined) values.lti_resource_id = changes.ltiResourceId;
  if (changes.accommodations !== undefined)
    values.accommodations = storedAccommodations(changes.accommodations);
  return values;
}

async function withIncidents(db: Db, rows: readonly SessionRow[]): Promise<StudentSession[]> {
  const incidents = await incidentsOf(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => sessionFromRow(row, incidents.get(row.id) ?? []));
}

/**
 * Which unique index a failed write ran into: the room token's or (exam, email, attempt). Returns
 * undefined when the error is not a unique violation on a student session.
 */
export function uniqueViolationOn(error: unknown): 'token' | 'attempt' | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  // PostgreSQL names the index; SQLite names the columns.
  if (code === '23505') {
    if (constraint === 'student_sessions_token_unique') return 'token';
    if (constraint === 'student_sessions_attempt_unique') return 'attempt';
    return undefined;
  }
  if (typeof message !== 'string' || !message.includes('UNIQUE constraint failed')) return undefined;
  if (message.includes('student_sessions.token')) return 'token';
  if (message.includes('student_sessions.attempt')) return 'attempt';
  return undefined;
}

/** The row of a new session of an exam: the generated fields, the client's values and every default. */
function newSessionRow(
  examId: number,
  session: NewStudentSession & GeneratedFields,
  now: number,
): Insertable<StudentSessionsTable> {
  return {
    exam_id: examId,
    name: session.name,
    email: session.email,
    attempt: session.attempt,
    status: 'registered',
    token: session.token,
    pin_code: session.pinCode,
    time_slot: 0,
    screenshare_check: 'not_started',
    microphone_check: 'not_started',
    speakers_check: 'not_started',
    webcam_check: 'not_started',
    mobile_check: 'not_started',
    bandwidth_check: 'not_started',
    skip_requirements: session.skipRequirements,
    send_confirmation: false,
    use_duration: session.useDuration,
    open_time: session.openTime,
    entered_room: false,
    reviewed: 'not_reviewed',
    individual_info: session.individualInfo,
    is_individual_info_html: session.isIndividualInfoHtml,
    rtc_session_ids: '[]',
    in_setup: false,
    in_check_requirements: false,
    archived: false,
    transcoding_status: 'not_sent_to_queue',
    priority: session.priority,
    is_email_sent: false,
    external_id: session.externalId,
    language: session.language,
    lms_user_id: session.lmsUserId,
    resource_link_id: session.resourceLinkId,
    context_id: session.contextId,
    accommodations: storedAccommodations(session.accommodations),
    lti_resource_id: session.ltiResourceId,
    created_at: now,
    updated_at: now,
  };
}

/** Inserts a session into an exam. Returns it; a unique violation propagates (see uniqueViolationOn). */
export async function insertStudentSession(
  db: Db,
  examId: number,
  session: NewStudentSession & GeneratedFields,
  now: number,
): Promise<StudentSession> {
  const row = await db
    .insertInto('student_sessions')
    .values(newSessionRow(examId, session, now))
    .returningAll()
    .executeTakeFirstOrThrow();
  return sessionFromRow(row, []);
}

/**
 * Inserts several sessions into an exam in one statement (a bulk import; the caller keeps each
 * statement within the databases' bound-parameter limits and owns the transaction). Returns them in
 * the order given; a unique violation propagates (see uniqueViolationOn) and inserts none.
 */
export async function insertStudentSessions(
  db: Db,
  examId: number,
  sessions: readonly (NewStudentSession & GeneratedFields)[],
  now: number,
): Promise<StudentSession[]> {
  if (sessions.length === 0) return [];
  const rows = await db
    .insertInto('student_sessions')
    .values(sessions.map((session) => newSessionRow(examId, session, now)))
    .returningAll()
    .execute();
  // RETURNING promises no order on SQLite: each row is matched to its session by its unique token.
  const byToken = new Map(rows.map((row) => [row.token, row]));
  return sessions.map((session) => {
    const row = byToken.get(session.token);
    if (row === undefined) throw new Error(`inserted session with token ${session.token} not returned`);
    return sessionFromRow(row, []);
  });
}

/**
 * A session without its incidents, for a reader that never shows them (the candidate room, on every
 * request). Returns it, or undefined.
 */
export async function findStudentSessionWithoutIncidents(
  db: Db,
  id: number,
): Promise<Omit<StudentSession, 'incidents'> | undefined> {
  const [row] = await sessionById(db, [id]);
  if (row === undefined) return undefined;
  const { incidents: _none, ...session } = sessionFromRow(row, []);
  return session;
}

/**
 * As findStudentSessionWithoutIncidents, by the session's room token (the room's first request of a
 * token in a process, one statement). Returns it, or undefined.
 */
export async function findStudentSessionByToken(
  db: Db,
  token: string,
): Promise<Omit<StudentSession, 'incidents'> | undefined> {
  // No token holds a NUL, and PostgreSQL text cannot hold one: asked as it is, the query fails.
  if (token.includes('\u0000')) return undefined;
  const [row] = await sessionByToken(db, [token]);
  if (row === undefined) return undefined;
  const { incidents: _none, ...session } = sessionFromRow(row, []);
  return session;
}

/** Returns the session with its incidents, or undefined (archived sessions included). */
export async function findStudentSession(db: Db, id: number): Promise<StudentSession | undefined> {
  const [row] = await sessionById(db, [id]);
  if (row === undefined) return undefined;
  const [session] = await withIncidents(db, [row]);
  return session;
}

/**
 * The session of an exam that an LMS knows by its user id and resource link (and context, when
 * given): one not archived before an archived one, then the highest attempt, then the newest.
 * Returns it with its incidents, or undefined.
 */
export async function findStudentSessionByLms(
  db: Db,
  examId: number,
  lms: {
    readonly lmsUserId: string;
    readonly resourceLinkId: string;
    readonly contextId?: string | undefined;
  },
): Promise<StudentSession | undefined> {
  let query = db
    .selectFrom('student_sessions')
    .selectAll()
    .where('resource_link_id', '=', lms.resourceLinkId)
    .where('lms_user_id', '=', lms.lmsUserId)
    .where('exam_id', '=', examId);
  if (lms.contextId !== undefined) query = query.where('context_id', '=', lms.contextId);
  const row = await query
    .orderBy('archived', 'asc')
    .orderBy('attempt', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const [session] = await withIncidents(db, [row]);
  return session;
}

/** The attempt numbers `email` already has in the exam, archived sessions included. */
export async function attemptsOf(db: Db, examId: number, email: string): Promise<number[]> {
  const rows = await db
    .selectFrom('student_sessions')
    .select('attempt')
    .where('exam_id', '=', examId)
    .where('email', '=', email)
    .execute();
  return rows.map((row) => row.attempt);
}

/** True when another session of the exam than `exceptId` has this email and attempt. */
export async function isAttemptTaken(
  db: Db,
  examId: number,
  email: string,
  attempt: number,
  exceptId: number,
): Promise<boolean> {
  const row = await db
    .selectFrom('student_sessions')
    .select('id')
    .where('exam_id', '=', examId)
    .where('email', '=', email)
    .where('attempt', '=', attempt)
    .where('id', '<>', exceptId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Writes the changes and returns the session as saved, or undefined if it vanished meanwhile. */
export async function updateStudentSession(
  db: Db,
  id: number,
  changes: StudentSessionChanges,
  now: number,
): Promise<StudentSession | undefined> {
  await db
    .updateTable('student_sessions')
    .set({ ...columnsFrom(changes), updated_at: now })
    .where('id', '=', id)
    .execute();
  return findStudentSession(db, id);
}

/** Marks the session archived (kept, hidden from lists unless they filter on `archived`). */
export async function archiveStudentSession(db: Db, id: number, now: number): Promise<void> {
  await db
    .updateTable('student_sessions')
    .set({ archived: true, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/**
 * Deletes the session with its incidents, session_files and appeal rows (all cascade). Returns the
 * ids of the files it referenced (exam document, id card, face photo, session files, appeal files),
 * now free to remove.
 * Run it in a transaction so the ids read are the ids released.
 */
export async function deleteStudentSession(db: Db, id: number): Promise<number[]> {
  const row = await db
    .selectFrom('student_sessions')
    .select(['exam_document_file_id', 'id_card_file_id', 'face_photo_file_id'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (row === undefined) return [];
  const sessionFiles = await db
    .selectFrom('session_files')
    .select('file_id')
    .where('student_session_id', '=', id)
    .execute();
  // The files of the candidate's appeal (docs/appeals.md) go with it (appeal rows cascade).
  const appealFiles = await db
    .selectFrom('appeal_files')
    .innerJoin('appeals', 'appeals.id', 'appeal_files.appeal_id')
    .select('appeal_files.file_id')
    .where('appeals.student_session_id', '=', id)
    .execute();
  await db.deleteFrom('student_sessions').where('id', '=', id).execute();
  const ids = [
    row.exam_document_file_id,
    row.id_card_file_id,
    row.face_photo_file_id,
    ...sessionFiles.map((file) => file.file_id),
    ...appealFiles.map((file) => file.file_id),
  ];
  return [...new Set(ids.filter((fileId): fileId is number => fileId !== null))];
}

/** The ids of the exams, not deleted, that an exam scope covers (a subquery). */
function visibleExamIds(db: Db, scope: ExamListScope) {
  return scopedExams(db, scope).select('exams.id').where('exams.status', '<>', 'deleted');
}

/**
 * The sessions in `scope` before filtering: the exam first, then `archived` (left out unless the
 * query filters on it), so the (exam_id, archived, ...) indexes lead every listing.
 */
function scopedSessions(db: Db, scope: SessionListScope, list: ListQuery) {
  let base = db.selectFrom('student_sessions');
  base =
    scope.kind === 'exam'
      ? base.where('student_sessions.exam_id', '=', scope.examId)
      : base.where('student_sessions.exam_id', 'in', visibleExamIds(db, scope.exams));
  if (!list.filtered.has('archived')) base = base.where('student_sessions.archived', '=', false);
  return applyConditions(base, list, 'student_sessions');
}

/**
 * One page of sessions within `scope`, filtered and sorted by `list`, each with its incidents (one
 * query for the whole page). Returns the page with the total count of matching sessions.
 */
export async function listStudentSessions(
  db: Db,
  scope: SessionListScope,
  list: ListQuery,
): Promise<Page<StudentSession>> {
  const base = scopedSessions(db, scope, list);
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    applyOrderAndPage(base.selectAll('student_sessions'), list, 'student_sessions').execute(),
  ]);
  return {
    items: await withIncidents(db, rows),
    total: Number(countRow.count),
    page: list.page,
    limit: list.limit,
  };
}

/** Every session of an exam that is not archived, by id (V2 lists have no pages). */
export async function listAllStudentSessionsOfExam(db: Db, examId: number): Promise<StudentSession[]> {
  const rows = await db
    .selectFrom('student_sessions')
    .selectAll()
    .where('exam_id', '=', examId)
    .where('archived', '=', false)
    .orderBy('id')
    .execute();
  return withIncidents(db, rows);
}
