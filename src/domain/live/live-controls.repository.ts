import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

/**
 * The proctor's changes to a session (admit, pause, resume). Each is conditional on the state it
 * was judged in, so of two racing requests only one changes the session; each returns whether it
 * did.
 */

/** Moves the session from `in_setup` to `exam_not_started` (leaving the setup). Returns true when it moved. */
export async function admitSession(db: Db, id: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('student_sessions')
    .set({ status: 'exam_not_started', in_setup: false, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'in_setup')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Stops the clock of a started session whose clock runs. Returns true when it stopped it. */
export async function pauseClock(db: Db, id: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('student_sessions')
    .set({ clock_paused_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'exam_started')
    .where('clock_paused_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * The columns that end a running pause at `now`, adding its length to `clock_paused_ms` (nothing
 * when the clock runs). For an update that resumes the clock or finishes the session.
 */
export function pauseEndedColumns(now: number) {
  return {
    clock_paused_ms: sql<number>`clock_paused_ms + coalesce(${now} - clock_paused_at, 0)`,
    clock_paused_at: null,
  };
}

/** Starts the clock again of a session whose clock stands still. Returns true when it restarted it. */
export async function resumeClock(db: Db, id: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('student_sessions')
    .set({ ...pauseEndedColumns(now), updated_at: now })
    .where('id', '=', id)
    .where('clock_paused_at', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records what a proctor did as an incident of the session, with its kind. Returns nothing. */
export async function insertProctorIncident(
  db: Db,
  sessionId: number,
  incident: { readonly kind: string; readonly comment: string; readonly offsetTime: number | null },
  now: number,
): Promise<void> {
  await db
    .insertInto('incidents')
    .values({
      student_session_id: sessionId,
      kind: incident.kind,
      comment: incident.comment,
      offset_time: incident.offsetTime,
      created_at: now,
      updated_at: now,
    })
    .execute();
}
