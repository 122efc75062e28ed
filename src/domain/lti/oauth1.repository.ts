import type { Db } from '../../db/database.ts';

/** All SQL of LTI 1.1 OAuth verification (src/lti/oauth1.ts): the consumer and its nonces. */

/** A tool provider as an LTI 1.1 launch needs it: which version it is, and its stored secret. */
export interface OauthConsumer {
  readonly id: number;
  readonly instituteId: number;
  readonly name: string;
  readonly ltiVersion: string;
  /** The shared secret as stored (encryptSecret), null when none was set. */
  readonly sharedSecretEncrypted: string | null;
}

/** The tool provider holding `consumerKey` (any LTI version), or undefined. */
export async function findConsumerByKey(db: Db, consumerKey: string): Promise<OauthConsumer | undefined> {
  const row = await db
    .selectFrom('tool_providers')
    .select(['id', 'institute_id', 'name', 'lti_version', 'shared_secret_encrypted'])
    .where('consumer_key', '=', consumerKey)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    id: row.id,
    instituteId: row.institute_id,
    name: row.name,
    ltiVersion: row.lti_version,
    sharedSecretEncrypted: row.shared_secret_encrypted,
  };
}

/**
 * Records a nonce of a tool provider, kept until `expiresAt`. Returns false when the provider
 * already used it (a replay); the primary key decides, so two concurrent launches cannot both win.
 */
export async function rememberOauthNonce(
  db: Db,
  toolProviderId: number,
  nonce: string,
  expiresAt: number,
): Promise<boolean> {
  // A conflict inserts nothing, so RETURNING answers no row (both databases).
  const row = await db
    .insertInto('lti_oauth_nonces')
    .values({ tool_provider_id: toolProviderId, nonce, expires_at: expiresAt })
    .onConflict((conflict) => conflict.columns(['tool_provider_id', 'nonce']).doNothing())
    .returning('nonce')
    .executeTakeFirst();
  return row !== undefined;
}

/** Deletes every nonce whose timestamp could no longer be accepted anyway. */
export async function deleteExpiredOauthNonces(db: Db, now: number): Promise<void> {
  await db.deleteFrom('lti_oauth_nonces').where('expires_at', '<', now).execute();
}
