import type { Db } from '../../db/database.ts';
import { type PracticeRecord, parsePracticeRecord } from './practice.ts';

/** A practice run as stored (migration 0025, `practice_runs`). */
export interface PracticeRun {
  readonly id: number;
  readonly studentSessionId: number;
  readonly status: 'running' | 'passed' | 'failed';
  readonly failedCheck: string | null;
  readonly record: PracticeRecord;
  readonly startedAt: number;
  readonly finishedAt: number | null;
}

function runStatus(value: string): PracticeRun['status'] {
  return value === 'passed' || value === 'failed' ? value : 'running';
}

/**
 * Inserts a running run of the session and marks the session's practice as `running` (its failed
 * check cleared), through `db` (the caller's transaction). Returns the run.
 */
export async function insertPracticeRun(db: Db, sessionId: number, now: number): Promise<PracticeRun> {
  const row = await db
    .insertInto('practice_runs')
    .values({
      student_session_id: sessionId,
      status: 'running',
      failed_check: null,
      checks: JSON.stringify({ outcomes: {}, chunks: [], recorded: {} }),
      started_at: now,
      finished_at: null,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .updateTable('student_sessions')
    .set({ practice_status: 'running', practice_failed_check: null, practice_at: now })
    .where('id', '=', sessionId)
    .execute();
  return {
    id: Number(row.id),
    studentSessionId: sessionId,
    status: 'running',
    failedCheck: null,
    record: { outcomes: {}, chunks: [], recorded: {} },
    startedAt: now,
    finishedAt: null,
  };
}

type RunRow = {
  id: number;
  student_session_id: number;
  status: string;
  failed_check: string | null;
  checks: string;
  started_at: number;
  finished_at: number | null;
};

function runFromRow(row: RunRow): PracticeRun {
  return {
    id: Number(row.id),
    studentSessionId: Number(row.student_session_id),
    status: runStatus(row.status),
    failedCheck: row.failed_check,
    record: parsePracticeRecord(row.checks),
    startedAt: Number(row.started_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
  };
}

const RUN_COLUMNS = [
  'id',
  'student_session_id',
  'status',
  'failed_check',
  'checks',
  'started_at',
  'finished_at',
] as const;

/** The run `id` of session `sessionId`, or undefined. */
export async function findPracticeRun(
  db: Db,
  sessionId: number,
  id: number,
): Promise<PracticeRun | undefined> {
  const row = await db
    .selectFrom('practice_runs')
    .select(RUN_COLUMNS)
    .where('id', '=', id)
    .where('student_session_id', '=', sessionId)
    .executeTakeFirst();
  return row === undefined ? undefined : runFromRow(row);
}

/** The session's runs still `running`, oldest first. */
export async function runningRunsOfSession(db: Db, sessionId: number): Promise<PracticeRun[]> {
  const rows = await db
    .selectFrom('practice_runs')
    .select(RUN_COLUMNS)
    .where('student_session_id', '=', sessionId)
    .where('status', '=', 'running')
    .orderBy('id')
    .execute();
  return rows.map(runFromRow);
}

/** Up to `limit` runs of any session still `running` that began before `before`, oldest first. */
export async function staleRunningRuns(db: Db, before: number, limit: number): Promise<PracticeRun[]> {
  const rows = await db
    .selectFrom('practice_runs')
    .select(RUN_COLUMNS)
    .where('status', '=', 'running')
    .where('started_at', '<', before)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(runFromRow);
}

/**
 * Writes the run's record while it is still `running` and its record is the one read
 * (`expected`, the stored text compared: two requests of one run never overwrite each other's
 * chunks). Returns whether it was written.
 */
export async function updateRunningRecord(
  db: Db,
  id: number,
  expected: PracticeRecord,
  record: PracticeRecord,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('practice_runs')
    .set({ checks: JSON.stringify(record), updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .where('checks', '=', JSON.stringify(expected))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Ends a running run with its verdict and record (chunks already removed from the record), and
 * when it is the session's newest run, sets the session's practice status to match. Returns
 * whether the run was still running (false: another request ended it first).
 */
export async function endPracticeRun(
  db: Db,
  run: Pick<PracticeRun, 'id' | 'studentSessionId'>,
  verdict: { status: 'passed' | 'failed'; failedCheck: string | null; record: PracticeRecord },
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('practice_runs')
    .set({
      status: verdict.status,
      failed_check: verdict.failedCheck,
      checks: JSON.stringify(verdict.record),
      finished_at: now,
      updated_at: now,
    })
    .where('id', '=', run.id)
    .where('status', '=', 'running')
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  const newest = await db
    .selectFrom('practice_runs')
    .select('id')
    .where('student_session_id', '=', run.studentSessionId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (newest !== undefined && Number(newest.id) === run.id) {
    await db
      .updateTable('student_sessions')
      .set({ practice_status: verdict.status, practice_failed_check: verdict.failedCheck, practice_at: now })
      .where('id', '=', run.studentSessionId)
      .execute();
  }
  return true;
}

/** A session the practice reminder goes to. */
export interface ReminderRecipient {
  readonly id: number;
  readonly email: string;
  readonly token: string;
  readonly name: string;
}

/**
 * The exam's non-archived sessions whose practice has not passed and that have not started or
 * finished: who a practice reminder goes to, by id.
 */
export async function reminderRecipients(db: Db, examId: number): Promise<ReminderRecipient[]> {
  const rows = await db
    .selectFrom('student_sessions')
    .select(['id', 'email', 'token', 'name'])
    .where('exam_id', '=', examId)
    .where('archived', '=', false)
    .where('practice_status', '!=', 'passed')
    .where('status', 'not in', ['exam_started', 'exam_finished'])
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ id: Number(row.id), email: row.email, token: row.token, name: row.name }));
}

/** Sets `practice_reminded_at` of the sessions. */
export async function markReminded(db: Db, ids: readonly number[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('student_sessions')
    .set({ practice_reminded_at: now })
    .where('id', 'in', [...ids])
    .execute();
}

/** The marker of a visitor's throwaway session of a demo exam's public practice link. */
export const VISITOR_EXTERNAL_ID = 'invigil-practice-visitor';

/** How many visitor sessions of a demo exam may exist at once (the sweep removes them). */
export const VISITORS_PER_EXAM = 500;

/** How many visitor sessions the exam has now. */
export async function countVisitorSessions(db: Db, examId: number): Promise<number> {
  const row = await db
    .selectFrom('student_sessions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('exam_id', '=', examId)
    .where('external_id', '=', VISITOR_EXTERNAL_ID)
    .where('archived', '=', true)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Hides a visitor session from every list (archived). */
export async function archiveVisitorSession(db: Db, id: number): Promise<void> {
  await db.updateTable('student_sessions').set({ archived: true }).where('id', '=', id).execute();
}

/** Whether session `id` is a visitor's throwaway session. */
export async function isVisitorSession(db: Db, id: number): Promise<boolean> {
  const row = await db
    .selectFrom('student_sessions')
    .select('id')
    .where('id', '=', id)
    .where('external_id', '=', VISITOR_EXTERNAL_ID)
    .where('archived', '=', true)
    .executeTakeFirst();
  return row !== undefined;
}

/** Deletes a visitor session (its runs go with it). */
export async function deleteVisitorSession(db: Db, id: number): Promise<void> {
  await db
    .deleteFrom('student_sessions')
    .where('id', '=', id)
    .where('external_id', '=', VISITOR_EXTERNAL_ID)
    .where('archived', '=', true)
    .execute();
}

/** Up to `limit` visitor sessions created before `before`, ids oldest first. */
export async function staleVisitorSessions(db: Db, before: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('student_sessions')
    .select('id')
    .where('external_id', '=', VISITOR_EXTERNAL_ID)
    .where('archived', '=', true)
    .where('created_at', '<', before)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((row) => Number(row.id));
}
