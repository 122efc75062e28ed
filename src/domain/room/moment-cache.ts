import type { Db } from '../../db/database.ts';
import { writeGeneration } from '../../db/write-generation.ts';

/**
 * How long the room keeps what it read of an exam and its institute. Every candidate's page polls
 * its view every 20 s and reports its events as they happen, and each of those requests read the
 * same exam, instructions and institute settings again: at thousands of candidates that was most of
 * the database's work (docs/performance.md, "Step 19, second pass"). A change made through this
 * process is seen at once (db/write-generation.ts); one made through another serving process of the
 * same database within this long.
 */
export const MOMENT_MS = 1_000;

/** Beyond this many keys, what is kept is dropped (all of it: a moment later it is read again). */
const MAX_KEYS = 10_000;

interface Kept {
  readonly generation: number;
  readonly until: number;
  readonly value: Promise<unknown>;
}

/** Facts kept for a moment: `get` answers from what is kept, or loads. */
export interface MomentCache {
  /**
   * The value kept under `key` when it was loaded less than MOMENT_MS ago and nothing watched was
   * written since, else what `load` gives (kept, unless it fails). Rejects as `load` does.
   */
  get<T>(key: string, load: () => Promise<T>): Promise<T>;
}

/** A cache over `db`; a database built without the write generation keeps nothing. Throws nothing. */
export function createMomentCache(db: Db): MomentCache {
  const kept = new Map<string, Kept>();
  return {
    get<T>(key: string, load: () => Promise<T>): Promise<T> {
      const generation = writeGeneration(db);
      if (generation === undefined) return load();
      const now = performance.now();
      const known = kept.get(key);
      if (known !== undefined && known.generation === generation && known.until > now) {
        return known.value as Promise<T>;
      }
      const value = load();
      if (kept.size >= MAX_KEYS) kept.clear();
      kept.set(key, { generation, until: now + MOMENT_MS, value });
      // A failed read is never answered from the cache.
      value.catch(() => {
        if (kept.get(key)?.value === value) kept.delete(key);
      });
      return value;
    },
  };
}
