import { createSecretKey, type KeyObject } from 'node:crypto';
import { ProtectionProfileAeadAes128Gcm, ProtectionProfileAes128CmHmacSha1_80, SrtpSession } from 'werift';

/** The session keys werift's SRTP ciphers (CipherAesGcm, CipherAesCtr) keep as Buffers. */
const KEY_FIELDS = [
  'srtpSessionKey',
  'srtcpSessionKey',
  'srtpSessionAuthTag',
  'srtcpSessionAuthTag',
] as const;
/** The methods that use them, once per packet. */
const PACKET_METHODS = ['encryptRtp', 'decryptRtp', 'encryptRTCP', 'decryptRTCP'] as const;

type Cipher = Partial<Record<(typeof KEY_FIELDS)[number], Buffer | KeyObject>>;

let patched: boolean | undefined;

function toKeyObjects(cipher: Cipher): void {
  for (const field of KEY_FIELDS) {
    const key = cipher[field];
    if (Buffer.isBuffer(key)) cipher[field] = createSecretKey(key);
  }
}

/**
 * Makes werift's SRTP ciphers hand node:crypto KeyObjects instead of Buffers. werift creates a new
 * cipher (and, for AES-CM, an HMAC) for every RTP packet it encrypts or decrypts, passing the session
 * key as a Buffer; Node then asks whether that key is a KeyObject or a CryptoKey by throwing and
 * catching, which costs several times the encryption itself (measured on Node 24: about 23 µs a
 * packet with a Buffer, 6 µs with a KeyObject). The two cipher classes are not exported: they are
 * found through an SrtpSession of each protection profile, and their per-packet methods wrapped to
 * turn the instance's session keys into KeyObjects on first use (both node:crypto calls werift
 * makes with them accept either). Idempotent. Returns false, changing nothing, when werift's ciphers
 * no longer look as expected.
 */
export function useKeyObjectsForSrtp(): boolean {
  if (patched !== undefined) return patched;
  const key = Buffer.alloc(16, 1);
  const salt = Buffer.alloc(14, 2);
  const keys = { localMasterKey: key, localMasterSalt: salt, remoteMasterKey: key, remoteMasterSalt: salt };
  const prototypes = [ProtectionProfileAeadAes128Gcm, ProtectionProfileAes128CmHmacSha1_80].map(
    (profile) => Object.getPrototypeOf(new SrtpSession({ keys, profile }).localContext.cipher) as object,
  );
  const fits = prototypes.every((prototype) =>
    PACKET_METHODS.every((method) => typeof Reflect.get(prototype, method) === 'function'),
  );
  patched = fits;
  if (!fits) return false;
  for (const prototype of prototypes) {
    for (const method of PACKET_METHODS) {
      const original = Reflect.get(prototype, method) as (this: Cipher, ...args: unknown[]) => unknown;
      Reflect.set(prototype, method, function (this: Cipher, ...args: unknown[]): unknown {
        toKeyObjects(this);
        return original.apply(this, args);
      });
    }
  }
  return true;
}
