import crypto from 'node:crypto';

/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP), as authenticator apps compute them:
 * HMAC-SHA1, a 30-second step, 6 digits. Pure: every function takes the time it works with.
 */

/** Seconds per step. */
export const TOTP_STEP_SECONDS = 30;
/** Digits of a code. */
export const TOTP_DIGITS = 6;
/** Steps accepted either side of the current one, for a phone's clock that is a little off. */
export const TOTP_DRIFT_STEPS = 1;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** Encodes bytes as RFC 4648 base32 without padding (authenticator apps take it so). Returns the text. */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * Decodes RFC 4648 base32, ignoring case, spaces and padding (people type secrets in groups).
 * Returns the bytes; throws on any other character.
 */
export function base32Decode(text: string): Buffer {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  const out: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const char of clean) {
    const value = BASE32.indexOf(char);
    if (value < 0) throw new Error('not base32');
    buffer = (buffer << 5) | value;
    bits += 5;
    if (bits >= 8) {
      out.push((buffer >>> (bits - 8)) & 255);
      bits -= 8;
    }
    buffer &= (1 << bits) - 1;
  }
  return Buffer.from(out);
}

/** A new random secret: 20 bytes (160 bits, the size of an SHA-1 output, as RFC 4226 advises), base32. */
export function newTotpSecret(): string {
  return base32Encode(crypto.randomBytes(20));
}

/** The step a moment (epoch milliseconds) falls in. Returns the step number. */
export function totpStep(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP_STEP_SECONDS);
}

/**
 * The code of one step for a raw key (RFC 4226 dynamic truncation). `digits` is 6 in use; the RFC's
 * test vectors use 8. `algorithm` is SHA-1 in use; the vectors also cover SHA-256 and SHA-512.
 * Returns the code with leading zeros; throws nothing.
 */
export function hotp(
  key: Uint8Array,
  step: number,
  digits = TOTP_DIGITS,
  algorithm: 'sha1' | 'sha256' | 'sha512' = 'sha1',
): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = crypto.createHmac(algorithm, key).update(counter).digest();
  const offset = (mac[mac.length - 1] ?? 0) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/**
 * Checks a code typed for a base32 secret at `nowMs`, within TOTP_DRIFT_STEPS either side. A step at
 * or before `lastUsedStep` is never accepted, so a code seen over a shoulder cannot be used again.
 * Returns the step that matched (store it as the new last used step), or undefined.
 */
export function verifyTotp(
  secret: string,
  code: string,
  nowMs: number,
  lastUsedStep: number | null,
): number | undefined {
  const typed = code.replace(/\s/g, '');
  if (!new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(typed)) return undefined;
  const key = base32Decode(secret);
  const current = totpStep(nowMs);
  let matched: number | undefined;
  // Every candidate is computed and compared in constant time, so timing does not say which matched.
  for (let step = current - TOTP_DRIFT_STEPS; step <= current + TOTP_DRIFT_STEPS; step++) {
    const same = crypto.timingSafeEqual(Buffer.from(hotp(key, step)), Buffer.from(typed));
    if (same && matched === undefined && (lastUsedStep === null || step > lastUsedStep)) matched = step;
  }
  return matched;
}

/** The `otpauth://` address an authenticator app reads from a QR code. Returns it. */
export function otpauthUri(email: string, secret: string): string {
  // The issuer prefix keeps its colon (as the key-URI format shows it); the email is escaped.
  const label = `Invigil:${encodeURIComponent(email)}`;
  return `otpauth://totp/${label}?secret=${secret}&issuer=Invigil`;
}
