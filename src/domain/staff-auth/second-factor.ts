import crypto from 'node:crypto';
import type { Db } from '../../db/database.ts';
import { decryptSecret, encryptSecret, hashToken } from '../../security/keys.ts';
import { newTotpSecret, verifyTotp } from '../../security/totp.ts';

/**
 * The optional second factor of staff sign-in (docs/staff-sign-in.md, "Second factor"): a TOTP
 * secret per user (encrypted at rest), single-use recovery codes (hashed), and the pending second
 * steps of password sign-ins (hashed tokens). All of its SQL is here.
 */

/** A pending second step lives this long. */
export const CHALLENGE_MS = 5 * 60 * 1000;
/** Wrong codes one pending second step takes before it is spent (the throttle counts them too). */
export const CHALLENGE_ATTEMPTS = 5;
/** Recovery codes given at enrolment (and at each regeneration). */
export const RECOVERY_CODE_COUNT = 10;

/** A TOTP code is six digits; anything else typed in its place is tried as a recovery code. */
export function looksLikeTotp(code: string): boolean {
  return /^\d{6}$/.test(code.replace(/\s/g, ''));
}

/** A recovery code as stored: without dashes and spaces, in lower case, SHA-256. Returns the hash. */
function recoveryHash(code: string): string {
  return hashToken(code.replace(/[\s-]/g, '').toLowerCase());
}

/** Ten new recovery codes, `xxxxx-xxxxx` of base32-ish lower-case letters and digits (50 bits each). */
function newRecoveryCodes(): string[] {
  const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from(crypto.randomBytes(10), (byte) => alphabet[byte & 31]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** A user's second factor as the service sees it. */
export interface SecondFactorState {
  readonly enabled: boolean;
  readonly secret: string;
  readonly lastUsedStep: number | null;
}

/** The user's second factor (secret decrypted), or undefined when there is none. */
export async function findSecondFactor(
  db: Db,
  key: Buffer,
  userId: number,
): Promise<SecondFactorState | undefined> {
  const row = await db
    .selectFrom('second_factors')
    .selectAll()
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    enabled: row.enabled_at !== null,
    secret: decryptSecret(key, row.secret_encrypted),
    lastUsedStep: row.last_used_step === null ? null : Number(row.last_used_step),
  };
}

/** Whether the user has an enabled second factor. Returns it; throws what the database throws. */
export async function hasSecondFactor(db: Db, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('second_factors')
    .select('user_id')
    .where('user_id', '=', userId)
    .where('enabled_at', 'is not', null)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Starts (or restarts) enrolment: a new secret, pending until confirmed. Returns the secret; resolves
 * with undefined when the user already has an enabled second factor (it is never replaced so).
 */
export async function startEnrolment(
  db: Db,
  key: Buffer,
  userId: number,
  now: number,
): Promise<string | undefined> {
  const secret = newTotpSecret();
  return db.transaction().execute(async (trx) => {
    if (await hasSecondFactor(trx, userId)) return undefined;
    await trx.deleteFrom('second_factors').where('user_id', '=', userId).execute();
    await trx
      .insertInto('second_factors')
      .values({
        user_id: userId,
        secret_encrypted: encryptSecret(key, secret),
        created_at: now,
        enabled_at: null,
        last_used_step: null,
      })
      .execute();
    return secret;
  });
}

/**
 * Accepts a TOTP code for the user at `now`: the step must be newer than the last one used, and it
 * becomes the last one in the same statement, so two requests with one code cannot both pass.
 * `pending` selects the not-yet-confirmed secret instead of the enabled one. Returns whether accepted.
 */
export async function useTotp(
  db: Db,
  key: Buffer,
  userId: number,
  code: string,
  now: number,
  pending = false,
): Promise<boolean> {
  const factor = await findSecondFactor(db, key, userId);
  if (factor === undefined || factor.enabled === pending) return false;
  const step = verifyTotp(factor.secret, code, now, factor.lastUsedStep);
  if (step === undefined) return false;
  const result = await db
    .updateTable('second_factors')
    .set({ last_used_step: step })
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Spends one of the user's unused recovery codes. Returns whether the code was one. */
export async function useRecoveryCode(db: Db, userId: number, code: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('recovery_codes')
    .set({ used_at: now })
    .where('id', '=', recoveryHash(code))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Replaces every recovery code of the user with new ones. Returns the new codes (shown once). */
export async function replaceRecoveryCodes(db: Db, userId: number): Promise<string[]> {
  const codes = newRecoveryCodes();
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  await db
    .insertInto('recovery_codes')
    .values(codes.map((code) => ({ id: recoveryHash(code), user_id: userId, used_at: null })))
    .execute();
  return codes;
}

/** Marks the user's pending second factor enabled. Resolves when written. */
export async function enableSecondFactor(db: Db, userId: number, now: number): Promise<void> {
  await db.updateTable('second_factors').set({ enabled_at: now }).where('user_id', '=', userId).execute();
}

/** Removes the user's second factor, its recovery codes and pending second steps. */
export async function deleteSecondFactor(db: Db, userId: number): Promise<void> {
  await db.deleteFrom('second_factors').where('user_id', '=', userId).execute();
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  await db.deleteFrom('second_factor_challenges').where('user_id', '=', userId).execute();
}

/** A pending second step. */
export interface ChallengeRow {
  readonly id: string;
  readonly userId: number;
  readonly expiresAt: number;
  readonly attempts: number;
}

/** Writes a pending second step (its id is the token's hash). Resolves when written. */
export async function insertChallenge(
  db: Db,
  row: ChallengeRow & { createdAt: number; ip: string; userAgent: string | null },
): Promise<void> {
  // Stale steps of the user go here, so the table holds only a few rows per user.
  await db
    .deleteFrom('second_factor_challenges')
    .where('user_id', '=', row.userId)
    .where('expires_at', '<=', row.createdAt)
    .execute();
  await db
    .insertInto('second_factor_challenges')
    .values({
      id: row.id,
      user_id: row.userId,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
      attempts: row.attempts,
      ip: row.ip,
      user_agent: row.userAgent,
    })
    .execute();
}

/** The pending step a token hash names, or undefined. */
export async function findChallenge(db: Db, id: string): Promise<ChallengeRow | undefined> {
  const row = await db
    .selectFrom('second_factor_challenges')
    .select(['id', 'user_id', 'expires_at', 'attempts'])
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { id: row.id, userId: row.user_id, expiresAt: Number(row.expires_at), attempts: row.attempts };
}

/** Counts one wrong code against a pending step. Resolves when written. */
export async function countChallengeAttempt(db: Db, id: string, attempts: number): Promise<void> {
  await db.updateTable('second_factor_challenges').set({ attempts }).where('id', '=', id).execute();
}

/** Removes every pending step of the user (a password change: the old password's steps must not finish). */
export async function deleteChallengesOfUser(db: Db, userId: number): Promise<void> {
  await db.deleteFrom('second_factor_challenges').where('user_id', '=', userId).execute();
}

/** Removes a pending step (used, spent or expired). */
export async function deleteChallenge(db: Db, id: string): Promise<void> {
  await db.deleteFrom('second_factor_challenges').where('id', '=', id).execute();
}

/**
 * Whether an administrator must enrol before using the API: the user is an administrator, the
 * institute requires a second factor of administrators, and the user has none enabled.
 */
export async function mustEnrol(
  db: Db,
  user: { id: number; instituteId: number | null; role: string },
): Promise<boolean> {
  if (user.role !== 'administrator' || user.instituteId === null) return false;
  const institute = await db
    .selectFrom('institutes')
    .select('require_second_factor_for_administrators')
    .where('id', '=', user.instituteId)
    .executeTakeFirst();
  if (institute === undefined || !institute.require_second_factor_for_administrators) return false;
  return !(await hasSecondFactor(db, user.id));
}
