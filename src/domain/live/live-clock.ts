/**
 * The candidate's exam clock, which a proctor may pause and resume (docs/api-live.md). While it is
 * paused the candidate's time does not run out: every pause moves the session's deadline later by
 * its length. Pure: the times come from the caller.
 */

/** The clock columns of a session. */
export interface PausableClock {
  /** When the running pause began (epoch ms); null while the clock runs. */
  readonly clockPausedAt: number | null;
  /** The total of the pauses that ended, in milliseconds. */
  readonly clockPausedMs: number;
}

/** True while a pause runs. */
export function isClockPaused(clock: PausableClock): boolean {
  return clock.clockPausedAt !== null;
}

/**
 * How long the clock has stood still by `now`: the pauses that ended plus the running one (never
 * less than zero, should `now` come from a clock behind the one that began the pause). Returns ms.
 */
export function pausedMillis(clock: PausableClock, now: number): number {
  const running = clock.clockPausedAt === null ? 0 : Math.max(0, now - clock.clockPausedAt);
  return clock.clockPausedMs + running;
}

/** The same in whole seconds, rounded down (the V3 record's `paused_seconds`). */
export function pausedSeconds(clock: PausableClock, now: number): number {
  return Math.floor(pausedMillis(clock, now) / 1000);
}
