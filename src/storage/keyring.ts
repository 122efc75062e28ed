import { DataKeyUnavailable } from '../domain/errors.ts';
import type { DataKey } from './sealed.ts';

/**
 * The data keys the sealing storage needs (docs/storage.md, "Encryption at rest"). The domain's
 * data-keys service implements it over the database (keys wrapped under the server key); the
 * assembling child process is handed the few it needs (keyringOf).
 */
export interface DataKeyring {
  /**
   * The key new objects of `institute` are sealed with: its newest version, made on first use.
   * Returns it (from memory after the first call); throws DataKeyUnavailable when it cannot be
   * unwrapped with this server key.
   */
  sealing(institute: number): Promise<DataKey>;
  /**
   * The key of `version` of `institute`. Returns it (from memory after the first call); throws
   * DataKeyUnavailable when there is no such key or it cannot be unwrapped with this server key.
   */
  opening(institute: number, version: number): Promise<Buffer>;
}

/** Data keys as they travel to a child process (base64 keys, on its stdin: never on disk or argv). */
export interface KeyringSnapshot {
  readonly institute: number;
  /** The version new objects are sealed with. */
  readonly current: number;
  /** Every version's key, base64, by version. */
  readonly keys: Readonly<Record<string, string>>;
}

/**
 * A keyring of the keys a snapshot holds: one institute's, nothing else. Returns it; its lookups
 * throw DataKeyUnavailable for anything the snapshot lacks.
 */
export function keyringOf(snapshot: KeyringSnapshot): DataKeyring {
  const find = (institute: number, version: number): Buffer => {
    const key = institute === snapshot.institute ? snapshot.keys[String(version)] : undefined;
    if (key === undefined) throw new DataKeyUnavailable(institute, version, 'not handed to this process');
    return Buffer.from(key, 'base64');
  };
  return {
    sealing: (institute) =>
      Promise.resolve().then(() => ({
        institute,
        version: snapshot.current,
        key: find(institute, snapshot.current),
      })),
    opening: (institute, version) => Promise.resolve().then(() => find(institute, version)),
  };
}

/** A keyring with no keys (a process that only removes objects). Every lookup throws DataKeyUnavailable. */
export const NO_KEYS: DataKeyring = {
  sealing: (institute) =>
    Promise.reject(new DataKeyUnavailable(institute, 0, 'this process holds no data keys')),
  opening: (institute, version) =>
    Promise.reject(new DataKeyUnavailable(institute, version, 'this process holds no data keys')),
};
