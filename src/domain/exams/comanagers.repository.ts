import type { Db } from '../../db/database.ts';
import { updateExam } from './exams.repository.ts';

/**
 * The co-managers of exams (table `exam_comanagers`, one row per exam and user; the primary key
 * makes a pair unique). Reading them with an exam stays in exams.repository.ts, which loads
 * `comanagerIds` with every exam.
 */

/**
 * Adds `userId` as a co-manager of the exam unless it already is one (the primary key decides, so two
 * concurrent adds leave one row). When a row was added the exam's `updated_at` moves to `now`, since
 * its `comanager_ids` changed. Returns true when a row was added. Run it in a transaction.
 */
export async function insertComanager(db: Db, examId: number, userId: number, now: number): Promise<boolean> {
  const row = await db
    .insertInto('exam_comanagers')
    .values({ exam_id: examId, user_id: userId, created_at: now })
    .onConflict((conflict) => conflict.columns(['exam_id', 'user_id']).doNothing())
    .returning('exam_id')
    .executeTakeFirst();
  if (row === undefined) return false;
  await updateExam(db, examId, {}, now);
  return true;
}

/**
 * Removes `userId` from the exam's co-managers. When a row was removed the exam's `updated_at` moves
 * to `now`. Returns true when a row was removed, false when there was none. Run it in a transaction.
 */
export async function deleteComanager(db: Db, examId: number, userId: number, now: number): Promise<boolean> {
  const result = await db
    .deleteFrom('exam_comanagers')
    .where('exam_id', '=', examId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (result.numDeletedRows === 0n) return false;
  await updateExam(db, examId, {}, now);
  return true;
}
