/**
 * The one clock of a student session (step 17, docs/accommodations.md): every place that needs to
 * know when a candidate's time runs out (the room and the phone and their countdowns, `time_up`
 * finishing, the worker's sweep, the live wall, the V3 record's `deadline_at`, the LTI end) asks
 * deadlineOf. Pure: the times come from the caller.
 *
 * The rule, for a started session at `now`:
 * 1. Extra time = `extra_time_percent` of the exam's duration (of its window from start_time to
 *    end_time when it has no duration), then `extra_time_minutes`.
 * 2. By duration (the session and the exam both use it): start_time + duration + extra time.
 * 3. By the window: the exam's end_time, plus the extra time when the exam allows extra time past
 *    its end (`extra_time_beyond_end`, default true).
 * 4. The earlier of the two that apply; none: no deadline.
 * 5. Moved later by every stretch the clock stood still: a proctor's pauses (live-clock.ts) and the
 *    candidate's rest breaks, the running one included, each break counting at most its allowance.
 */
import { pausedMillis } from '../live/live-clock.ts';
import type { Accommodations } from './accommodations.ts';

/** What of a session the clock reads. */
export interface ClockSession {
  readonly startTime: number | null;
  readonly useDuration: boolean;
  readonly clockPausedAt: number | null;
  readonly clockPausedMs: number;
  readonly accommodations: Pick<Accommodations, 'extraTimeMinutes' | 'extraTimePercent' | 'breaks'>;
  /** When the running rest break began; null while the candidate works. */
  readonly breakStartedAt: number | null;
  /** The total of the rest breaks that ended, in milliseconds. */
  readonly breakMs: number;
}

/** What of an exam the clock reads. */
export interface ClockExam {
  readonly useDuration: boolean;
  readonly durationMinutes: number | null;
  readonly startTime: number | null;
  readonly endTime: number | null;
  readonly extraTimeBeyondEnd: boolean;
}

const MINUTE = 60_000;

/** Whether the session's time is counted from its own start (the session and the exam use the duration). */
function timedByDuration(
  session: ClockSession,
  exam: ClockExam,
): exam is ClockExam & { durationMinutes: number } {
  return session.useDuration && exam.useDuration && exam.durationMinutes !== null;
}

/**
 * The extra time the session's accommodations give, in ms: the percent of the exam's duration (of
 * its window when it has none; nothing when it has neither), then the minutes.
 */
export function extraTimeMillis(session: Pick<ClockSession, 'accommodations'>, exam: ClockExam): number {
  const { extraTimeMinutes, extraTimePercent } = session.accommodations;
  const basis =
    exam.durationMinutes !== null
      ? exam.durationMinutes * MINUTE
      : exam.startTime !== null && exam.endTime !== null
        ? Math.max(0, exam.endTime - exam.startTime)
        : 0;
  return Math.round((basis * extraTimePercent) / 100) + extraTimeMinutes * MINUTE;
}

/**
 * How long the candidate may work when the session is timed by the exam's duration: the duration
 * plus the extra time, in ms. Null when no duration applies (the window alone ends the exam).
 */
export function timeAllowedMillis(session: ClockSession, exam: ClockExam): number | null {
  return timedByDuration(session, exam)
    ? exam.durationMinutes * MINUTE + extraTimeMillis(session, exam)
    : null;
}

/** The longest one rest break may last (ms); Infinity once the allowance was withdrawn mid-break. */
export function breakLimitMillis(session: Pick<ClockSession, 'accommodations'>): number {
  const { breaks } = session.accommodations;
  return breaks === null ? Number.POSITIVE_INFINITY : breaks.minutes * MINUTE;
}

/** When the running break ends by itself (epoch ms); null when none runs or none has a limit. */
export function breakEndsAt(session: Pick<ClockSession, 'accommodations' | 'breakStartedAt'>): number | null {
  if (session.breakStartedAt === null) return null;
  const limit = breakLimitMillis(session);
  return Number.isFinite(limit) ? session.breakStartedAt + limit : null;
}

/**
 * How long the candidate has rested by `now`: the breaks that ended plus the running one, which
 * counts at most its allowance (never less than zero). Returns ms.
 */
export function breakMillis(
  session: Pick<ClockSession, 'accommodations' | 'breakStartedAt' | 'breakMs'>,
  now: number,
): number {
  if (session.breakStartedAt === null) return session.breakMs;
  const running = Math.min(Math.max(0, now - session.breakStartedAt), breakLimitMillis(session));
  return session.breakMs + running;
}

/**
 * When the exam ends for the session at `now` (the rule at the top of this file). Returns epoch ms,
 * or null for a session not started, or one that neither a duration nor an end_time limits.
 */
export function deadlineOf(session: ClockSession, exam: ClockExam, now: number): number | null {
  if (session.startTime === null) return null;
  const extra = extraTimeMillis(session, exam);
  const byDuration = timedByDuration(session, exam)
    ? session.startTime + exam.durationMinutes * MINUTE + extra
    : null;
  const byWindow = exam.endTime === null ? null : exam.endTime + (exam.extraTimeBeyondEnd ? extra : 0);
  const unpaused =
    byDuration === null ? byWindow : byWindow === null ? byDuration : Math.min(byDuration, byWindow);
  if (unpaused === null) return null;
  return unpaused + pausedMillis(session, now) + breakMillis(session, now);
}

/** The V3 record's `time_allowed_seconds`: timeAllowedMillis in whole seconds (rounded down), or null. */
export function timeAllowedSeconds(session: ClockSession, exam: ClockExam): number | null {
  const allowed = timeAllowedMillis(session, exam);
  return allowed === null ? null : Math.floor(allowed / 1000);
}
