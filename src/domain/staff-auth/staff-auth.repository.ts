import type { Db } from '../../db/database.ts';

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
