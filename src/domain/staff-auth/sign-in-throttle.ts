/**
 * The sign-in throttle's rule, pure: after a number of free failures, each further failure blocks the
 * key for twice as long as the one before (1 s, 2 s, 4 s ... up to MAX_BLOCK_MS). Keys are an account
 * (the email as typed, in lower case, whether or not a user has it: the answer must not tell) and a
 * client address, which gets more free failures since an office may share one address.
 */

/** Failures an account may have before the first delay. */
export const ACCOUNT_FREE_FAILURES = 3;
/** Failures one client address may have before the first delay. */
export const ADDRESS_FREE_FAILURES = 20;
/** The longest block. */
export const MAX_BLOCK_MS = 15 * 60 * 1000;
/** A key whose last failure is older than this starts again from zero. */
export const FORGET_AFTER_MS = 24 * 60 * 60 * 1000;

/** A throttle key's state. Times are epoch milliseconds. */
export interface ThrottleState {
  readonly failures: number;
  readonly lastFailureAt: number;
  readonly blockedUntil: number;
}

/** How long a key is blocked after its `failures`-th failure (0 while still free). Returns milliseconds. */
export function blockAfter(failures: number, freeFailures: number): number {
  if (failures < freeFailures) return 0;
  return Math.min(1000 * 2 ** Math.min(failures - freeFailures, 30), MAX_BLOCK_MS);
}

/** The state after one more failure at `now`. Returns it. */
export function afterFailure(
  previous: ThrottleState | undefined,
  now: number,
  freeFailures: number,
): ThrottleState {
  const stale = previous === undefined || now - previous.lastFailureAt >= FORGET_AFTER_MS;
  const failures = (stale ? 0 : previous.failures) + 1;
  return { failures, lastFailureAt: now, blockedUntil: now + blockAfter(failures, freeFailures) };
}

/** Milliseconds the key must still wait at `now` (0: it may try). */
export function waitFor(state: ThrottleState | undefined, now: number): number {
  if (state === undefined || now - state.lastFailureAt >= FORGET_AFTER_MS) return 0;
  return Math.max(0, state.blockedUntil - now);
}
