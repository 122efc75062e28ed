import crypto from 'node:crypto';

/**
 * Staff passwords, hashed with scrypt (memory-hard, in node:crypto). A stored hash is one text
 * naming its own scheme and parameters, so the parameters can be raised later without touching the
 * rows already written: `scrypt$1$<log2 N>$<r>$<p>$<salt, base64url>$<hash, base64url>`. A hash made
 * with older parameters still verifies; `needsRehash` says when to write a new one at sign-in.
 */

/** The parameters new hashes are made with: N = 2^15, r = 8, p = 1 (32 MiB, tens of milliseconds). */
const CURRENT = { logN: 15, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const KEY_BYTES = 32;
const VERSION = '1';

/** Passwords shorter than this are refused when set (characters, after nothing is trimmed). */
export const MIN_PASSWORD_LENGTH = 12;
/** Passwords longer than this are refused: hashing a megabyte of text on request is a cheap attack. */
export const MAX_PASSWORD_LENGTH = 1024;

interface Parameters {
  readonly logN: number;
  readonly r: number;
  readonly p: number;
}

function derive(password: string, salt: Buffer, params: Parameters): Promise<Buffer> {
  const N = 2 ** params.logN;
  // scrypt needs about 128·N·r bytes; the default cap (32 MiB) is exactly our N = 2^15, so allow more.
  const maxmem = 256 * N * params.r;
  return new Promise((resolve, reject) => {
    crypto.scrypt(
      password.normalize('NFC'),
      salt,
      KEY_BYTES,
      { N, r: params.r, p: params.p, maxmem },
      (error, key) => (error === null ? resolve(key) : reject(error)),
    );
  });
}

/**
 * Why a password cannot be set, as a sentence for the client, or undefined when it is acceptable
 * (MIN_PASSWORD_LENGTH to MAX_PASSWORD_LENGTH characters).
 */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) return `is too short (minimum is ${MIN_PASSWORD_LENGTH} characters)`;
  if (length > MAX_PASSWORD_LENGTH) return `is too long (maximum is ${MAX_PASSWORD_LENGTH} characters)`;
  return undefined;
}

/** Hashes a password with a fresh random salt. Returns the encoded hash; throws nothing expected. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(SALT_BYTES);
  const key = await derive(password, salt, CURRENT);
  return [
    'scrypt',
    VERSION,
    CURRENT.logN,
    CURRENT.r,
    CURRENT.p,
    salt.toString('base64url'),
    key.toString('base64url'),
  ].join('$');
}

/** The parts of an encoded hash, or undefined when it is not one this module wrote. */
function decode(stored: string): { params: Parameters; salt: Buffer; key: Buffer } | undefined {
  const parts = stored.split('$');
  if (parts.length !== 7 || parts[0] !== 'scrypt' || parts[1] !== VERSION) return undefined;
  const [logN, r, p] = parts.slice(2, 5).map(Number);
  if (logN === undefined || r === undefined || p === undefined) return undefined;
  // Bounds keep a tampered row from asking for gigabytes of memory.
  if (!Number.isInteger(logN) || logN < 10 || logN > 20) return undefined;
  if (!Number.isInteger(r) || r < 1 || r > 32 || !Number.isInteger(p) || p < 1 || p > 16) return undefined;
  const salt = Buffer.from(parts[5] ?? '', 'base64url');
  const key = Buffer.from(parts[6] ?? '', 'base64url');
  if (salt.length === 0 || key.length !== KEY_BYTES) return undefined;
  return { params: { logN, r, p }, salt, key };
}

/**
 * True when `password` matches the encoded hash (compared in constant time). A hash this module
 * cannot read never matches. Returns the answer; throws nothing expected.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const decoded = decode(stored);
  if (decoded === undefined) return false;
  const key = await derive(password, decoded.salt, decoded.params);
  return crypto.timingSafeEqual(key, decoded.key);
}

/** True when the hash was made with parameters other than the current ones (rehash at next sign-in). */
export function needsRehash(stored: string): boolean {
  const decoded = decode(stored);
  return (
    decoded === undefined ||
    decoded.params.logN !== CURRENT.logN ||
    decoded.params.r !== CURRENT.r ||
    decoded.params.p !== CURRENT.p
  );
}

let dummy: Promise<string> | undefined;

/**
 * Spends the time of one verification against a hash nobody's password matches, so an unknown
 * email, a user without a password and a deactivated user take as long to refuse as a wrong
 * password. Resolves to false.
 */
export async function verifyAgainstNothing(password: string): Promise<false> {
  dummy ??= hashPassword(crypto.randomBytes(16).toString('hex'));
  await verifyPassword(password, await dummy);
  return false;
}
