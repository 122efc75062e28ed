/**
 * The sign-in throttle under parallel requests (docs/security.md, "H2"): an attempt is reserved in
 * the database before its password or code is checked, so requests sent all at once get no more
 * checks than requests sent one after another.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  openTestDatabase,
  DIALECTS,
  startTestServer,
  TestClock,
  type TestServer,
} from '../../helpers/server.ts';
import { releaseThrottle, reserveThrottle } from '../../../src/domain/staff-auth/staff-auth.repository.ts';
import { GOOD_PASSWORD, postJson, signIn, staffUser } from './support.ts';

const PARALLEL = 60;

/** How many answers had each status, e.g. `{ 403: 3, 429: 57 }`. */
function statusCounts(statuses: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

for (const dialect of DIALECTS) {
  describe(`the sign-in throttle under ${PARALLEL} parallel attempts [${dialect}]`, () => {
    const clock = new TestClock(Date.UTC(2026, 10, 23, 9, 0, 0));
    let server: TestServer;
    let instituteId: number;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      instituteId = await server.institute();
    });
    after(() => server.close());
    beforeEach(async () => {
      await server.app.database.db.deleteFrom('sign_in_throttles').execute();
    });

    const parallel = async (attempt: () => Promise<{ status: number }>) =>
      statusCounts((await Promise.all(Array.from({ length: PARALLEL }, attempt))).map((a) => a.status));

    it('POST /auth/sign_in checks 3 wrong passwords for one account and answers 429 to the rest', async () => {
      const user = await staffUser(server, instituteId);
      const counts = await parallel(() =>
        postJson(server, '/auth/sign_in', { email: user.email, password: 'not the password at all' }),
      );
      assert.deepEqual(counts, { 403: 3, 429: PARALLEL - 3 });
    });

    it('POST /auth/sign_in checks 20 wrong passwords from one address spread over many accounts', async () => {
      let n = 0;
      const counts = await parallel(() => {
        n += 1;
        return postJson(server, '/auth/sign_in', { email: `spray${n}@example.org`, password: 'guess' });
      });
      assert.deepEqual(counts, { 403: 20, 429: PARALLEL - 20 });
    });

    it('POST /users/sign_in.json shares the limit', async () => {
      const user = await staffUser(server, instituteId);
      const counts = await parallel(() =>
        postJson(server, '/users/sign_in.json', { user: { email: user.email, password: 'wrong password' } }),
      );
      assert.deepEqual(counts, { 403: 3, 429: PARALLEL - 3 });
    });

    it('POST /auth/second_factor/disable checks 3 wrong passwords of a signed-in user', async () => {
      const user = await staffUser(server, instituteId);
      const browser = await signIn(server, user.email);
      const counts = await parallel(() =>
        postJson(
          server,
          '/auth/second_factor/disable',
          { password: 'wrong password' },
          { cookie: browser.cookie, 'x-csrf-token': browser.csrf },
        ),
      );
      assert.deepEqual(counts, { 422: 3, 429: PARALLEL - 3 });
    });

    it('does not count a successful sign-in against the address', async () => {
      const user = await staffUser(server, instituteId);
      for (let i = 0; i < 25; i += 1) await signIn(server, user.email);
      const row = await server.app.database.db
        .selectFrom('sign_in_throttles')
        .select('failures')
        .where('key', '=', 'address:127.0.0.1')
        .executeTakeFirst();
      assert.equal(row?.failures ?? 0, 0);
      assert.equal(
        (await postJson(server, '/auth/sign_in', { email: user.email, password: GOOD_PASSWORD })).status,
        200,
      );
    });

    it('reserves atomically across connections, as two processes would', async () => {
      const other = openTestDatabase(server.database);
      try {
        const now = clock.now();
        const dbs = [server.app.database.db, other.db];
        const reserved = await Promise.all(
          Array.from({ length: PARALLEL }, (_, i) =>
            reserveThrottle(dbs[i % 2] ?? other.db, 'account:race@example.org', now, 3),
          ),
        );
        assert.equal(reserved.filter(Boolean).length, 3);
        // A released reservation (a right password) gives its attempt back and lifts the block.
        await releaseThrottle(other.db, 'account:race@example.org', now, 3);
        assert.equal(await reserveThrottle(server.app.database.db, 'account:race@example.org', now, 3), true);
        assert.equal(
          await reserveThrottle(server.app.database.db, 'account:race@example.org', now, 3),
          false,
        );
      } finally {
        await other.destroy();
      }
    });
  });
}
