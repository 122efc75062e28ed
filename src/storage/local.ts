import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isStorageKey, newStorageKey } from './keys.ts';
import { Measure } from './measure.ts';
import { type Storage, StorageMissing, type StoredObject } from './storage.ts';

/**
 * How a temporary file written in one call is opened: created (never an existing one), and, where
 * the system has O_DSYNC, with every write returning only once its data is on the disk, which spares
 * a separate sync call (one trip to the thread pool fewer per chunk).
 */
const DSYNC: number = fs.constants.O_DSYNC ?? 0;
const WRITE_ONCE = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | DSYNC;

/**
 * Writes `pieces` to a new file `file` with one vectored write, synced before it resolves (O_DSYNC,
 * else fdatasync), and closes it. Plain callbacks: a chunk-heavy load pays for every stream, promise
 * and handle object on the main thread. Rejects with the first failure (the file may be left behind).
 */
function writeWhole(file: string, pieces: readonly Buffer[], size: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(file, WRITE_ONCE, 0o600, (openError, fd) => {
      if (openError !== null) {
        reject(openError);
        return;
      }
      // Closed here rather than in the thread pool: closing a file whose data is already synced
      // is a quick system call, cheaper than a trip to the pool and back (the open, the write and
      // the rename, which can wait on the disk, stay there).
      const closeAfter = (failure: Error | null): void => {
        let error = failure;
        try {
          fs.closeSync(fd);
        } catch (closeError) {
          error ??= closeError as Error;
        }
        if (error === null) resolve();
        else reject(error);
      };
      fs.writev(fd, pieces, (writeError, written) => {
        if (writeError !== null) closeAfter(writeError);
        else if (written !== size) closeAfter(new Error(`short write: ${written} of ${size} bytes`));
        else if (DSYNC !== 0) closeAfter(null);
        else fs.fdatasync(fd, closeAfter);
      });
    });
  });
}

/**
 * Files on the local disk under `root`. A write goes to a temporary file in the same file system,
 * is flushed, then renamed into place, so a crash never leaves half a file under a real key.
 */
export function createLocalStorage(root: string): Storage {
  const tmp = path.join(root, '.tmp');
  fs.mkdirSync(tmp, { recursive: true });

  /** Fan-out folders known to exist: a chunk-heavy load would otherwise ask the disk on every write. */
  const folders = new Set<string>();

  function pathOf(key: string): string {
    if (!isStorageKey(key)) throw new StorageMissing(`not a storage key: ${key}`);
    return path.join(root, key);
  }

  /** Renames a finished temporary file into place, creating its fan-out folder the first time. */
  async function publish(temporary: string, file: string): Promise<void> {
    const folder = path.dirname(file);
    if (!folders.has(folder)) {
      await fs.promises.mkdir(folder, { recursive: true });
      folders.add(folder);
    }
    try {
      await fs.promises.rename(temporary, file);
    } catch (error) {
      // The folder was removed behind our back (an operator's clean-up): made again, tried once more.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      await fs.promises.mkdir(folder, { recursive: true });
      await fs.promises.rename(temporary, file);
    }
  }

  return {
    async put(body, options) {
      const key = newStorageKey();
      const temporary = path.join(tmp, `${key.slice(3)}.part`);
      const measure = new Measure(
        options.maxBytes ?? Number.POSITIVE_INFINITY,
        options.headBytes ?? 0,
        options.inspect,
      );
      try {
        // `flush` syncs the file to disk before it closes, so the rename below publishes whole data.
        await pipeline(
          body,
          measure,
          fs.createWriteStream(temporary, { flags: 'wx', mode: 0o600, flush: true }),
        );
        await publish(temporary, pathOf(key));
      } catch (error) {
        await fs.promises.rm(temporary, { force: true });
        throw error;
      }
      const stored: StoredObject = { key, size: measure.size, sha256: measure.hash.digest('hex') };
      return stored;
    },

    async putBytes(pieces) {
      const key = newStorageKey();
      const temporary = path.join(tmp, `${key.slice(3)}.part`);
      let size = 0;
      for (const piece of pieces) size += piece.length;
      // The write runs in the thread pool while the bytes are hashed here.
      const writing = writeWhole(temporary, pieces, size);
      const hash = crypto.createHash('sha256');
      for (const piece of pieces) hash.update(piece);
      const sha256 = hash.digest('hex');
      try {
        await writing;
        await publish(temporary, pathOf(key));
      } catch (error) {
        await fs.promises.rm(temporary, { force: true });
        throw error;
      }
      const stored: StoredObject = { key, size, sha256 };
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
