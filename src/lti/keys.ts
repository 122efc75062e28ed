import crypto from 'node:crypto';
import { exportJWK, exportPKCS8, generateKeyPair, importPKCS8, type CryptoKey, SignJWT } from 'jose';
import type { Db } from '../db/database.ts';
import type { Clock } from '../domain/clock.ts';
import { decryptSecret, encryptSecret } from '../security/keys.ts';

/**
 * Invigil's own LTI 1.3 signing keys (docs/lti.md, "Keys"): RSA key pairs kept in `lti_tool_keys`,
 * the private key encrypted with the server key. The newest key that is not retired signs; a key
 * older than the rotation age is replaced by a new one, and stays published at /lti/jwks for the
 * overlap so that a platform holding the old key set can still check what it signed.
 */

export interface ToolKeys {
  /** Signs `payload` as the tool (RS256, header kid); iat/exp/jti added unless present. */
  sign(payload: Record<string, unknown>, options?: { expiresInSeconds?: number }): Promise<string>;
  /** The published key set: every key not expired. */
  jwks(): Promise<{ keys: Record<string, unknown>[] }>;
  /** Creates a signing key when none, rotates when the current one is older than the rotation age. */
  ensureCurrent(): Promise<void>;
}

/** Days a signing key signs before a new one replaces it. */
export const KEY_ROTATION_DAYS = 90;
/** Days a replaced key stays published after it stopped signing. */
export const KEY_OVERLAP_DAYS = 30;
/** Lifetime of a signed message unless the caller says otherwise (seconds). */
const DEFAULT_EXPIRES_IN_SECONDS = 300;
const DAY_MS = 24 * 60 * 60 * 1000;

interface SigningKey {
  readonly kid: string;
  readonly privateKeyEncrypted: string;
  readonly createdAt: number;
}

/** Builds the tool's key store. Returns it; throws nothing (database errors surface on use). */
export function createToolKeys(deps: {
  db: Db;
  clock: Clock;
  serverKey: Buffer;
  rotationDays?: number;
  overlapDays?: number;
}): ToolKeys {
  const { db, clock, serverKey } = deps;
  const rotationMs = (deps.rotationDays ?? KEY_ROTATION_DAYS) * DAY_MS;
  const overlapMs = (deps.overlapDays ?? KEY_OVERLAP_DAYS) * DAY_MS;
  /** Imported private keys by kid (decrypting and parsing PEM on every signature is wasted work). */
  const imported = new Map<string, Promise<CryptoKey>>();
  /** One rotation at a time in this process. */
  let rotating: Promise<SigningKey> | undefined;

  async function currentKey(): Promise<SigningKey | undefined> {
    const row = await db
      .selectFrom('lti_tool_keys')
      .select(['kid', 'private_key_encrypted', 'created_at'])
      .where('retired_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirst();
    if (row === undefined) return undefined;
    return {
      kid: row.kid,
      privateKeyEncrypted: row.private_key_encrypted,
      createdAt: Number(row.created_at),
    };
  }

  /** Makes a new signing key and retires every other one. Returns the new key. */
  async function createKey(): Promise<SigningKey> {
    const { publicKey, privateKey } = await generateKeyPair('RS256', {
      modulusLength: 2048,
      extractable: true,
    });
    const kid = crypto.randomBytes(12).toString('base64url');
    const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
    const privateKeyEncrypted = encryptSecret(serverKey, await exportPKCS8(privateKey));
    const now = clock.now();
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('lti_tool_keys')
        .values({
          kid,
          private_key_encrypted: privateKeyEncrypted,
          public_jwk: JSON.stringify(jwk),
          created_at: now,
          retired_at: null,
          expires_at: null,
        })
        .execute();
      // Another process may have rotated at the same moment: only the newest key signs, and the
      // others stay published for the overlap like any replaced key.
      await trx
        .updateTable('lti_tool_keys')
        .set({ retired_at: now, expires_at: now + overlapMs })
        .where('retired_at', 'is', null)
        .where('kid', '!=', kid)
        .execute();
    });
    return { kid, privateKeyEncrypted, createdAt: now };
  }

  /** The signing key, created or rotated first when needed. Returns it. */
  async function ensure(): Promise<SigningKey> {
    const current = await currentKey();
    if (current !== undefined && clock.now() - current.createdAt < rotationMs) return current;
    rotating ??= createKey().finally(() => {
      rotating = undefined;
    });
    return rotating;
  }

  function privateKeyOf(key: SigningKey): Promise<CryptoKey> {
    let found = imported.get(key.kid);
    if (found === undefined) {
      found = importPKCS8(decryptSecret(serverKey, key.privateKeyEncrypted), 'RS256');
      imported.set(key.kid, found);
    }
    return found;
  }

  return {
    async sign(payload, options) {
      const key = await ensure();
      const now = Math.floor(clock.now() / 1000);
      const claims: Record<string, unknown> = {
        iat: now,
        exp: now + (options?.expiresInSeconds ?? DEFAULT_EXPIRES_IN_SECONDS),
        jti: crypto.randomBytes(16).toString('base64url'),
        ...payload,
      };
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid })
        .sign(await privateKeyOf(key));
    },

    async jwks() {
      // A key set is never empty: the first request makes the first key (and a due rotation happens).
      await ensure();
      const now = clock.now();
      const rows = await db
        .selectFrom('lti_tool_keys')
        .select(['public_jwk'])
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return { keys: rows.map((row) => JSON.parse(row.public_jwk) as Record<string, unknown>) };
    },

    async ensureCurrent() {
      await ensure();
    },
  };
}
