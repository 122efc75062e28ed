/**
 * A fixed-window request limit shared by every process on one database, without a database round
 * trip per request. Each process decides on its own, from what it knows: the shared count as of its
 * last flush plus the requests it admitted since. Every `flushMs` it adds its new counts to the
 * shared table in one statement (per 500 keys), which answers the new shared counts, including the
 * other processes' flushed requests. See docs/architecture.md ("Several processes, one service")
 * for how far over the limit that can let a key go.
 */
import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import { isDatabaseUnavailable } from '../../db/unavailable.ts';
import type { Clock } from '../clock.ts';
import {
  addRateLimitHits,
  purgeRateLimitWindows,
  type RateLimitHits,
  type RateLimitTotal,
} from './rate-limits.repository.ts';

/** Keys per flush statement: well inside both databases' limits on bound parameters. */
const FLUSH_BATCH = 500;

export interface RateLimiterOptions {
  readonly db: Db;
  /** Measures the windows. Real time: the limit is about how fast requests arrive. */
  readonly clock: Clock;
  readonly logger: Logger;
  /** Requests admitted per key and window. */
  readonly max: number;
  readonly windowMs: number;
  /** How often counts go to the shared table (and the other processes' come back). */
  readonly flushMs: number;
  /** How often rows of windows long over are deleted. */
  readonly purgeMs: number;
}

/** What the limiter decided about one request. */
export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  /** Requests the key may still make in this window, as far as this process knows. */
  readonly remaining: number;
  /** Milliseconds until the key's window ends. */
  readonly resetMs: number;
}

export interface RateLimiter {
  /** Counts a request of `key` if the limit allows it. Returns the decision; never throws, never waits. */
  hit(key: string): RateDecision;
  /** Starts the periodic flush and purge. Calling it again does nothing. */
  start(): void;
  /** Stops them and sends what is still unflushed. Resolves when done; never rejects. */
  stop(): Promise<void>;
  /** Sends the counts now (tests; stop). Resolves when the shared counts are read back; never rejects. */
  flush(): Promise<void>;
}

/** One key as this process knows it. */
interface Entry {
  windowStart: number;
  /** All hits in the window as of this process's last flush (its own flushed ones included). */
  shared: number;
  /** Hits this process admitted and has not sent yet. */
  pending: number;
  /** Hits in a flush statement that has not answered yet. */
  sending: number;
}

/**
 * Builds a limiter over the `room_rate_limits` table. It counts in memory and shares through the
 * database; while the database is away it keeps counting locally and sends the counts once it is
 * back. Returns it, not yet started.
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { db, clock, logger, max, windowMs } = options;
  const entries = new Map<string, Entry>();
  let flushing: Promise<void> | undefined;
  let flushTimer: NodeJS.Timeout | undefined;
  let purgeTimer: NodeJS.Timeout | undefined;
  let failing = false;

  function current(key: string, now: number): Entry {
    const known = entries.get(key);
    if (known !== undefined && now < known.windowStart + windowMs) return known;
    const fresh: Entry = { windowStart: now, shared: 0, pending: 0, sending: 0 };
    entries.set(key, fresh);
    return fresh;
  }

  /** Applies the shared totals to the entries that were sent, unless a new window replaced one. */
  function absorb(sent: Map<string, Entry>, totals: readonly RateLimitTotal[]): void {
    for (const total of totals) {
      const entry = sent.get(total.key);
      if (entry === undefined) continue;
      entry.shared = total.hits;
      entry.windowStart = total.windowStart;
    }
  }

  async function send(): Promise<void> {
    const now = clock.now();
    const sent = new Map<string, Entry>();
    const rows: RateLimitHits[] = [];
    for (const [key, entry] of entries) {
      if (now >= entry.windowStart + windowMs) {
        entries.delete(key);
        continue;
      }
      // A key already at the limit stays refused until its window ends, whatever others add.
      if (entry.pending === 0 && entry.shared >= max) continue;
      entry.sending = entry.pending;
      entry.pending = 0;
      sent.set(key, entry);
      rows.push({ key, windowStart: entry.windowStart, hits: entry.sending });
    }
    try {
      for (let index = 0; index < rows.length; index += FLUSH_BATCH) {
        const batch = rows.slice(index, index + FLUSH_BATCH);
        absorb(sent, await addRateLimitHits(db, batch, windowMs));
        for (const row of batch) {
          const entry = sent.get(row.key);
          if (entry !== undefined) entry.sending = 0;
        }
      }
      if (failing) logger.info('room rate-limit counts shared again');
      failing = false;
    } catch (error) {
      // Kept for the next flush: the local decisions still count them meanwhile.
      for (const entry of sent.values()) {
        entry.pending += entry.sending;
        entry.sending = 0;
      }
      if (!failing) {
        const level = isDatabaseUnavailable(error) ? 'warn' : 'error';
        logger[level]({ err: error }, 'room rate-limit counts not shared; counting locally until they are');
      }
      failing = true;
    }
  }

  function flush(): Promise<void> {
    // One flush at a time: a slow database must not pile statements up.
    flushing ??= send().finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  async function purge(): Promise<void> {
    try {
      const removed = await purgeRateLimitWindows(db, clock.now() - windowMs);
      if (removed > 0) logger.debug({ removed }, 'room rate-limit windows purged');
    } catch (error) {
      if (!isDatabaseUnavailable(error)) logger.error({ err: error }, 'room rate-limit purge failed');
    }
  }

  return {
    hit(key) {
      const now = clock.now();
      const entry = current(key, now);
      const used = entry.shared + entry.pending + entry.sending;
      const resetMs = Math.max(entry.windowStart + windowMs - now, 0);
      if (used >= max) return { allowed: false, limit: max, remaining: 0, resetMs };
      entry.pending += 1;
      return { allowed: true, limit: max, remaining: max - used - 1, resetMs };
    },
    start() {
      if (flushTimer !== undefined) return;
      flushTimer = setInterval(() => void flush(), options.flushMs);
      purgeTimer = setInterval(() => void purge(), options.purgeMs);
      flushTimer.unref();
      purgeTimer.unref();
    },
    async stop() {
      clearInterval(flushTimer);
      clearInterval(purgeTimer);
      await flushing;
      await flush();
    },
    flush,
  };
}
