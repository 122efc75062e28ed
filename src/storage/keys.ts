import crypto from 'node:crypto';

/** A storage key: two hex characters (a fan-out folder), a slash, then 32 hex characters. */
const KEY = /^[0-9a-f]{2}\/[0-9a-f]{32}$/;

/**
 * A fresh storage key of 128 random bits, prefixed by its first two hex characters so no folder
 * (or S3 key prefix) grows without bound. Returns it; client input never takes part.
 */
export function newStorageKey(): string {
  const id = crypto.randomBytes(16).toString('hex');
  return `${id.slice(0, 2)}/${id}`;
}

/** True when `key` has the shape newStorageKey makes (anything else never names an object). */
export function isStorageKey(key: string): boolean {
  return KEY.test(key);
}
