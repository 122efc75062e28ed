/**
 * The shared room rate limiter (src/domain/room/rate-limiter.ts) with two instances on one database
 * standing for two processes, flushed by hand so every step is deterministic. The same limit
 * through real processes and HTTP: test/cli/topology.test.ts; through HTTP on one process:
 * test/http/room/room.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import { type Database } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createRateLimiter, type RateLimiter } from '../../src/domain/room/rate-limiter.ts';
import { purgeRateLimitWindows } from '../../src/domain/room/rate-limits.repository.ts';
import {
  createTestDatabase,
  DIALECTS,
  TestClock,
  type TestDatabase,
  openTestDatabase,
} from '../helpers/server.ts';

const MAX = 10;
const WINDOW_MS = 60_000;

for (const dialect of DIALECTS) {
  describe(`room rate limiter shared through the database [${dialect}]`, () => {
    let target: TestDatabase;
    let database: Database;
    const clock = new TestClock(1_800_000_000_000);
    let key = 0;

    before(async () => {
      target = await createTestDatabase(dialect);
      database = openTestDatabase(target);
      await migrateToLatest(database);
    });

    after(async () => {
      await database.destroy();
      await target.drop();
    });

    beforeEach(() => {
      key += 1;
    });

    /** A limiter as one process has it (never started: the test flushes by hand). */
    function limiterFor(db = database.db): RateLimiter {
      return createRateLimiter({
        db,
        clock,
        logger: pino({ level: 'silent' }),
        max: MAX,
        windowMs: WINDOW_MS,
        flushMs: 1000,
        purgeMs: 60_000,
      });
    }

    /** How many of `count` hits of `name` the limiter admits. */
    function admitted(limiter: RateLimiter, name: string, count: number): number {
      let allowed = 0;
      for (let index = 0; index < count; index += 1) if (limiter.hit(name).allowed) allowed += 1;
      return allowed;
    }

    it('admits exactly the limit in one process, then refuses until the window ends', () => {
      const one = limiterFor();
      const name = `k${key}`;
      assert.equal(admitted(one, name, MAX + 5), MAX);
      const refused = one.hit(name);
      assert.deepEqual(
        { ...refused, resetMs: refused.resetMs > 0 },
        { allowed: false, limit: MAX, remaining: 0, resetMs: true },
      );
      clock.current += WINDOW_MS;
      assert.equal(one.hit(name).allowed, true, 'a new window');
    });

    it("adds another process's flushed hits to what it decides on", async () => {
      const a = limiterFor();
      const b = limiterFor();
      const name = `k${key}`;
      assert.equal(admitted(a, name, 6), 6);
      await a.flush();
      assert.equal(admitted(b, name, 3), 3);
      await b.flush(); // B now knows 9 are used
      assert.equal(admitted(b, name, 5), 1);
      await b.flush();
      await a.flush(); // A reads 10
      assert.equal(a.hit(name).allowed, false);
      assert.equal(b.hit(name).allowed, false);
    });

    it('lets a key over the limit by at most what the other process admitted since its last flush', async () => {
      const a = limiterFor();
      const b = limiterFor();
      const name = `k${key}`;
      assert.equal(admitted(a, name, 4), 4);
      assert.equal(admitted(b, name, 4), 4);
      await a.flush();
      await b.flush();
      await a.flush(); // both have read 8 of 10
      // Without a flush in between, each admits the 2 it believes are left: 12 in all, never 20.
      assert.equal(admitted(a, name, 5) + admitted(b, name, 5), 4);
      await a.flush();
      await b.flush();
      await a.flush();
      assert.equal(admitted(a, name, 3) + admitted(b, name, 3), 0);
    });

    it('keeps deciding, exactly, from its own counts when a flush fails', async () => {
      // A second handle on the same database, closed: every statement through it fails.
      const closed = openTestDatabase(target);
      await closed.destroy();
      const offline = limiterFor(closed.db);
      const name = `k${key}`;
      assert.equal(admitted(offline, name, 4), 4);
      await offline.flush();
      assert.equal(admitted(offline, name, 20), MAX - 4, 'the 4 unsent hits still count');
      await offline.stop();
    });

    it('purges the rows of windows that are over, and only those', async () => {
      const a = limiterFor();
      const name = `k${key}`;
      a.hit(name);
      await a.flush();
      const count = () =>
        database.db.selectFrom('room_rate_limits').select('hits').where('key', '=', name).executeTakeFirst();
      assert.equal((await count())?.hits, 1);
      assert.equal(await purgeRateLimitWindows(database.db, clock.now() - WINDOW_MS), 0, 'its window runs');
      clock.current += 2 * WINDOW_MS;
      assert.ok((await purgeRateLimitWindows(database.db, clock.now() - WINDOW_MS)) >= 1);
      assert.equal(await count(), undefined);
    });
  });
}
