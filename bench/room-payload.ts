import crypto from 'node:crypto';

/**
 * The bytes each simulated recorder sends as every chunk: a WebM (EBML) header, so a recording's
 * first chunk passes the type check, then a fixed pattern. The load generator sends them and the
 * benchmark checks the stored chunks against their SHA-256.
 */
export function chunkPayload(size: number, seed: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let index = 0; index < size; index += 1) bytes[index] = (index * 31 + seed) & 0xff;
  bytes.set([0x1a, 0x45, 0xdf, 0xa3], 0);
  return bytes;
}

/** The seed of each source's payload. */
export const PAYLOAD_SEEDS = { webcam: 1, screen: 2 } as const;

/** SHA-256 (hex) of a buffer. */
export function sha256(bytes: Buffer): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}
