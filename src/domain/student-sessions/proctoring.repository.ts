import type { Db } from '../../db/database.ts';
import type { SessionStatus } from './status.ts';

/** The status after which a session no longer needs a proctor. */
const ENDED: SessionStatus = 'exam_finished';

/**
 * Sets the proctor assigned to a session (null: none). Writes only when the value changes, so a
 * repeated assignment leaves `updated_at` as it was. Returns true when the session changed.
 */
export async function setSessionProctor(
  db: Db,
  sessionId: number,
  proctorId: number | null,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('student_sessions')
    .set({ proctor_id: proctorId, updated_at: now })
    .where('id', '=', sessionId)
    .where((eb) =>
      proctorId === null
        ? eb('proctor_id', 'is not', null)
        : eb.or([eb('proctor_id', 'is', null), eb('proctor_id', '<>', proctorId)]),
    )
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * How many of the sessions assigned to `proctorId` the proctor is watching live now: their
 * candidate's `live_status` is `live` (the signalling hub's view), status not `exam_finished`, not
 * archived, and of an exam that is not deleted. Returns the count.
 */
export async function countActiveProctoringSessions(db: Db, proctorId: number): Promise<number> {
  const row = await db
    .selectFrom('student_sessions')
    .innerJoin('exams', 'exams.id', 'student_sessions.exam_id')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('student_sessions.proctor_id', '=', proctorId)
    .where('student_sessions.live_status', '=', 'live')
    .where('student_sessions.status', '<>', ENDED)
    .where('student_sessions.archived', '=', false)
    .where('exams.status', '<>', 'deleted')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
