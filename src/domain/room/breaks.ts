/**
 * The candidate's rest breaks (step 17, docs/accommodations.md "Rest breaks"): a student whose
 * accommodations give `breaks: {count, minutes}` may stop the exam clock up to `count` times, for
 * up to `minutes` each. The clock itself is deadline.ts's (it counts the running break up to its
 * allowance); this module starts and ends breaks and writes their incidents. A break the candidate
 * does not end ends itself at its allowance: nothing runs at that instant, so whoever reads the
 * session next (the room, the phone, the time-up sweep) settles it, dated at the exact limit.
 */
import type { Db } from '../../db/database.ts';
import { StateConflictMessage } from '../errors.ts';
import { isClockPaused } from '../live/live-clock.ts';
import { breakEndsAt, breakLimitMillis } from '../student-sessions/deadline.ts';
import type { StudentSession } from '../student-sessions/student-session.ts';
import { beginBreak, type BreakIncident, closeBreak } from './breaks.repository.ts';

/** A session as the break rules read it. */
export type BreakSession = Pick<
  StudentSession,
  'id' | 'status' | 'startTime' | 'accommodations' | 'breakStartedAt' | 'breakMs' | 'breaksTaken'
> &
  Pick<StudentSession, 'clockPausedAt' | 'clockPausedMs'>;

/** The sentences of the break incidents (their `comment`), by how the break ended. */
export const BREAK_INCIDENTS = {
  started: 'The student started a rest break',
  endedByStudent: 'The student ended the rest break',
  endedAtLimit: 'The rest break ended by itself at its allowance',
  endedWithExam: 'The rest break ended when the exam was finished',
} as const;

/** The 409 messages of the break routes. */
export const NO_BREAKS = 'This student has no rest breaks';
export const NO_BREAKS_LEFT = 'No rest breaks are left';
export const BREAK_NOT_STARTED = 'Rest breaks can be taken only while the exam is started';
export const ALREADY_ON_BREAK = 'A rest break is already running';
export const NOT_ON_BREAK = 'No rest break is running';
export const CLOCK_HELD = 'The proctor holds the exam clock: a rest break cannot start now';

/** How many more breaks the session may take: 0 without an allowance. */
export function breaksLeft(session: Pick<BreakSession, 'accommodations' | 'breaksTaken'>): number {
  const { breaks } = session.accommodations;
  return breaks === null ? 0 : Math.max(0, breaks.count - session.breaksTaken);
}

/** True while a rest break runs. */
export function onBreak(session: Pick<BreakSession, 'breakStartedAt'>): boolean {
  return session.breakStartedAt !== null;
}

/** Whole seconds from the session's start to `at` (an incident's offset_time). */
function offsetAt(session: Pick<BreakSession, 'startTime'>, at: number): number {
  return session.startTime === null ? 0 : Math.max(0, Math.floor((at - session.startTime) / 1000));
}

function endedIncident(session: BreakSession, at: number, comment: string): BreakIncident {
  return { kind: 'break_ended', comment, offsetTime: offsetAt(session, at), at };
}

/**
 * Ends the running break of a started `session` when its allowance ran out by `now`, dated at the limit
 * (break_ms grows by exactly the allowance). Returns true when this call ended it (the caller
 * reads the session again), false when there was nothing to settle or another request did it.
 */
export async function settleBreak(db: Db, session: BreakSession, now: number): Promise<boolean> {
  const startedAt = session.breakStartedAt;
  const endsAt = breakEndsAt(session);
  if (session.status !== 'exam_started' || startedAt === null || endsAt === null || now < endsAt)
    return false;
  const incident = endedIncident(session, endsAt, BREAK_INCIDENTS.endedAtLimit);
  return closeBreak(db, session.id, startedAt, endsAt - startedAt, incident, now);
}

/**
 * Ends the running break of a session being finished at `now` (the candidate's finish, or a
 * proctor's end): it counts up to now, at most its allowance. Call settleBreak first where the
 * allowance may have run out. Returns true when this call ended it.
 */
export async function endBreakForFinish(db: Db, session: BreakSession, now: number): Promise<boolean> {
  const startedAt = session.breakStartedAt;
  if (startedAt === null) return false;
  const spent = Math.min(Math.max(0, now - startedAt), breakLimitMillis(session));
  const at = startedAt + spent;
  return closeBreak(
    db,
    session.id,
    startedAt,
    spent,
    endedIncident(session, at, BREAK_INCIDENTS.endedWithExam),
    now,
  );
}

/**
 * Starts a rest break at `now`. Throws StateConflictMessage (409) unless the session is
 * `exam_started`, has breaks left, runs none already and the proctor does not hold the clock.
 * Returns nothing; the caller reads the session again.
 */
export async function startBreak(db: Db, session: BreakSession, now: number): Promise<void> {
  if (session.status !== 'exam_started') throw new StateConflictMessage(BREAK_NOT_STARTED);
  const { breaks } = session.accommodations;
  if (breaks === null) throw new StateConflictMessage(NO_BREAKS);
  if (onBreak(session)) throw new StateConflictMessage(ALREADY_ON_BREAK);
  if (breaksLeft(session) === 0) throw new StateConflictMessage(NO_BREAKS_LEFT);
  if (isClockPaused(session)) throw new StateConflictMessage(CLOCK_HELD);
  const incident: BreakIncident = {
    kind: 'break_started',
    comment: BREAK_INCIDENTS.started,
    offsetTime: offsetAt(session, now),
    at: now,
  };
  if (await beginBreak(db, session.id, breaks.count, incident, now)) return;
  // A racing request changed the session between the read and the write: say what it did.
  throw new StateConflictMessage(ALREADY_ON_BREAK);
}

/**
 * Ends the running break at `now` (the candidate is back): it counts up to now, at most its
 * allowance. Throws StateConflictMessage unless the session is `exam_started` with a break
 * running. Returns nothing; the caller reads the session again.
 */
export async function endBreak(db: Db, session: BreakSession, now: number): Promise<void> {
  if (session.status !== 'exam_started') throw new StateConflictMessage(BREAK_NOT_STARTED);
  const startedAt = session.breakStartedAt;
  if (startedAt === null) throw new StateConflictMessage(NOT_ON_BREAK);
  const spent = Math.min(Math.max(0, now - startedAt), breakLimitMillis(session));
  const incident = endedIncident(session, startedAt + spent, BREAK_INCIDENTS.endedByStudent);
  if (await closeBreak(db, session.id, startedAt, spent, incident, now)) return;
  throw new StateConflictMessage(NOT_ON_BREAK);
}
