import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The server's own key material. One root key is read from INVIGIL_SECRET or from DATA_DIR/server.key
 * (generated once, mode 0600); purpose-bound subkeys are derived from it so that encrypting stored
 * secrets and signing file addresses never share a key.
 */
export interface ServerKeys {
  /** AES-256-GCM key for secrets kept at rest (users' secret_key, LTI shared secrets). */
  readonly encryption: Buffer;
  /** HMAC key for expiring file addresses. */
  readonly urlSigning: Buffer;
}

function derive(root: Buffer, purpose: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', root, Buffer.alloc(0), `invigil:${purpose}`, 32));
}

/**
 * Loads the root key: from `secret` when given, else from `<dataDir>/server.key`, creating that file
 * with a fresh random key on first use. Returns the derived subkeys; throws when the key file is unreadable.
 */
export function loadServerKeys(secret: string | undefined, dataDir: string): ServerKeys {
  let root: Buffer;
  if (secret !== undefined) {
    root = Buffer.from(secret, 'utf8');
  } else {
    const file = path.join(dataDir, 'server.key');
    fs.mkdirSync(dataDir, { recursive: true });
    try {
      // 'wx' fails when the file exists, so two processes starting together keep the first key.
      fs.writeFileSync(file, `${crypto.randomBytes(32).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    root = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'hex');
    if (root.length < 32) throw new Error(`${file} does not hold a 32-byte hex key`);
  }
  return Object.freeze({ encryption: derive(root, 'encryption'), urlSigning: derive(root, 'url-signing') });
}

const VERSION = 'v1';

/** Encrypts a secret for storage. Returns `v1:` followed by base64 of iv, tag and ciphertext. */
export function encryptSecret(key: Buffer, plain: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
}

/** Decrypts what encryptSecret produced. Throws when the value was altered or another key wrote it. */
export function decryptSecret(key: Buffer, stored: string): string {
  if (!stored.startsWith(`${VERSION}:`)) throw new Error('unknown secret format');
  const raw = Buffer.from(stored.slice(VERSION.length + 1), 'base64');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

/** The stored form of an API token: its SHA-256, hex. Tokens are random, so no salt or stretching is needed. */
export function hashToken(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new credential pair: a 32-hex-digit API token and a 48-hex-digit signing secret. */
export function newCredentials(): { apiToken: string; secretKey: string } {
  return {
    apiToken: crypto.randomBytes(16).toString('hex'),
    secretKey: crypto.randomBytes(24).toString('hex'),
  };
}
