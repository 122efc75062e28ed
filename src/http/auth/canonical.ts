import crypto from 'node:crypto';

/**
 * The exact message a client signs: every parameter except `signature`, as `name=value`, sorted by
 * name in byte order, joined by `?`. Values are the Ruby-style texts of request-params.ts, unencoded.
 * Returns that string.
 */
export function canonicalMessage(signing: Readonly<Record<string, string>>): string {
  return Object.keys(signing)
    .filter((name) => name !== 'signature')
    .sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')))
    .map((name) => `${name}=${signing[name]}`)
    .join('?');
}

/** HMAC-SHA256 of `message` under `secretKey`, as 64 lower-case hex digits. */
export function signMessage(secretKey: string, message: string): string {
  return crypto.createHmac('sha256', secretKey).update(message, 'utf8').digest('hex');
}

/** Compares a sent signature with the expected one in constant time, ignoring hex case. */
export function signaturesMatch(sent: string, expected: string): boolean {
  if (!/^[0-9a-fA-F]{64}$/.test(sent)) return false;
  return crypto.timingSafeEqual(Buffer.from(sent.toLowerCase(), 'latin1'), Buffer.from(expected, 'latin1'));
}
