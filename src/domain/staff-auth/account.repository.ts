import type { Db } from '../../db/database.ts';

/** The SQL of "my account": what a signed-in user reads and changes about its own credentials. */

/**
 * Deletes every session of a user except the one whose id (token hash) is `keepId`. Returns how many
 * were deleted.
 */
export async function deleteOtherStaffSessions(db: Db, userId: number, keepId: string): Promise<number> {
  const result = await db
    .deleteFrom('staff_sessions')
    .where('user_id', '=', userId)
    .where('id', '<>', keepId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * The user's encrypted API secret and whether it has a password, or undefined when there is no such
 * user.
 */
export async function findApiSecret(
  db: Db,
  userId: number,
): Promise<{ secretKeyEncrypted: string; hasPassword: boolean } | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['secret_key_encrypted', 'password_hash'])
    .where('id', '=', userId)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { secretKeyEncrypted: row.secret_key_encrypted, hasPassword: row.password_hash !== null };
}

/** True when the user has a password; false without one or without the user. */
export async function userHasPassword(db: Db, userId: number): Promise<boolean> {
  return (await findApiSecret(db, userId))?.hasPassword === true;
}

/** Writes the user's console language (null to follow the browser). Returns false when there is no such user. */
export async function writeUserLanguage(
  db: Db,
  userId: number,
  language: string | null,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ language, updated_at: now })
    .where('id', '=', userId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
