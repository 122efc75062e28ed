import { sql } from 'kysely';
import type { NoncePolicy } from '../../config/config.ts';
import type { Db } from '../../db/database.ts';

/**
 * Remembers a (user, nonce) use and answers whether it was fresh. Under `request` the timestamp is
 * part of the key (one use per nonce and timestamp); under `strict` the nonce alone is. A row whose
 * time has passed counts as free, so reuse after the window works before the purge has run.
 * Returns true for a first use, false for a replay.
 */
export async function rememberNonce(
  db: Db,
  policy: NoncePolicy,
  use: { userId: number; nonce: string; timestamp: string; expiresAt: number; now: number },
): Promise<boolean> {
  const scope = policy === 'request' ? use.timestamp : '';
  const row = await db
    .insertInto('nonces')
    .values({ user_id: use.userId, nonce: use.nonce, scope, expires_at: use.expiresAt })
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'nonce', 'scope'])
        .doUpdateSet({ expires_at: use.expiresAt })
        .where(sql.ref('nonces.expires_at'), '<', use.now),
    )
    .returning('user_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Deletes nonces whose timestamps can no longer be accepted. Returns how many were removed. */
export async function purgeExpiredNonces(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('nonces').where('expires_at', '<', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
