import type { Db } from '../../db/database.ts';
import { type Actor, canManageExam, canReadExam } from '../access.ts';
import { Forbidden, NotFound } from '../errors.ts';
import type { Exam } from '../exams/exam.ts';
import { findExam } from '../exams/exams.repository.ts';
import { parseId } from '../ids.ts';
import type { StudentSession } from './student-session.ts';
import { findStudentSession } from './student-sessions.repository.ts';

/** A session with the exam it belongs to. */
export interface SessionInExam {
  readonly session: StudentSession;
  readonly exam: Exam;
}

/**
 * The session `id` names, with its exam, when the actor may see that exam. Returns both; throws
 * NotFound (Student Session) when the session is missing, its exam deleted, or out of scope.
 */
export async function findVisibleSession(db: Db, actor: Actor, id: string | number): Promise<SessionInExam> {
  const numeric = parseId(id);
  const session = numeric === undefined ? undefined : await findStudentSession(db, numeric);
  const exam = session === undefined ? undefined : await findExam(db, session.examId);
  if (session === undefined || exam === undefined || exam.status === 'deleted' || !canReadExam(actor, exam)) {
    throw new NotFound('Student Session', id);
  }
  return { session, exam };
}

/**
 * As findVisibleSession, for a change: throws Forbidden when the actor sees the session but may not
 * manage its exam.
 */
export async function findManageableSession(
  db: Db,
  actor: Actor,
  id: string | number,
): Promise<SessionInExam> {
  const found = await findVisibleSession(db, actor, id);
  if (!canManageExam(actor, found.exam)) throw new Forbidden();
  return found;
}
