import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { StudentSessionsTable } from '../../db/tables.ts';
import { LIVE_STATUSES, type LiveStatus } from '../live/live.ts';
import { hasNoAccommodations, parseStoredAccommodations } from '../student-sessions/accommodations.ts';
import { breakEndsAt } from '../student-sessions/deadline.ts';
import { CHECK_VALUES, type CheckValue, parseStatus } from '../student-sessions/status.ts';
import { CHECK_FIELDS, type CheckField } from '../student-sessions/student-session.ts';
import type { MonitorSession } from './monitor.ts';

/**
 * The monitor's reads: a few narrow columns of one exam's sessions, never whole records, so a look
 * every second stays cheap. Every query starts from `exam_id`, so the (exam_id, archived, ...)
 * indexes of student_sessions lead.
 */

const COLUMNS = [
  'id',
  'name',
  'email',
  'attempt',
  'status',
  'screenshare_check',
  'microphone_check',
  'speakers_check',
  'webcam_check',
  'mobile_check',
  'bandwidth_check',
  'proctor_id',
  'live_status',
  'clock_paused_at',
  'accommodations',
  'break_started_at',
  'breaks_taken',
  'archived',
  'updated_at',
] as const;

/** A session as the monitor reads it, with whether it is archived (the monitor leaves those out). */
export interface MonitorRow {
  readonly session: Omit<MonitorSession, 'incidentsCount'>;
  readonly archived: boolean;
}

type Row = Pick<Selectable<StudentSessionsTable>, (typeof COLUMNS)[number]>;

function checkValue(row: Row, column: (typeof CHECK_FIELDS)[CheckField]): CheckValue {
  const value = CHECK_VALUES.find((known) => known === row[column]);
  if (value === undefined) throw new Error(`student session ${row.id} has an unknown ${column}`);
  return value;
}

function liveStatusOf(row: Row): LiveStatus {
  const status = LIVE_STATUSES.find((known) => known === row.live_status);
  if (status === undefined) throw new Error(`student session ${row.id} has an unknown live_status`);
  return status;
}

function fromRow(row: Row): MonitorRow {
  const checks = {} as { [K in CheckField]: CheckValue };
  for (const [field, column] of Object.entries(CHECK_FIELDS) as [
    CheckField,
    (typeof CHECK_FIELDS)[CheckField],
  ][]) {
    checks[field] = checkValue(row, column);
  }
  const accommodations = parseStoredAccommodations(row.accommodations);
  const breakStartedAt = row.break_started_at === null ? null : Number(row.break_started_at);
  return {
    session: {
      id: row.id,
      name: row.name,
      email: row.email,
      attempt: row.attempt,
      status: parseStatus(row.status),
      checks,
      proctorId: row.proctor_id,
      liveStatus: liveStatusOf(row),
      clockPaused: row.clock_paused_at !== null,
      accommodations: hasNoAccommodations(accommodations) ? null : accommodations,
      onBreak: breakStartedAt !== null,
      breakEndsAt: breakEndsAt({ accommodations, breakStartedAt }),
      breaksTaken: Number(row.breaks_taken),
      updatedAt: row.updated_at,
    },
    archived: Boolean(row.archived),
  };
}

/** The exam's sessions that are not archived, by id. */
export async function liveSessionsOf(db: Db, examId: number): Promise<MonitorRow[]> {
  const rows = await db
    .selectFrom('student_sessions')
    .select(COLUMNS)
    .where('exam_id', '=', examId)
    .where('archived', '=', false)
    .orderBy('id')
    .execute();
  return rows.map(fromRow);
}

/** The exam's sessions, archived ones too, whose `updated_at` is after `since`, by id. */
export async function sessionsUpdatedSince(db: Db, examId: number, since: number): Promise<MonitorRow[]> {
  const rows = await db
    .selectFrom('student_sessions')
    .select(COLUMNS)
    .where('exam_id', '=', examId)
    .where('updated_at', '>', since)
    .orderBy('id')
    .execute();
  return rows.map(fromRow);
}

/** The sessions of the exam with these ids, archived ones too, by id. */
export async function sessionsByIds(db: Db, examId: number, ids: readonly number[]): Promise<MonitorRow[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('student_sessions')
    .select(COLUMNS)
    .where('exam_id', '=', examId)
    .where('id', 'in', ids)
    .orderBy('id')
    .execute();
  return rows.map(fromRow);
}

/** How many sessions of the exam are not archived (read from the index alone). */
export async function liveSessionCount(db: Db, examId: number): Promise<number> {
  const row = await db
    .selectFrom('student_sessions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('exam_id', '=', examId)
    .where('archived', '=', false)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The ids of the exam's sessions that are not archived. */
export async function liveSessionIds(db: Db, examId: number): Promise<Set<number>> {
  const rows = await db
    .selectFrom('student_sessions')
    .select('id')
    .where('exam_id', '=', examId)
    .where('archived', '=', false)
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** Incident counts of sessions, and the newest incident's `created_at` among them (0 when none). */
export interface IncidentTally {
  readonly counts: Map<number, number>;
  readonly newest: number;
}

/**
 * How many incidents each of the exam's sessions has (not archived; a session without any is absent).
 * Informational flags (docs/accommodations.md) are for the record only and never counted here.
 */
export async function incidentTallyOfExam(db: Db, examId: number): Promise<IncidentTally> {
  const rows = await db
    .selectFrom('incidents')
    .innerJoin('student_sessions', 'student_sessions.id', 'incidents.student_session_id')
    .select([
      'incidents.student_session_id as sessionId',
      (eb) => eb.fn.countAll<number>().as('count'),
      (eb) => eb.fn.max<number>('incidents.created_at').as('newest'),
    ])
    .where('student_sessions.exam_id', '=', examId)
    .where('student_sessions.archived', '=', false)
    .where('incidents.informational', '=', false)
    .groupBy('incidents.student_session_id')
    .execute();
  return tally(rows);
}

/** How many incidents each of these sessions has, informational ones left out (a session without any is absent). */
export async function incidentTallyOf(db: Db, sessionIds: readonly number[]): Promise<IncidentTally> {
  if (sessionIds.length === 0) return { counts: new Map(), newest: 0 };
  const rows = await db
    .selectFrom('incidents')
    .select([
      'student_session_id as sessionId',
      (eb) => eb.fn.countAll<number>().as('count'),
      (eb) => eb.fn.max<number>('created_at').as('newest'),
    ])
    .where('student_session_id', 'in', sessionIds)
    .where('informational', '=', false)
    .groupBy('student_session_id')
    .execute();
  return tally(rows);
}

function tally(rows: readonly { sessionId: number; count: number; newest: number }[]): IncidentTally {
  const counts = new Map<number, number>();
  let newest = 0;
  for (const row of rows) {
    counts.set(row.sessionId, Number(row.count));
    newest = Math.max(newest, Number(row.newest));
  }
  return { counts, newest };
}

/** The ids of the exam's sessions that got an incident (not an informational one) created after `since`. */
export async function sessionsWithIncidentsSince(db: Db, examId: number, since: number): Promise<number[]> {
  const rows = await db
    .selectFrom('incidents')
    .innerJoin('student_sessions', 'student_sessions.id', 'incidents.student_session_id')
    .select('incidents.student_session_id as sessionId')
    .distinct()
    .where('student_sessions.exam_id', '=', examId)
    .where('incidents.created_at', '>', since)
    .where('incidents.informational', '=', false)
    .execute();
  return rows.map((row) => row.sessionId);
}
