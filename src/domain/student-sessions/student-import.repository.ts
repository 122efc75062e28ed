import type { Db } from '../../db/database.ts';
import { sessionKey } from './student-import.ts';

/**
 * The attempt numbers every email already has in the exam (archived sessions included), in one
 * query: an import checks hundreds of rows against them. Returns them by stored email.
 */
export async function attemptsByEmail(db: Db, examId: number): Promise<Map<string, number[]>> {
  const rows = await db
    .selectFrom('student_sessions')
    .select(['email', 'attempt'])
    .where('exam_id', '=', examId)
    .execute();
  const attempts = new Map<string, number[]>();
  for (const row of rows) {
    const list = attempts.get(row.email) ?? [];
    list.push(row.attempt);
    attempts.set(row.email, list);
  }
  return attempts;
}

/**
 * The id of every session the exam already has (archived ones included), by its email and attempt
 * (sessionKey), in one query. Returns the map.
 */
export async function sessionIdsByKey(db: Db, examId: number): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('student_sessions')
    .select(['id', 'email', 'attempt'])
    .where('exam_id', '=', examId)
    .execute();
  return new Map(rows.map((row) => [sessionKey(row.email, row.attempt), row.id]));
}
