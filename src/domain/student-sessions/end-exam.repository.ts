import type { Db } from '../../db/database.ts';
import { pauseEndedColumns } from '../live/live-controls.repository.ts';
import type { SessionStatus } from './status.ts';

/**
 * Ends the session if it is still in status `from`: status `to`, `end_time` and
 * `recording_ended_at` set to `now`, `end_reason` recorded, a running pause of the candidate's clock
 * ended. Conditional on `from`, so of two
 * concurrent calls only one ends it. Returns true when this call ended it.
 */
export async function endStudentSession(
  db: Db,
  id: number,
  change: {
    readonly from: SessionStatus;
    readonly to: SessionStatus;
    readonly reason: string;
    readonly now: number;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('student_sessions')
    .set({
      status: change.to,
      end_time: change.now,
      recording_ended_at: change.now,
      end_reason: change.reason,
      ...pauseEndedColumns(change.now),
      updated_at: change.now,
    })
    .where('id', '=', id)
    .where('status', '=', change.from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
