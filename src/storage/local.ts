import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isStorageKey, newStorageKey } from './keys.ts';
import { Measure } from './measure.ts';
import { type ObjectStore, StorageMissing, type StoredObject } from './storage.ts';

/**
 * How a temporary file written in one call is opened: created (never an existing one), and, where
 * the system has O_DSYNC, with every write returning only once its data is on the disk, which spares
 * a separate sync call (one trip to the thread pool fewer per chunk).
 */
const DSYNC: number = fs.constants.O_DSYNC ?? 0;
const WRITE_ONCE = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | DSYNC;

/**
 * Writes `pieces` to a new file `file` with one vectored write, synced before it calls back
 * (O_DSYNC, else fdatasync), and closes it. Plain callbacks: a chunk-heavy load pays for every
 * stream, promise and handle object on the main thread. Calls back with the first failure (the file
 * may be left behind) or null.
 */
function writeWhole(
  file: string,
  pieces: readonly Buffer[],
  size: number,
  done: (error: Error | null) => void,
): void {
  fs.open(file, WRITE_ONCE, 0o600, (openError, fd) => {
    if (openError !== null) {
      done(openError);
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
      done(error);
    };
    fs.writev(fd, pieces, (writeError, written) => {
      if (writeError !== null) closeAfter(writeError);
      else if (written !== size) closeAfter(new Error(`short write: ${written} of ${size} bytes`));
      else if (DSYNC !== 0) closeAfter(null);
      else fs.fdatasync(fd, closeAfter);
    });
  });
}

/** A temporary file untouched this long belongs to no write in progress (a killed process left it). */
export const PART_STALE_MS = 60 * 60 * 1000;

/** Temporary files are named `<key without its folder>.part`; the sweep touches nothing else. */
const PART_FILE = /^[0-9a-f]+\.part$/;

/**
 * Removes the temporary `.part` files under `root` (its `.tmp` folder) last written more than
 * `staleMs` before `now`, which a process killed mid-write leaves behind. Several processes may share
 * the folder, so a young file (another process's write in progress) is left alone. Returns how many
 * files were removed; never throws.
 */
export async function sweepStaleParts(root: string, now: number, staleMs = PART_STALE_MS): Promise<number> {
  const tmp = path.join(root, '.tmp');
  let names: string[];
  try {
    names = await fs.promises.readdir(tmp);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!PART_FILE.test(name)) continue;
    const file = path.join(tmp, name);
    try {
      const stat = await fs.promises.stat(file);
      if (!stat.isFile() || now - stat.mtimeMs <= staleMs) continue;
      await fs.promises.rm(file, { force: true });
      removed += 1;
    } catch {
      // Gone already (another process's sweep), or unreadable: the next start tries again.
    }
  }
  return removed;
}

/**
 * Files on the local disk under `root`, stored as they are given (the sealing storage above encrypts
 * them first). A write goes to a temporary file in the same file system, is flushed, then renamed
 * into place, so a crash never leaves half a file under a real key.
 */
export function createLocalStorage(root: string): ObjectStore {
  const tmp = path.join(root, '.tmp');
  fs.mkdirSync(tmp, { recursive: true });

  /** Fan-out folders known to exist: a chunk-heavy load would otherwise ask the disk on every write. */
  const folders = new Set<string>();

  function pathOf(key: string): string {
    if (!isStorageKey(key)) throw new StorageMissing(`not a storage key: ${key}`);
    return path.join(root, key);
  }

  /**
   * Renames a finished temporary file into place, creating its fan-out folder the first time (and
   * again if an operator's clean-up removed it). Calls back with the failure or null.
   */
  function publish(
    temporary: string,
    folder: string,
    file: string,
    done: (error: Error | null) => void,
  ): void {
    const rename = (again: boolean): void => {
      fs.rename(temporary, file, (error) => {
        if (error === null || error.code !== 'ENOENT' || again) {
          done(error);
          return;
        }
        folders.delete(folder);
        makeFolder(() => rename(true));
      });
    };
    const makeFolder = (then: () => void): void => {
      fs.mkdir(folder, { recursive: true }, (error) => {
        if (error !== null) {
          done(error);
          return;
        }
        folders.add(folder);
        then();
      });
    };
    if (folders.has(folder)) rename(false);
    else makeFolder(() => rename(false));
  }

  /** Where a key's file lives, and its fan-out folder (for a key made here, so already checked). */
  function placeOf(key: string): { folder: string; file: string } {
    const folder = `${root}${path.sep}${key.slice(0, 2)}`;
    return { folder, file: `${folder}${path.sep}${key.slice(3)}` };
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
        const { folder, file } = placeOf(key);
        await new Promise<void>((resolve, reject) => {
          publish(temporary, folder, file, (error) => (error === null ? resolve() : reject(error)));
        });
      } catch (error) {
        await fs.promises.rm(temporary, { force: true });
        throw error;
      }
      const stored: StoredObject = { key, size: measure.size, sha256: measure.hash.digest('hex') };
      return stored;
    },

    putBytes(pieces, options) {
      const key = newStorageKey();
      const temporary = `${tmp}${path.sep}${key.slice(3)}.part`;
      const { folder, file } = placeOf(key);
      let size = 0;
      for (const piece of pieces) size += piece.length;
      return new Promise<StoredObject>((resolve, reject) => {
        let sha256 = '';
        const fail = (error: Error): void => {
          fs.rm(temporary, { force: true }, () => reject(error));
        };
        // The write runs in the thread pool while the bytes are hashed here (below, before any of
        // these callbacks can run).
        writeWhole(temporary, pieces, size, (writeError) => {
          if (writeError !== null) {
            fail(writeError);
            return;
          }
          publish(temporary, folder, file, (error) => {
            if (error === null) resolve({ key, size, sha256 });
            else fail(error);
          });
        });
        if (options?.digest === false) return;
        const hash = crypto.createHash('sha256');
        for (const piece of pieces) hash.update(piece);
        sha256 = hash.digest('hex');
      });
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

    async getRange(key, range) {
      const file = pathOf(key);
      try {
        await fs.promises.access(file, fs.constants.R_OK);
      } catch {
        throw new StorageMissing(`no object ${key}`);
      }
      return fs.createReadStream(file, { start: range.start, end: range.end });
    },

    async size(key) {
      try {
        return (await fs.promises.stat(pathOf(key))).size;
      } catch {
        throw new StorageMissing(`no object ${key}`);
      }
    },

    async delete(key) {
      await fs.promises.rm(pathOf(key), { force: true });
    },
  };
}
