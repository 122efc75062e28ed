import crypto from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Db } from '../../db/database.ts';
import type { ServerKeys } from '../../security/keys.ts';
import type { DataKeyring, KeyringSnapshot } from '../../storage/keyring.ts';
import type { DataKey, KeyRef } from '../../storage/sealed.ts';
import type { Clock } from '../clock.ts';
import { DataKeyUnavailable } from '../errors.ts';
import {
  allDataKeys,
  findDataKey,
  insertDataKey,
  instituteIds,
  newestDataKey,
  rewrapDataKey,
  type WrappedDataKey,
} from './data-keys.repository.ts';

/**
 * Per-institute data keys (docs/storage.md, "Encryption at rest"): 32 random bytes per institute
 * and version, kept in `data_keys` wrapped (AES-256-GCM) under a key derived from the server key,
 * and held unwrapped in memory once used. The newest version seals new objects; every version keeps
 * opening what it sealed.
 */
export interface DataKeysService extends DataKeyring {
  /**
   * Starts a new data-key version for `instituteId` (every institute when undefined): new objects are
   * sealed with it, older ones keep opening with theirs. Nothing stored is touched. Returns the new
   * versions.
   */
  rotate(instituteId?: number): Promise<KeyRef[]>;
  /**
   * Wraps every data key under the current server key that is still wrapped under `previous` (the
   * server keys of the INVIGIL_SECRET or server.key in use before), without touching any object.
   * Returns how many were re-wrapped, how many were already under the current key, and those that
   * open under neither (left as they are).
   */
  rewrap(previous: ServerKeys): Promise<{ rewrapped: number; unchanged: number; unreadable: KeyRef[] }>;
  /**
   * Every data key of `instituteId` (its current one made when it has none), for a child process
   * that reads and writes that institute's objects. Returns them; throws DataKeyUnavailable.
   */
  snapshot(instituteId: number): Promise<KeyringSnapshot>;
}

/** How long the newest version of an institute is taken from memory before it is read again. */
const CURRENT_TRUST_MS = 60_000;
const KEY_BYTES = 32;
const WRAP_FORMAT = 'v1';

/** The key that wraps data keys: derived from the server's encryption key, for this purpose only. */
export function wrappingKeyOf(keys: ServerKeys): Buffer {
  return Buffer.from(
    crypto.hkdfSync('sha256', keys.encryption, Buffer.alloc(0), 'invigil:data-key-wrapping', 32),
  );
}

/** The additional data binding a wrapped key to its institute and version (no swapping rows). */
function bindingOf(instituteId: number, version: number): Buffer {
  return Buffer.from(`invigil:data-key:${instituteId}:${version}`, 'utf8');
}

/** Wraps a data key. Returns `v1:` and base64 of nonce, tag and ciphertext. */
export function wrapDataKey(wrapping: Buffer, instituteId: number, version: number, key: Buffer): string {
  const nonce = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', wrapping, nonce);
  cipher.setAAD(bindingOf(instituteId, version));
  const body = Buffer.concat([cipher.update(key), cipher.final()]);
  return `${WRAP_FORMAT}:${Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64')}`;
}

/** Unwraps a data key. Returns it, or undefined when it does not open under `wrapping`. */
export function unwrapDataKey(wrapping: Buffer, stored: WrappedDataKey): Buffer | undefined {
  if (!stored.wrapped.startsWith(`${WRAP_FORMAT}:`)) return undefined;
  const raw = Buffer.from(stored.wrapped.slice(WRAP_FORMAT.length + 1), 'base64');
  if (raw.length !== 12 + 16 + KEY_BYTES) return undefined;
  try {
    const decipher = crypto.createDecipheriv('aes-256-gcm', wrapping, raw.subarray(0, 12));
    decipher.setAAD(bindingOf(stored.instituteId, stored.version));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
  } catch {
    return undefined;
  }
}

/**
 * Builds the data keys over the database, the clock and the server keys. Returns the service;
 * building it touches nothing.
 */
export function createDataKeysService(deps: { db: Db; clock: Clock; keys: ServerKeys }): DataKeysService {
  const { db, clock } = deps;
  const wrapping = wrappingKeyOf(deps.keys);
  /** Unwrapped keys by `institute:version`. */
  const opened = new Map<string, Buffer>();
  /** The newest key of an institute, while trusted (a lookup in flight is shared). */
  const current = new Map<number, { key: Promise<DataKey>; until: number }>();

  function unwrapped(stored: WrappedDataKey): Buffer {
    const name = `${stored.instituteId}:${stored.version}`;
    const known = opened.get(name);
    if (known !== undefined) return known;
    const key = unwrapDataKey(wrapping, stored);
    if (key === undefined) {
      throw new DataKeyUnavailable(
        stored.instituteId,
        stored.version,
        'it does not open with this server key (INVIGIL_SECRET or DATA_DIR/server.key changed without `invigil keys rewrap`?)',
      );
    }
    opened.set(name, key);
    return key;
  }

  /** Records version `version` of a fresh key for the institute. Returns true when it was recorded. */
  function addVersion(instituteId: number, version: number): Promise<boolean> {
    const key = crypto.randomBytes(KEY_BYTES);
    const wrapped = wrapDataKey(wrapping, instituteId, version, key);
    return insertDataKey(db, { instituteId, version, wrapped }, clock.now());
  }

  async function newest(instituteId: number): Promise<DataKey> {
    let stored = await newestDataKey(db, instituteId);
    if (stored === undefined) {
      // Two processes may make version 1 at once: the first recorded is the one both use.
      await addVersion(instituteId, 1);
      stored = await newestDataKey(db, instituteId);
      if (stored === undefined) throw new DataKeyUnavailable(instituteId, 1, 'it could not be recorded');
    }
    return { institute: instituteId, version: stored.version, key: unwrapped(stored) };
  }

  const service: DataKeysService = {
    sealing(instituteId) {
      const now = performance.now();
      const known = current.get(instituteId);
      if (known !== undefined && known.until > now) return known.key;
      const key = newest(instituteId);
      current.set(instituteId, { key, until: now + CURRENT_TRUST_MS });
      key.catch(() => current.delete(instituteId));
      return key;
    },

    async opening(instituteId, version) {
      const known = opened.get(`${instituteId}:${version}`);
      if (known !== undefined) return known;
      const stored = await findDataKey(db, instituteId, version);
      if (stored === undefined)
        throw new DataKeyUnavailable(instituteId, version, 'there is no such data key');
      return unwrapped(stored);
    },

    async rotate(instituteId) {
      const targets = instituteId === undefined ? await instituteIds(db) : [instituteId];
      const made: KeyRef[] = [];
      for (const target of targets) {
        // A concurrent rotation may take the next version: the one after it is tried once more.
        for (let attempt = 0; attempt < 3; attempt += 1) {
          const version = ((await newestDataKey(db, target))?.version ?? 0) + 1;
          if (await addVersion(target, version)) {
            made.push({ institute: target, version });
            break;
          }
        }
        current.delete(target);
      }
      return made;
    },

    async rewrap(previous) {
      const before = wrappingKeyOf(previous);
      let rewrapped = 0;
      let unchanged = 0;
      const unreadable: KeyRef[] = [];
      for (const stored of await allDataKeys(db)) {
        if (unwrapDataKey(wrapping, stored) !== undefined) {
          unchanged += 1;
          continue;
        }
        const key = unwrapDataKey(before, stored);
        if (key === undefined) {
          unreadable.push({ institute: stored.instituteId, version: stored.version });
          continue;
        }
        const wrapped = wrapDataKey(wrapping, stored.instituteId, stored.version, key);
        if (await rewrapDataKey(db, stored, wrapped)) rewrapped += 1;
        else unchanged += 1;
      }
      opened.clear();
      current.clear();
      return { rewrapped, unchanged, unreadable };
    },

    async snapshot(instituteId) {
      const sealing = await service.sealing(instituteId);
      const keys: Record<string, string> = {};
      for (let version = 1; version <= sealing.version; version += 1) {
        keys[String(version)] = (await service.opening(instituteId, version)).toString('base64');
      }
      return { institute: instituteId, current: sealing.version, keys };
    },
  };
  return service;
}
