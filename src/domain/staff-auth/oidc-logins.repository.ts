import type { Db } from '../../db/database.ts';

/** All SQL of OpenID Connect sign-in's pending logins (`oidc_logins`) and of matching its user. */

/** A pending login as the service uses it. Times are epoch milliseconds. */
export interface OidcLogin {
  /** SHA-256 of the state. */
  readonly id: string;
  readonly identityProviderId: number;
  /** SHA-256 of the browser-binding cookie. */
  readonly browserHash: string;
  readonly codeVerifierEncrypted: string;
  readonly nonce: string;
  readonly returnTo: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** Inserts a pending login. Resolves when written; throws what the database throws. */
export async function insertOidcLogin(db: Db, login: OidcLogin): Promise<void> {
  await db
    .insertInto('oidc_logins')
    .values({
      id: login.id,
      identity_provider_id: login.identityProviderId,
      browser_hash: login.browserHash,
      code_verifier_encrypted: login.codeVerifierEncrypted,
      nonce: login.nonce,
      return_to: login.returnTo,
      created_at: login.createdAt,
      expires_at: login.expiresAt,
    })
    .execute();
}

/**
 * Deletes the pending login `id` names and returns it (expired or not: the caller judges), or
 * undefined when there is none. One statement, so of two callbacks racing with one state only one
 * gets the row: a state works once.
 */
export async function takeOidcLogin(db: Db, id: string): Promise<OidcLogin | undefined> {
  const row = await db.deleteFrom('oidc_logins').where('id', '=', id).returningAll().executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    id: row.id,
    identityProviderId: row.identity_provider_id,
    browserHash: row.browser_hash,
    codeVerifierEncrypted: row.code_verifier_encrypted,
    nonce: row.nonce,
    returnTo: row.return_to,
    // PostgreSQL's driver reads BIGINT as text.
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

/** Deletes pending logins expired at `now`. Returns how many went. */
export async function deleteExpiredOidcLogins(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('oidc_logins').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * The user an email names (case-insensitive, as emails are unique) with its institute and whether
 * it is active, or undefined.
 */
export async function findUserByEmailForSignIn(
  db: Db,
  email: string,
): Promise<{ id: number; instituteId: number; active: boolean } | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'institute_id', 'active'])
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { id: row.id, instituteId: row.institute_id, active: Boolean(row.active) };
}
