import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

/** One key's admitted requests since the last flush, in the window its process believes current. */
export interface RateLimitHits {
  readonly key: string;
  /** When the window began, as the flushing process knows it (epoch ms). */
  readonly windowStart: number;
  /** Requests admitted since the last flush; 0 only refreshes the shared count. */
  readonly hits: number;
}

/** A key's shared count after a flush: the window every process now uses, and all hits in it. */
export interface RateLimitTotal {
  readonly key: string;
  readonly windowStart: number;
  readonly hits: number;
}

/**
 * Adds `rows` to the shared counts in one statement and returns each key's count afterwards. A key
 * whose stored window is over by the flushing process's window start begins again there with the
 * new hits; otherwise the hits join the stored window (whose start the caller then adopts). Both
 * databases read the SET expressions against the row as it was. Returns one total per row (order
 * unspecified); throws what the database throws.
 */
export async function addRateLimitHits(
  db: Db,
  rows: readonly RateLimitHits[],
  windowMs: number,
): Promise<RateLimitTotal[]> {
  if (rows.length === 0) return [];
  const expired = sql<boolean>`room_rate_limits.window_start + ${windowMs} <= excluded.window_start`;
  const found = await db
    .insertInto('room_rate_limits')
    .values(rows.map((row) => ({ key: row.key, window_start: row.windowStart, hits: row.hits })))
    .onConflict((conflict) =>
      conflict.column('key').doUpdateSet({
        hits: sql<number>`case when ${expired} then excluded.hits else room_rate_limits.hits + excluded.hits end`,
        window_start: sql<number>`case when ${expired} then excluded.window_start else room_rate_limits.window_start end`,
      }),
    )
    .returning(['key', 'window_start', 'hits'])
    .execute();
  return found.map((row) => ({
    key: row.key,
    windowStart: Number(row.window_start),
    hits: Number(row.hits),
  }));
}

/** Deletes the counts of windows that began before `before`. Returns how many rows went. */
export async function purgeRateLimitWindows(db: Db, before: number): Promise<number> {
  const result = await db
    .deleteFrom('room_rate_limits')
    .where('window_start', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
