import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { base32Decode, hotp, totpStep } from '../../../src/security/totp.ts';
import { NOT_AUTHORIZED } from '../../helpers/answers.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { consoleV3, GOOD_PASSWORD, postJson, signIn, staffUser } from '../staff/support.ts';

type Json = Record<string, unknown>;

const AGENT = 'AuditTest/1.0 (the browser a test pretends to be)';

/** The `audit_events` of a 200 list answer; fails the test otherwise. */
function eventsIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const list = (answer.json as { audit_events?: unknown }).audit_events;
  assert.ok(Array.isArray(list), answer.text);
  return list as Json[];
}

for (const dialect of DIALECTS) {
  describe(`audit log [${dialect}]`, () => {
    const clock = new TestClock(Date.now());
    let server: TestServer;
    let instituteA: number;
    let instituteB: number;
    let adminA: Awaited<ReturnType<typeof staffUser>>;
    let adminB: Awaited<ReturnType<typeof staffUser>>;
    let superuser: Awaited<ReturnType<TestServer['user']>>;

    /** Every event as a superuser reads it (newest first), filtered by `filter` when given. */
    const allEvents = async (filter?: Json): Promise<Json[]> =>
      eventsIn(
        await superuser.client.v3(
          'GET',
          '/audit_events',
          filter === undefined ? {} : { filter: JSON.stringify(filter) },
        ),
      );

    /** Every row of the table, to look for values no answer would show. */
    const rawRows = () => server.app.database.db.selectFrom('audit_events').selectAll().execute();

    before(async () => {
      server = await startTestServer(dialect, { clock });
      instituteA = await server.institute();
      instituteB = await server.institute();
      adminA = await staffUser(server, instituteA, 'administrator');
      adminB = await staffUser(server, instituteB, 'administrator');
      superuser = await server.user(instituteA, 'superuser');
    });
    after(async () => {
      await server.close();
    });
    beforeEach(async () => {
      await server.app.database.db.deleteFrom('sign_in_throttles').execute();
    });

    it('records a sign-in, a refused sign-in (with the email tried, never the password) and a sign-out', async () => {
      const user = await staffUser(server, instituteA, 'teacher');
      const wrong = 'not the password at all, clearly';
      const refused = await postJson(
        server,
        '/auth/sign_in',
        { email: user.email, password: wrong },
        {
          'user-agent': AGENT,
        },
      );
      assert.equal(refused.status, 403);
      const unknown = await postJson(server, '/auth/sign_in', {
        email: 'nobody-here@example.org',
        password: wrong,
      });
      assert.equal(unknown.status, 403);
      const browser = await signIn(server, user.email, GOOD_PASSWORD, { 'user-agent': AGENT });
      const out = await httpRequest({
        url: `${server.baseUrl}/auth/sign_out`,
        method: 'POST',
        headers: { cookie: browser.cookie, 'x-csrf-token': browser.csrf, 'user-agent': AGENT },
      });
      assert.equal(out.status, 204);

      const mine = await allEvents({ user_id: { eq: user.id } });
      assert.deepEqual(
        mine.map((event) => [event.action, event.status]),
        [
          ['sign_out', 204],
          ['sign_in', 200],
          ['sign_in_failed', 403],
        ],
      );
      for (const event of mine) {
        assert.equal(event.institute_id, instituteA);
        assert.equal(event.ip, '127.0.0.1');
        assert.equal(event.user_agent, AGENT);
        assert.equal(event.target_type, null);
        assert.equal(typeof event.created_at, 'string');
        assert.equal(event.created_at, new Date(clock.now()).toISOString());
      }
      assert.equal(mine[2]?.email, user.email);

      // An email no account has is recorded in no institute: only a superuser sees it.
      const stranger = await allEvents({ email: { eq: 'nobody-here@example.org' } });
      assert.equal(stranger.length, 1);
      assert.deepEqual(
        [stranger[0]?.action, stranger[0]?.institute_id, stranger[0]?.user_id],
        ['sign_in_failed', null, null],
      );
      const passwords = (await rawRows()).filter((row) => JSON.stringify(row).includes(wrong));
      assert.deepEqual(passwords, []);
      const adminView = eventsIn(await adminA.client.v3('GET', '/audit_events'));
      assert.ok(!adminView.some((event) => event.email === 'nobody-here@example.org'));
    });

    it('records a password set through an invitation link, and sign-out everywhere', async () => {
      const invited = await server.user(instituteA, 'proctor');
      const { url } = await server.app.services.staffAuth.invite(invited.id);
      const token = new URL(url).searchParams.get('token') ?? '';
      const accepted = await postJson(server, '/auth/invitations/accept', { token, password: GOOD_PASSWORD });
      assert.equal(accepted.status, 204, accepted.text);
      const { email } = await server.app.database.db
        .selectFrom('users')
        .select('email')
        .where('id', '=', invited.id)
        .executeTakeFirstOrThrow();
      const browser = await signIn(server, email);
      const everywhere = await httpRequest({
        url: `${server.baseUrl}/auth/sign_out_everywhere`,
        method: 'POST',
        headers: { cookie: browser.cookie, 'x-csrf-token': browser.csrf },
      });
      assert.equal(everywhere.status, 204);
      const events = await allEvents({ user_id: { eq: invited.id } });
      assert.deepEqual(
        events.map((event) => [event.action, event.status, event.institute_id]),
        [
          ['sign_out_everywhere', 204, instituteA],
          ['sign_in', 200, instituteA],
          ['password_changed', 204, instituteA],
        ],
      );
      const tokens = (await rawRows()).filter((row) => JSON.stringify(row).includes(token));
      assert.deepEqual(tokens, []);
    });

    it('records a sign-in with a second factor once, when the second step opens the session, and each change of the second factor', async () => {
      const user = await staffUser(server, instituteA, 'teacher');
      const enrolling = await signIn(server, user.email);
      const headers = { cookie: enrolling.cookie, 'x-csrf-token': enrolling.csrf };
      const started = await postJson(server, '/auth/second_factor/start', {}, headers);
      assert.equal(started.status, 200, started.text);
      const { secret } = started.json as { secret: string };
      const codeNow = () => hotp(base32Decode(secret), totpStep(clock.now()));
      const confirmed = await postJson(server, '/auth/second_factor/confirm', { code: codeNow() }, headers);
      assert.equal(confirmed.status, 200, confirmed.text);
      clock.current += 30 * 1000;

      const password = await postJson(server, '/auth/sign_in', {
        email: user.email,
        password: GOOD_PASSWORD,
      });
      assert.equal(password.status, 202, password.text);
      const pending = String((password.json as Json).pending_token);
      assert.deepEqual(
        (await allEvents({ user_id: { eq: user.id } })).map((event) => event.action),
        ['second_factor_enabled', 'sign_in'],
        'the password step alone is no sign-in yet (newest first)',
      );
      const second = await postJson(server, '/auth/sign_in/second_factor', {
        pending_token: pending,
        code: codeNow(),
      });
      assert.equal(second.status, 200, second.text);
      assert.deepEqual(
        (await allEvents({ user_id: { eq: user.id } })).map((event) => [event.action, event.status]),
        [
          ['sign_in', 200],
          ['second_factor_enabled', 200],
          ['sign_in', 200],
        ],
      );

      clock.current += 30 * 1000;
      const regenerated = await postJson(
        server,
        '/auth/second_factor/recovery_codes',
        { code: codeNow() },
        headers,
      );
      assert.equal(regenerated.status, 200, regenerated.text);
      const disabled = await postJson(
        server,
        '/auth/second_factor/disable',
        { password: GOOD_PASSWORD },
        headers,
      );
      assert.equal(disabled.status, 204, disabled.text);
      assert.deepEqual(
        (await allEvents({ user_id: { eq: user.id } }))
          .slice(0, 2)
          .map((event) => [event.action, event.status]),
        [
          ['second_factor_disabled', 204],
          ['recovery_codes_regenerated', 200],
        ],
      );
    });

    it('records a signed V3 write and a cookie V3 write with who, what, target and status, and no parameter value', async () => {
      const teacher = await staffUser(server, instituteA, 'teacher');
      const secretName = `Exam named only in the request ${Date.now()}`;
      const created = await teacher.client.v3(
        'POST',
        '/exams',
        { name: secretName, type: 'classroom', duration_minutes: 60 },
        { headers: { 'user-agent': AGENT } },
      );
      assert.equal(created.status, 201, created.text);
      const examId = (created.json as { exam: { id: number } }).exam.id;

      const browser = await signIn(server, teacher.email);
      const renamed = await consoleV3(server, browser, 'PATCH', `/exams/${examId}`, {
        body: { name: `${secretName} (renamed)` },
        csrf: browser.csrf,
      });
      assert.equal(renamed.status, 200, renamed.text);

      const writes = await allEvents({ user_id: { eq: teacher.id }, action: { like: '/api/v3/' } });
      assert.deepEqual(
        writes.map((event) => [event.action, event.target_type, event.target_id, event.status]),
        [
          ['PATCH /api/v3/exams/:id', 'exams', examId, 200],
          ['POST /api/v3/exams', null, null, 201],
        ],
      );
      assert.equal(writes[1]?.user_agent, AGENT);
      for (const event of writes) {
        assert.equal(event.institute_id, instituteA);
        assert.equal(event.ip, '127.0.0.1');
        assert.equal(event.email, null);
      }
      const leaks = (await rawRows()).filter((row) => JSON.stringify(row).includes(secretName));
      assert.deepEqual(leaks, [], 'a parameter value reached the audit log');
      const signatures = (await rawRows()).filter((row) => JSON.stringify(row).includes(browser.csrf));
      assert.deepEqual(signatures, []);
    });

    it('records a signed V2 write, and nothing for reads, refusals or failures', async () => {
      const teacher = await server.user(instituteA, 'teacher');
      const before = (await rawRows()).length;
      assert.equal((await teacher.client.v3('GET', '/exams')).status, 200);
      assert.equal((await teacher.client.v2('GET', '/exams')).status, 200);
      assert.equal((await teacher.client.v3('GET', '/audit_events')).status, 403);
      // A write refused (422) or naming nothing (404) changed nothing.
      assert.equal((await teacher.client.v3('POST', '/exams', { name: '' })).status, 422);
      assert.equal((await teacher.client.v3('DELETE', '/exams/:id', { id: 987654321 })).status, 404);
      assert.equal((await rawRows()).length, before, 'a read or a failed write was recorded');

      const created = await teacher.client.v2('POST', '/exams', {
        name: 'V2',
        duration: 60,
        type: 'classroom',
      });
      assert.equal(created.status, 201, created.text);
      const events = await allEvents({ user_id: { eq: teacher.id } });
      assert.deepEqual(
        events.map((event) => [event.action, event.status]),
        [['POST /api/exams', 201]],
      );
    });

    it('lists with filter, sort and pages, and X-Pagination headers', async () => {
      const teacher = await server.user(instituteB, 'teacher');
      for (let index = 0; index < 3; index += 1) {
        const answer = await teacher.client.v3('POST', '/exams', {
          name: `Paged ${index}`,
          type: 'classroom',
          duration_minutes: 30,
        });
        assert.equal(answer.status, 201, answer.text);
      }
      const filter = JSON.stringify({ user_id: { eq: teacher.id } });
      const first = await adminB.client.v3('GET', '/audit_events', {
        filter,
        sort: JSON.stringify([{ id: 'asc' }]),
        limit: 2,
      });
      const page1 = eventsIn(first);
      assert.equal(first.headers['x-pagination-item-count'], '3');
      assert.equal(first.headers['x-pagination-page-count'], '2');
      assert.equal(page1.length, 2);
      const page2 = eventsIn(
        await adminB.client.v3('GET', '/audit_events', {
          filter,
          sort: JSON.stringify([{ id: 'asc' }]),
          limit: 2,
          page: 2,
        }),
      );
      assert.equal(page2.length, 1);
      const ids = [...page1, ...page2].map((event) => event.id as number);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
      );
      const newestFirst = eventsIn(await adminB.client.v3('GET', '/audit_events', { filter }));
      assert.deepEqual(
        newestFirst.map((event) => event.id),
        [...ids].reverse(),
      );
      const bad = await adminB.client.v3('GET', '/audit_events', {
        filter: JSON.stringify({ password: { eq: 'x' } }),
      });
      assert.equal(bad.status, 422);
    });

    it('shows administrators their institute only, superusers every institute, and refuses other roles', async () => {
      const teacherA = await server.user(instituteA, 'teacher');
      assert.equal(
        (await teacherA.client.v3('POST', '/exams', { name: 'A', type: 'classroom', duration_minutes: 5 }))
          .status,
        201,
      );
      const teacherB = await server.user(instituteB, 'teacher');
      assert.equal(
        (await teacherB.client.v3('POST', '/exams', { name: 'B', type: 'classroom', duration_minutes: 5 }))
          .status,
        201,
      );
      const seenByA = eventsIn(await adminA.client.v3('GET', '/audit_events'));
      assert.ok(seenByA.length > 0);
      assert.ok(seenByA.every((event) => event.institute_id === instituteA));
      assert.ok(seenByA.some((event) => event.user_id === teacherA.id));
      const seenByB = eventsIn(await adminB.client.v3('GET', '/audit_events'));
      assert.ok(seenByB.every((event) => event.institute_id === instituteB));
      assert.ok(seenByB.some((event) => event.user_id === teacherB.id));
      const seenBySuper = await allEvents();
      assert.ok(seenBySuper.some((event) => event.institute_id === instituteA));
      assert.ok(seenBySuper.some((event) => event.institute_id === instituteB));

      for (const role of ['teacher', 'proctor', 'reviewer', 'auditor', 'global_proctor'] as const) {
        const member = await server.user(instituteA, role);
        const answer = await member.client.v3('GET', '/audit_events');
        assert.equal(answer.status, 403, `${role}: ${answer.text}`);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      }
      // The console's cookie reads it under the same rule.
      const browser = await signIn(server, adminA.email);
      assert.equal(eventsIn(await consoleV3(server, browser, 'GET', '/audit_events')).length > 0, true);
    });
  });
}
