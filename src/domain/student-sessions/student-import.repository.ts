import type { Db } from '../../db/database.ts';
import { type Accommodations, parseStoredAccommodations } from './accommodations.ts';
import { sessionKey } from './student-import.ts';

/** A session the exam already has, as an import updating it needs it. */
export interface StoredSession {
  readonly id: number;
  /** Its accommodations now: an update row's accommodation columns change only what they name. */
  readonly accommodations: Accommodations;
}

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
 * The id and accommodations of every session the exam already has (archived ones included), by its
 * email and attempt (sessionKey), in one query. Returns the map.
 */
export async function sessionsByKey(db: Db, examId: number): Promise<Map<string, StoredSession>> {
  const rows = await db
    .selectFrom('student_sessions')
    .select(['id', 'email', 'attempt', 'accommodations'])
    .where('exam_id', '=', examId)
    .execute();
  return new Map(
    rows.map((row) => [
      sessionKey(row.email, row.attempt),
      { id: row.id, accommodations: parseStoredAccommodations(row.accommodations) },
    ]),
  );
}
