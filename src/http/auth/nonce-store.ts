import { sql } from 'kysely';
import type { NoncePolicy } from '../../config/config.ts';
import type { Db } from '../../db/database.ts';
import { prepared } from '../../db/prepared.ts';

/** One use of a nonce by a user, as the signature check saw it. */
export interface NonceUse {
  readonly userId: number;
  readonly nonce: string;
  readonly timestamp: string;
  /** The request's signature as sent (hex, either case). */
  readonly signature: string;
  /** The last moment (ms) the request's timestamp could still be accepted. */
  readonly expiresAt: number;
  readonly now: number;
}

export interface NonceStore {
  /**
   * Remembers a (user, nonce) use, with a scope that the policy chooses: under `signature` the
   * lower-cased signature (one use per exact request), under `request` the timestamp (one use per
   * nonce and timestamp), under `strict` nothing (one use per nonce). A row whose time has passed
   * counts as free, so reuse after the window works before the purge has run. Resolves true for a
   * first use, false for a replay; rejects when the database fails.
   */
  remember(use: NonceUse): Promise<boolean>;
}

/** Insert, or take over an expired row; returns a row only when the use is fresh. */
const insertNonce = prepared(
  [0, 'nonce', 'scope', 1, 2] as [number, string, string, number, number],
  (db, userId, nonce, scope, expiresAt, now) =>
    db
      .insertInto('nonces')
      .values({ user_id: userId, nonce, scope, expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .columns(['user_id', 'nonce', 'scope'])
          .doUpdateSet((eb) => ({ expires_at: eb.ref('excluded.expires_at') }))
          .where(sql.ref('nonces.expires_at'), '<', now),
      )
      .returning('user_id'),
);

interface Pending {
  readonly values: [number, string, string, number, number];
  readonly resolve: (fresh: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * A nonce store that commits in groups. Every signed request writes one nonce, and on SQLite each
 * separate commit appends whole index pages to the write-ahead log; the uses that arrive while the
 * event loop is busy are therefore written together, in one transaction, once the loop turns.
 * Each caller still waits for the commit that holds its own nonce, and a duplicate inside one group
 * meets the conflict rule exactly as it would in separate transactions.
 */
/**
 * The third part of a nonce row's key under each policy. The signature covers every signed
 * parameter, nonce and timestamp included, so under `signature` two requests share a key only when
 * they are the same request; hex case is folded because the check accepts either case.
 */
function scopeOf(policy: NoncePolicy, use: NonceUse): string {
  switch (policy) {
    case 'signature':
      return use.signature.toLowerCase();
    case 'request':
      return use.timestamp;
    case 'strict':
      return '';
  }
}

/**
 * Builds the store for one policy. Returns it; the database is only touched when a use is
 * remembered.
 */
export function createNonceStore(db: Db, policy: NoncePolicy): NonceStore {
  let pending: Pending[] = [];

  async function flush(): Promise<void> {
    const batch = pending;
    pending = [];
    try {
      const results = await db.transaction().execute(async (trx) => {
        const fresh: boolean[] = [];
        for (const item of batch) fresh.push((await insertNonce(trx, item.values)).length > 0);
        return fresh;
      });
      batch.forEach((item, index) => item.resolve(results[index] === true));
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
  }

  return {
    remember(use) {
      const scope = scopeOf(policy, use);
      return new Promise<boolean>((resolve, reject) => {
        pending.push({ values: [use.userId, use.nonce, scope, use.expiresAt, use.now], resolve, reject });
        if (pending.length === 1) setImmediate(() => void flush());
      });
    },
  };
}

/** Deletes nonces whose timestamps can no longer be accepted. Returns how many were removed. */
export async function purgeExpiredNonces(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('nonces').where('expires_at', '<', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
