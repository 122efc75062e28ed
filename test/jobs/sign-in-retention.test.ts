import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { purgeSignInHistory } from '../../src/jobs/sign-in-retention.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { GOOD_PASSWORD, postJson, signIn, staffUser } from '../http/staff/support.ts';

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

for (const dialect of DIALECTS) {
  describe(`sweep of the audit log and sign-in leftovers [${dialect}]`, () => {
    const clock = new TestClock(Date.now());
    let server: TestServer;

    before(async () => {
      server = await startTestServer(dialect, { clock });
    });
    after(async () => {
      await server.close();
    });

    const count = async (
      table: 'audit_events' | 'staff_sessions' | 'one_time_links' | 'sign_in_throttles',
    ) => {
      const row = await server.app.database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    const sweep = (now: number, batchSize?: number) =>
      purgeSignInHistory(server.app.database.db, server.app.database.dialect, {
        now,
        auditRetentionDays: 365,
        ...(batchSize === undefined ? {} : { batchSize }),
      });

    it('keeps what is live, then deletes ended sessions, spent links, stale throttles and old events', async () => {
      const start = clock.now();
      const instituteId = await server.institute();
      const user = await staffUser(server, instituteId);
      const invited = await server.user(instituteId, 'teacher');
      const other = await server.user(instituteId, 'teacher');

      // A failed and a successful sign-in: two audit events, one session, and the address's throttle
      // row (the success cleared the account's).
      const refused = await postJson(server, '/auth/sign_in', {
        email: user.email,
        password: 'wrong password, long',
      });
      assert.equal(refused.status, 403);
      await signIn(server, user.email, GOOD_PASSWORD);
      // One link redeemed (used), one waiting (unused, valid 7 days).
      const { url } = await server.app.services.staffAuth.invite(invited.id);
      const token = new URL(url).searchParams.get('token') ?? '';
      const accepted = await postJson(server, '/auth/invitations/accept', { token, password: GOOD_PASSWORD });
      assert.equal(accepted.status, 204, accepted.text);
      await server.app.services.staffAuth.invite(other.id);

      const events = await count('audit_events');
      assert.ok(events >= 2);
      assert.equal(await count('staff_sessions'), 1);
      assert.equal(await count('one_time_links'), 2);
      assert.equal(await count('sign_in_throttles'), 1);

      // Ten minutes on: only the used link goes.
      assert.deepEqual(await sweep(start + 10 * MINUTE), {
        auditEvents: 0,
        staffSessions: 0,
        oneTimeLinks: 1,
        throttles: 0,
      });
      assert.equal(await count('staff_sessions'), 1);
      assert.equal(await count('one_time_links'), 1);

      // A day and more on: the idle session and the forgotten failures go, the invitation stays.
      assert.deepEqual(await sweep(start + 25 * HOUR, 1), {
        auditEvents: 0,
        staffSessions: 1,
        oneTimeLinks: 0,
        throttles: 1,
      });
      assert.equal(await count('one_time_links'), 1);
      assert.equal(await count('audit_events'), events);

      // Past 7 days the invitation has expired; the events stay for a year.
      assert.equal((await sweep(start + 8 * DAY)).oneTimeLinks, 1);
      assert.equal((await sweep(start + 364 * DAY)).auditEvents, 0);
      assert.equal(await count('audit_events'), events);

      // Older than AUDIT_RETENTION_DAYS: every event goes, in batches of 1 too.
      assert.deepEqual(await sweep(start + 366 * DAY, 1), {
        auditEvents: events,
        staffSessions: 0,
        oneTimeLinks: 0,
        throttles: 0,
      });
      assert.equal(await count('audit_events'), 0);
    });

    it('keeps a throttle that still blocks, however old its last failure', async () => {
      const now = clock.now();
      await server.app.database.db
        .insertInto('sign_in_throttles')
        .values({
          key: 'account:blocked@example.org',
          failures: 9,
          last_failure_at: now - 2 * DAY,
          blocked_until: now + HOUR,
        })
        .execute();
      assert.equal((await sweep(now)).throttles, 0);
      assert.equal((await sweep(now + 2 * HOUR)).throttles, 1);
    });

    it('refuses a batch size that is not a whole number of at least 1', async () => {
      await assert.rejects(sweep(clock.now(), 0), TypeError);
    });
  });
}
