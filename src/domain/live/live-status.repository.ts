import type { Db } from '../../db/database.ts';
import type { LiveStatus } from './live.ts';
import { parseId } from '../ids.ts';

/**
 * The signalling hub's reads and writes of `student_sessions` (src/live/hub.ts): the candidate's
 * live status, which only the hub writes, and who may watch which candidate. The presenters and the
 * monitor read `live_status` through their own repositories.
 */

/**
 * Stores a session's live status when it differs from the stored one, moving `updated_at` to `now`
 * so the monitor's look for changed sessions (updated_at after its cursor) sees it. Returns true
 * when the row changed (false when the status was already stored or the session is gone).
 */
export async function setLiveStatus(
  db: Db,
  sessionId: number,
  status: LiveStatus,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('student_sessions')
    .set({ live_status: status, updated_at: now })
    .where('id', '=', sessionId)
    .where('live_status', '<>', status)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Marks every session `offline` that is not, when a process starts: no socket survives a restart,
 * so a status left from before is stale. Returns how many sessions changed.
 */
export async function resetLiveStatuses(db: Db, now: number): Promise<number> {
  const result = await db
    .updateTable('student_sessions')
    .set({ live_status: 'offline', updated_at: now })
    .where('live_status', '<>', 'offline')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * True when `sessionId` is a session of the exam and, with `proctorId`, is assigned to that proctor.
 * (The proctor socket's mayWatch, read each time it is asked: assignments change during an exam.)
 */
export async function isWatchableSession(
  db: Db,
  examId: number,
  sessionId: number,
  proctorId: number | null,
): Promise<boolean> {
  // A browser's number beyond the id column's range names no session (and PostgreSQL would refuse it).
  if (parseId(sessionId) === undefined) return false;
  let query = db
    .selectFrom('student_sessions')
    .select('id')
    .where('id', '=', sessionId)
    .where('exam_id', '=', examId);
  if (proctorId !== null) query = query.where('proctor_id', '=', proctorId);
  return (await query.executeTakeFirst()) !== undefined;
}

/** True when at least one of the exam's sessions is assigned to the proctor. */
export async function hasAssignedSessions(db: Db, examId: number, proctorId: number): Promise<boolean> {
  const row = await db
    .selectFrom('student_sessions')
    .select('id')
    .where('exam_id', '=', examId)
    .where('proctor_id', '=', proctorId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
