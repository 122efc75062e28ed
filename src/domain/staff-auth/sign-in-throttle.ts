import crypto from 'node:crypto';
import net from 'node:net';

/**
 * The sign-in throttle's rule, pure: after a number of free failures, each further failure blocks the
 * key for twice as long as the one before (1 s, 2 s, 4 s ... up to MAX_BLOCK_MS). Keys are an account
 * (the email as typed, in lower case, whether or not a user has it: the answer must not tell) and a
 * client address, which gets more free failures since an office may share one address. The same
 * table also counts the OpenID Connect starts of an address group in fixed windows (startAllowed).
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

/** The longest email kept as it is in an account key (RFC 5321's limit for a whole address). */
const MAX_KEY_EMAIL = 254;

/**
 * The account key of the throttle: the email as typed, trimmed, in lower case; one longer than any
 * real address is kept as its SHA-256 instead, so a key always fits the table's primary-key index
 * (PostgreSQL refuses an index entry of more than about 2.7 kB). Returns it.
 */
export function accountKey(email: string): string {
  const typed = email.trim().toLowerCase();
  if (typed.length <= MAX_KEY_EMAIL) return `account:${typed}`;
  return `account:sha256:${crypto.createHash('sha256').update(typed).digest('hex')}`;
}

/**
 * The address key of the throttle, shared by every way of signing in (password, second step,
 * OpenID Connect). Returns it.
 */
export function addressKey(ip: string): string {
  return `address:${ip}`;
}

/** OpenID Connect sign-ins one address group may start in one START_WINDOW_MS. */
export const ADDRESS_STARTS_PER_WINDOW = 100;
/** The window of the start count: as long as a pending login lives (OIDC_LOGIN_MS). */
export const START_WINDOW_MS = 10 * 60 * 1000;

/**
 * The first 64 bits of an IPv6 address as 4 groups of hex (`2001:db8:0:1`), or undefined for a text
 * that is not an IPv6 address. Handles `::` and a trailing dotted IPv4 part.
 */
function ipv6Prefix64(ip: string): string | undefined {
  const address = ip.split('%')[0] ?? '';
  if (!net.isIPv6(address)) return undefined;
  const groupsOf = (text: string): string[] =>
    text === '' ? [] : text.split(':').flatMap((part) => (part.includes('.') ? ['0', '0'] : [part]));
  const [head = '', tail] = address.split('::');
  const before = groupsOf(head);
  const after = tail === undefined ? [] : groupsOf(tail);
  const groups = [...before, ...Array<string>(8 - before.length - after.length).fill('0'), ...after];
  return groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':');
}

/**
 * The start-count key of a client address: the address itself for IPv4 (and IPv4 mapped into IPv6),
 * its /64 network for IPv6, since one IPv6 client usually holds a whole /64 and could otherwise
 * change address for every start. Returns it.
 */
export function startKey(ip: string): string {
  return `oidc_start:${addressGroup(ip)}`;
}

/**
 * The group a client address is counted in: the IPv4 address itself (also when mapped into IPv6),
 * or its /64 network for IPv6. Returns it as text (`192.0.2.1`, `2001:db8:0:1::/64`).
 */
export function addressGroup(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped?.[1] !== undefined) return mapped[1];
  const prefix = ipv6Prefix64(ip);
  return prefix === undefined ? ip : `${prefix}::/64`;
}

/**
 * One more OpenID Connect start at `now` against a key's count, in fixed windows of `windowMs` that
 * begin with the first start after the previous window ended. The row's fields are read as: `failures`
 * the starts counted in the window, `lastFailureAt` when the window began, `blockedUntil` when it ends
 * once the count is full (otherwise its start, so the retention sweep treats the row as unblocked).
 * Returns the state to write and 0 when the start may go ahead; or the unchanged state and the
 * milliseconds until the window ends when `limit` starts were counted already.
 */
export function startAllowed(
  previous: ThrottleState | undefined,
  now: number,
  limit = ADDRESS_STARTS_PER_WINDOW,
  windowMs = START_WINDOW_MS,
): { readonly state: ThrottleState; readonly waitMs: number } {
  const fresh = previous === undefined || now - previous.lastFailureAt >= windowMs;
  const windowStart = fresh ? now : previous.lastFailureAt;
  const counted = fresh ? 0 : previous.failures;
  if (!fresh && counted >= limit) return { state: previous, waitMs: windowStart + windowMs - now };
  const starts = counted + 1;
  return {
    state: {
      failures: starts,
      lastFailureAt: windowStart,
      blockedUntil: starts >= limit ? windowStart + windowMs : windowStart,
    },
    waitMs: 0,
  };
}
