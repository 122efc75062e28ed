import crypto from 'node:crypto';

/** A storage key: two hex characters (a fan-out folder), a slash, then 32 hex characters. */
const KEY = /^[0-9a-f]{2}\/[0-9a-f]{32}$/;

/** Bytes of one key. */
const KEY_BYTES = 16;
/**
 * Random bytes drawn from the system's generator at once and handed out 16 at a time: a chunk-heavy
 * load makes a key per chunk, and one call per key cost more than the key (as `randomUUID` keeps
 * a cache of its own). Every byte is used once.
 */
const pool = Buffer.alloc(KEY_BYTES * 256);
let offset = pool.length;

/**
 * A fresh storage key of 128 random bits, prefixed by its first two hex characters so no folder
 * (or S3 key prefix) grows without bound. Returns it; client input never takes part.
 */
export function newStorageKey(): string {
  if (offset + KEY_BYTES > pool.length) {
    crypto.randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('hex', offset, offset + KEY_BYTES);
  offset += KEY_BYTES;
  return `${id.slice(0, 2)}/${id}`;
}

/** True when `key` has the shape newStorageKey makes (anything else never names an object). */
export function isStorageKey(key: string): boolean {
  return KEY.test(key);
}
