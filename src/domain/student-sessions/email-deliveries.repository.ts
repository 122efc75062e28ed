import type { Db } from '../../db/database.ts';

/**
 * The id and room token of each session of exam `examId` that `ids` names (archived ones too).
 * Returns them by id ascending; ids of other exams or of no session are left out.
 */
export async function findSessionTokens(
  db: Db,
  examId: number,
  ids: readonly number[],
): Promise<{ id: number; token: string }[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('student_sessions')
    .select(['id', 'token'])
    .where('exam_id', '=', examId)
    .where('id', 'in', [...ids])
    .orderBy('id')
    .execute();
}
