import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { AppealsTable } from '../../db/tables.ts';
import { type Appeal, APPEAL_STATUSES, type AppealFile, type AppealStatus } from './appeal.ts';

/** All SQL of appeals and their files. */

function statusOf(value: string): AppealStatus {
  return APPEAL_STATUSES.find((status) => status === value) ?? 'open';
}

function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

function appealFromRow(row: Selectable<AppealsTable>, files: readonly AppealFile[]): Appeal {
  return {
    id: row.id,
    studentSessionId: row.student_session_id,
    reviewId: row.review_id,
    statement: row.statement,
    status: statusOf(row.status),
    submittedAt: Number(row.submitted_at),
    decidedBy: row.decided_by,
    decidedByName: row.decided_by_name,
    decidedAt: numberOrNull(row.decided_at),
    comment: row.comment,
    decisionReviewId: row.decision_review_id,
    files,
  };
}

async function filesOf(db: Db, appealId: number): Promise<AppealFile[]> {
  const rows = await db
    .selectFrom('appeal_files as a')
    .innerJoin('files as f', 'f.id', 'a.file_id')
    .select(['f.id as id', 'f.original_name as name', 'f.content_type as type', 'f.size as size'])
    .where('a.appeal_id', '=', appealId)
    .orderBy('a.position')
    .execute();
  return rows.map((row) => ({
    fileId: row.id,
    fileName: row.name,
    contentType: row.type,
    size: Number(row.size),
  }));
}

/** The appeal of a session, with its files, or undefined when the candidate made none. */
export async function findAppealOfSession(db: Db, studentSessionId: number): Promise<Appeal | undefined> {
  const row = await db
    .selectFrom('appeals')
    .selectAll()
    .where('student_session_id', '=', studentSessionId)
    .executeTakeFirst();
  return row === undefined ? undefined : appealFromRow(row, await filesOf(db, row.id));
}

/**
 * Writes a new open appeal with its files (ids of `files` rows, in order). Returns it; throws the
 * database's unique violation when the session has one already (a race the caller lost).
 */
export async function insertAppeal(
  db: Db,
  appeal: {
    readonly studentSessionId: number;
    readonly reviewId: number;
    readonly statement: string;
    readonly submittedAt: number;
    readonly fileIds: readonly number[];
  },
): Promise<Appeal> {
  const row = await db
    .insertInto('appeals')
    .values({
      student_session_id: appeal.studentSessionId,
      review_id: appeal.reviewId,
      statement: appeal.statement,
      status: 'open',
      submitted_at: appeal.submittedAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (appeal.fileIds.length > 0) {
    await db
      .insertInto('appeal_files')
      .values(appeal.fileIds.map((fileId, position) => ({ appeal_id: row.id, file_id: fileId, position })))
      .execute();
  }
  return appealFromRow(row, await filesOf(db, row.id));
}

/**
 * Records the decision of an open appeal. Returns the appeal as it now is, or undefined when it was
 * no longer open (decided by someone else first).
 */
export async function decideAppeal(
  db: Db,
  appealId: number,
  decision: {
    readonly status: AppealStatus;
    readonly decidedBy: number;
    readonly decidedByName: string | null;
    readonly decidedAt: number;
    readonly comment: string | null;
    readonly decisionReviewId: number | null;
  },
): Promise<Appeal | undefined> {
  const row = await db
    .updateTable('appeals')
    .set({
      status: decision.status,
      decided_by: decision.decidedBy,
      decided_by_name: decision.decidedByName,
      decided_at: decision.decidedAt,
      comment: decision.comment,
      decision_review_id: decision.decisionReviewId,
    })
    .where('id', '=', appealId)
    .where('status', '=', 'open')
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : appealFromRow(row, await filesOf(db, row.id));
}

/** The facts of a session an appeal needs, by room token: ids, candidate, exam. Undefined when none. */
export async function findSessionByToken(
  db: Db,
  token: string,
): Promise<{ readonly id: number; readonly examId: number } | undefined> {
  const row = await db
    .selectFrom('student_sessions')
    .select(['id', 'exam_id'])
    .where('token', '=', token)
    .executeTakeFirst();
  return row === undefined ? undefined : { id: row.id, examId: row.exam_id };
}
