import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { blockAfter, FORGET_AFTER_MS, MAX_BLOCK_MS } from './sign-in-throttle.ts';

/** All SQL of staff sign-in: password hashes, browser sessions, one-time links, the throttle. */

/** A browser session as the service uses it. Times are epoch milliseconds. */
export interface StaffSessionRow {
  readonly id: string;
  readonly userId: number;
  readonly csrfToken: string;
  readonly createdAt: number;
  readonly lastSeenAt: number;
  readonly expiresAt: number;
}

/** The user a sign-in names by email (case-insensitive, as emails are unique), with its hash. */
export async function findSignInUser(
  db: Db,
  email: string,
): Promise<{ id: number; active: boolean; passwordHash: string | null } | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'active', 'password_hash'])
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { id: row.id, active: Boolean(row.active), passwordHash: row.password_hash };
}

/** Writes a user's password hash. Returns false when there is no such user. */
export async function writePasswordHash(db: Db, userId: number, hash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ password_hash: hash, updated_at: now })
    .where('id', '=', userId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Removes a user's password (its email changed: only an invitation to the new address may set one),
 * ends its sessions and pending second steps, and spends its unused links, in the caller's
 * transaction. Resolves when written.
 */
export async function resetSignInOfUser(db: Db, userId: number, now: number): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: null, updated_at: now })
    .where('id', '=', userId)
    .execute();
  await db.deleteFrom('staff_sessions').where('user_id', '=', userId).execute();
  await db.deleteFrom('second_factor_challenges').where('user_id', '=', userId).execute();
  await spendOneTimeLinksOfUser(db, userId, now);
}

/** Inserts a session row. Resolves when written; throws what the database throws. */
export async function insertStaffSession(
  db: Db,
  row: StaffSessionRow & { readonly ip: string | null; readonly userAgent: string | null },
): Promise<void> {
  await db
    .insertInto('staff_sessions')
    .values({
      id: row.id,
      user_id: row.userId,
      csrf_token: row.csrfToken,
      created_at: row.createdAt,
      last_seen_at: row.lastSeenAt,
      expires_at: row.expiresAt,
      ip: row.ip,
      user_agent: row.userAgent,
    })
    .execute();
}

/** The session with this id (token hash) and whether its user is active, or undefined. */
export async function findStaffSession(
  db: Db,
  id: string,
): Promise<{ session: StaffSessionRow; userActive: boolean } | undefined> {
  const row = await db
    .selectFrom('staff_sessions')
    .innerJoin('users', 'users.id', 'staff_sessions.user_id')
    .select([
      'staff_sessions.id',
      'staff_sessions.user_id',
      'staff_sessions.csrf_token',
      'staff_sessions.created_at',
      'staff_sessions.last_seen_at',
      'staff_sessions.expires_at',
      'users.active',
    ])
    .where('staff_sessions.id', '=', id)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    session: {
      id: row.id,
      userId: row.user_id,
      csrfToken: row.csrf_token,
      // PostgreSQL's driver reads BIGINT as text.
      createdAt: Number(row.created_at),
      lastSeenAt: Number(row.last_seen_at),
      expiresAt: Number(row.expires_at),
    },
    userActive: Boolean(row.active),
  };
}

/** Moves a session's last activity forward. Resolves when written. */
export async function touchStaffSession(db: Db, id: string, now: number): Promise<void> {
  await db.updateTable('staff_sessions').set({ last_seen_at: now }).where('id', '=', id).execute();
}

/** Deletes one session. Resolves when done (nothing to delete is fine). */
export async function deleteStaffSession(db: Db, id: string): Promise<void> {
  await db.deleteFrom('staff_sessions').where('id', '=', id).execute();
}

/** Deletes every session of a user. Returns how many there were. */
export async function deleteStaffSessionsOfUser(db: Db, userId: number): Promise<number> {
  const result = await db.deleteFrom('staff_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes a user's sessions that are over by the absolute limit or the idle limit. */
export async function deleteEndedStaffSessions(
  db: Db,
  userId: number,
  now: number,
  idleMs: number,
): Promise<void> {
  await db
    .deleteFrom('staff_sessions')
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', now - idleMs)]))
    .execute();
}

/** Inserts a one-time link by the hash of its token. Resolves when written. */
export async function insertOneTimeLink(
  db: Db,
  link: { id: string; userId: number; purpose: string; createdAt: number; expiresAt: number },
): Promise<void> {
  await db
    .insertInto('one_time_links')
    .values({
      id: link.id,
      user_id: link.userId,
      purpose: link.purpose,
      created_at: link.createdAt,
      expires_at: link.expiresAt,
      used_at: null,
    })
    .execute();
}

/**
 * Marks the link used if it exists, has this purpose, is unused and unexpired at `now`. The update's
 * own condition makes two redemptions racing each other succeed once. Returns the user id, or
 * undefined when nothing was redeemed.
 */
export async function redeemOneTimeLink(
  db: Db,
  id: string,
  purpose: string,
  now: number,
): Promise<number | undefined> {
  const row = await db
    .updateTable('one_time_links')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id;
}

/** True when the user has an unused link of this purpose created after `since`. */
export async function hasRecentOneTimeLink(
  db: Db,
  userId: number,
  purpose: string,
  since: number,
): Promise<boolean> {
  const row = await db
    .selectFrom('one_time_links')
    .select('id')
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('created_at', '>', since)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Marks every unused link of a user used (a password was set: older links must not set another). */
export async function spendOneTimeLinksOfUser(db: Db, userId: number, now: number): Promise<void> {
  await db
    .updateTable('one_time_links')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
}

/** A throttle row, or undefined. */
export async function findThrottle(
  db: Db,
  key: string,
): Promise<{ failures: number; lastFailureAt: number; blockedUntil: number } | undefined> {
  const row = await db.selectFrom('sign_in_throttles').selectAll().where('key', '=', key).executeTakeFirst();
  return row === undefined
    ? undefined
    : {
        failures: row.failures,
        lastFailureAt: Number(row.last_failure_at),
        blockedUntil: Number(row.blocked_until),
      };
}

/** Writes a throttle row (insert or replace). Resolves when written. */
export async function writeThrottle(
  db: Db,
  key: string,
  state: { failures: number; lastFailureAt: number; blockedUntil: number },
): Promise<void> {
  const values = {
    failures: state.failures,
    last_failure_at: state.lastFailureAt,
    blocked_until: state.blockedUntil,
  };
  await db
    .insertInto('sign_in_throttles')
    .values({ key, ...values })
    .onConflict((conflict) => conflict.column('key').doUpdateSet(values))
    .execute();
}

/** Forgets a throttle key (a successful sign-in clears its account's count). */
export async function deleteThrottle(db: Db, key: string): Promise<void> {
  await db.deleteFrom('sign_in_throttles').where('key', '=', key).execute();
}

/** A whole number bound as a 64-bit integer on both databases (PostgreSQL cannot infer a bare parameter's type in CASE). */
function big(value: number): RawBuilder<number> {
  return sql<number>`cast(${value} as bigint)`;
}

/**
 * SQL for `now + blockAfter(failures, freeFailures)`, with `failures` an SQL expression: one CASE
 * branch per doubling until the longest block, so both databases compute the rule without pow().
 */
function blockedUntilSql(
  failures: RawBuilder<number>,
  now: number,
  freeFailures: number,
): RawBuilder<number> {
  const branches: RawBuilder<unknown>[] = [sql`when ${failures} < ${big(freeFailures)} then ${big(now)}`];
  for (let n = freeFailures; blockAfter(n, freeFailures) < MAX_BLOCK_MS; n += 1) {
    branches.push(sql`when ${failures} = ${big(n)} then ${big(now + blockAfter(n, freeFailures))}`);
  }
  return sql<number>`case ${sql.join(branches, sql` `)} else ${big(now + MAX_BLOCK_MS)} end`;
}

/**
 * Reserves one attempt on a throttle key before the password or code is checked, in one statement
 * (an upsert whose update only happens while the key is not blocked), so parallel requests, in one
 * process or many, each see the count the others left: once the free failures are reserved, the
 * key is blocked and the rest are refused. The attempt counts as a failure until released.
 * Returns true when reserved, false when the key is blocked at `now` (nothing written then).
 */
export async function reserveThrottle(
  db: Db,
  key: string,
  now: number,
  freeFailures: number,
): Promise<boolean> {
  const stale = sql<boolean>`sign_in_throttles.last_failure_at <= ${big(now - FORGET_AFTER_MS)}`;
  const failures = sql<number>`(case when ${stale} then 1 else sign_in_throttles.failures + 1 end)`;
  const row = await db
    .insertInto('sign_in_throttles')
    .values({
      key,
      failures: 1,
      last_failure_at: now,
      blocked_until: now + blockAfter(1, freeFailures),
    })
    .onConflict((conflict) =>
      conflict
        .column('key')
        .doUpdateSet({
          failures,
          last_failure_at: big(now),
          blocked_until: blockedUntilSql(failures, now, freeFailures),
        })
        .where(sql<boolean>`${stale} or sign_in_throttles.blocked_until <= ${big(now)}`),
    )
    .returning('failures')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Gives back an attempt reserveThrottle counted at `reservedAt` (the password or code was right, or
 * nothing was checked): one failure fewer, and the block the reservation may have set lifted, so the
 * key is as it was before (a reservation is only made while the key is not blocked). A block set by a
 * later failure past the free count stays. Resolves when written.
 */
export async function releaseThrottle(
  db: Db,
  key: string,
  reservedAt: number,
  freeFailures: number,
): Promise<void> {
  const ours = sql<boolean>`(failures - 1 < ${big(freeFailures)} or last_failure_at = ${big(reservedAt)})`;
  await db
    .updateTable('sign_in_throttles')
    .set({
      failures: sql<number>`case when failures > 0 then failures - 1 else 0 end`,
      blocked_until: sql<number>`case when blocked_until > ${big(reservedAt)} and ${ours} then ${big(reservedAt)} else blocked_until end`,
    })
    .where('key', '=', key)
    .execute();
}

/**
 * Counts one more event (an OpenID Connect start, an LTI login) on a key in fixed windows of
 * `windowMs`, as `startAllowed` in sign-in-throttle.ts defines it, in one statement so parallel
 * requests cannot all read the same count. Returns 0 when counted, or the milliseconds until the
 * window ends when `limit` events were counted already (nothing written then).
 */
export async function countInWindow(
  db: Db,
  key: string,
  now: number,
  limit: number,
  windowMs: number,
): Promise<number> {
  const fresh = sql<boolean>`sign_in_throttles.last_failure_at <= ${big(now - windowMs)}`;
  const row = await db
    .insertInto('sign_in_throttles')
    .values({ key, failures: 1, last_failure_at: now, blocked_until: limit <= 1 ? now + windowMs : now })
    .onConflict((conflict) =>
      conflict
        .column('key')
        .doUpdateSet({
          failures: sql<number>`case when ${fresh} then 1 else sign_in_throttles.failures + 1 end`,
          last_failure_at: sql<number>`case when ${fresh} then ${big(now)} else sign_in_throttles.last_failure_at end`,
          blocked_until: sql<number>`case
            when ${fresh} then ${big(limit <= 1 ? now + windowMs : now)}
            when sign_in_throttles.failures + 1 >= ${big(limit)} then sign_in_throttles.last_failure_at + ${big(windowMs)}
            else sign_in_throttles.last_failure_at end`,
        })
        .where(sql<boolean>`${fresh} or sign_in_throttles.failures < ${big(limit)}`),
    )
    .returning('failures')
    .executeTakeFirst();
  if (row !== undefined) return 0;
  const current = await findThrottle(db, key);
  return Math.max(1, (current?.lastFailureAt ?? now) + windowMs - now);
}
