import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

/** An incident a rest break writes (breaks.ts BREAK_INCIDENTS): its name, sentence and offset. */
export interface BreakIncident {
  readonly kind: 'break_started' | 'break_ended';
  readonly comment: string;
  /** Seconds since the session started. */
  readonly offsetTime: number;
  /** When it happened (epoch ms): its `created_at`, which for a break that ended itself is its limit. */
  readonly at: number;
}

async function insertBreakIncident(
  db: Db,
  sessionId: number,
  incident: BreakIncident,
  now: number,
): Promise<void> {
  await db
    .insertInto('incidents')
    .values({
      student_session_id: sessionId,
      // The name in both columns: `type` is what the V3 record shows, `kind` what the room's events use.
      kind: incident.kind,
      type: incident.kind,
      comment: incident.comment,
      offset_time: incident.offsetTime,
      created_at: incident.at,
      updated_at: now,
    })
    .execute();
}

/**
 * Starts a rest break of session `id` at `now`, with its `break_started` incident, in one
 * transaction: only while the session is `exam_started`, no break runs, the proctor does not hold
 * the clock and fewer than `count` breaks were taken (so of two racing requests one starts it).
 * Returns true when this call started it.
 */
export async function beginBreak(
  db: Db,
  id: number,
  count: number,
  incident: BreakIncident,
  now: number,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('student_sessions')
      .set({ break_started_at: now, breaks_taken: sql<number>`breaks_taken + 1`, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'exam_started')
      .where('break_started_at', 'is', null)
      .where('clock_paused_at', 'is', null)
      .where('breaks_taken', '<', count)
      .executeTakeFirst();
    const started = Number(result.numUpdatedRows) === 1;
    if (started) await insertBreakIncident(trx, id, incident, now);
    return started;
  });
}

/**
 * Ends the rest break of session `id` that began at `startedAt`, adding `spentMs` to `break_ms`,
 * with its `break_ended` incident, in one transaction. Conditional on that break still running, so
 * a break is ended (and its incident written) once however many requests settle it. Returns true
 * when this call ended it.
 */
export async function closeBreak(
  db: Db,
  id: number,
  startedAt: number,
  spentMs: number,
  incident: BreakIncident,
  now: number,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('student_sessions')
      .set({
        break_started_at: null,
        break_ms: sql<number>`break_ms + ${Math.max(0, Math.round(spentMs))}`,
        updated_at: now,
      })
      .where('id', '=', id)
      .where('break_started_at', '=', startedAt)
      .executeTakeFirst();
    const ended = Number(result.numUpdatedRows) === 1;
    if (ended) await insertBreakIncident(trx, id, incident, now);
    return ended;
  });
}
