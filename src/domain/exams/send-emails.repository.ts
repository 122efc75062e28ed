import type { Db } from '../../db/database.ts';
import type { SessionStatus } from '../student-sessions/status.ts';

/**
 * Moves every session of the exam that is in status `from`, not yet emailed and not archived to
 * `to`, with `is_email_sent` set. One conditional statement: a concurrent call cannot move (and so
 * email) the same session twice. Returns the ids moved, ascending.
 */
export async function markSessionsEmailed(
  db: Db,
  examId: number,
  move: { readonly from: SessionStatus; readonly to: SessionStatus; readonly now: number },
): Promise<number[]> {
  const rows = await db
    .updateTable('student_sessions')
    .set({ status: move.to, is_email_sent: true, updated_at: move.now })
    .where('exam_id', '=', examId)
    .where('status', '=', move.from)
    .where('is_email_sent', '=', false)
    .where('archived', '=', false)
    .returning('id')
    .execute();
  return rows.map((row) => row.id).sort((a, b) => a - b);
}
