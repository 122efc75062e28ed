import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isStorageKey, newStorageKey } from './keys.ts';
import { Measure } from './measure.ts';
import { type Storage, StorageMissing, type StoredObject } from './storage.ts';

/**
 * Files on the local disk under `root`. A write goes to a temporary file in the same file system,
 * is flushed, then renamed into place, so a crash never leaves half a file under a real key.
 */
export function createLocalStorage(root: string): Storage {
  const tmp = path.join(root, '.tmp');
  fs.mkdirSync(tmp, { recursive: true });

  function pathOf(key: string): string {
    if (!isStorageKey(key)) throw new StorageMissing(`not a storage key: ${key}`);
    return path.join(root, key);
  }

  return {
    async put(body, options) {
      const key = newStorageKey();
      const temporary = path.join(tmp, `${key.slice(3)}.part`);
      const measure = new Measure(options.maxBytes ?? Number.POSITIVE_INFINITY);
      try {
        // `flush` syncs the file to disk before it closes, so the rename below publishes whole data.
        await pipeline(
          body,
          measure,
          fs.createWriteStream(temporary, { flags: 'wx', mode: 0o600, flush: true }),
        );
        await fs.promises.mkdir(path.dirname(pathOf(key)), { recursive: true });
        await fs.promises.rename(temporary, pathOf(key));
      } catch (error) {
        await fs.promises.rm(temporary, { force: true });
        throw error;
      }
      const stored: StoredObject = { key, size: measure.size, sha256: measure.hash.digest('hex') };
      return stored;
    },

    async get(key) {
      const file = pathOf(key);
      try {
        await fs.promises.access(file, fs.constants.R_OK);
      } catch {
        throw new StorageMissing(`no object ${key}`);
      }
      return fs.createReadStream(file);
    },

    async delete(key) {
      await fs.promises.rm(pathOf(key), { force: true });
    },
  };
}
