import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { invalid, NOT_AUTHORIZED } from '../../helpers/answers.ts';
import { httpRequest } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { base32Decode, hotp, totpStep } from '../../../src/security/totp.ts';
import {
  type Browser,
  consoleV3,
  GOOD_PASSWORD,
  postJson,
  setCookieOf,
  signIn,
  staffUser,
} from './support.ts';

type Json = Record<string, unknown>;

const STEP = 30 * 1000;

/** The code an authenticator app shows for `secret` at `ms`. */
function codeAt(secret: string, ms: number, offsetSteps = 0): string {
  return hotp(base32Decode(secret), totpStep(ms) + offsetSteps);
}

for (const dialect of DIALECTS) {
  describe(`second factor [${dialect}]`, () => {
    const clock = new TestClock(Date.UTC(2026, 10, 23, 9, 0, 0));
    let server: TestServer;
    let instituteId: number;

    /** A POST as the console makes it: the cookie, the CSRF token and a JSON body. */
    const consolePost = (browser: Browser, path: string, body: unknown = {}) =>
      postJson(server, path, body, { cookie: browser.cookie, 'x-csrf-token': browser.csrf });

    const sessionOf = async (browser: Browser) =>
      (await httpRequest({ url: `${server.baseUrl}/auth/session`, headers: { cookie: browser.cookie } }))
        .json as Json;

    /** A user with a password and an enabled second factor. Returns its email, secret and codes. */
    async function enrolledUser(role: Parameters<TestServer['user']>[1] = 'teacher') {
      const user = await staffUser(server, instituteId, role);
      const browser = await signIn(server, user.email);
      const started = await consolePost(browser, '/auth/second_factor/start');
      assert.equal(started.status, 200, started.text);
      const { secret } = started.json as { secret: string };
      const confirmed = await consolePost(browser, '/auth/second_factor/confirm', {
        code: codeAt(secret, clock.now()),
      });
      assert.equal(confirmed.status, 200, confirmed.text);
      // The next code a test types belongs to a step not used yet.
      clock.current += STEP;
      return {
        ...user,
        browser,
        secret,
        recoveryCodes: (confirmed.json as { recovery_codes: string[] }).recovery_codes,
      };
    }

    /** The password step for a user with a second factor. Returns the pending token. */
    async function passwordStep(email: string): Promise<string> {
      const answer = await postJson(server, '/auth/sign_in', { email, password: GOOD_PASSWORD });
      assert.equal(answer.status, 202, answer.text);
      assert.equal(answer.headers['set-cookie'], undefined, 'no cookie before the second step');
      const body = answer.json as Json;
      assert.equal(body.second_factor_required, true);
      assert.equal(body.expires_at, new Date(clock.now() + 5 * 60 * 1000).toISOString());
      return String(body.pending_token);
    }

    const secondStep = (pendingToken: string, code: string) =>
      postJson(server, '/auth/sign_in/second_factor', { pending_token: pendingToken, code });

    before(async () => {
      server = await startTestServer(dialect, { clock });
      instituteId = await server.institute();
    });
    after(async () => {
      await server.close();
    });
    beforeEach(async () => {
      await server.app.database.db.deleteFrom('sign_in_throttles').execute();
    });

    it('enrols: a secret and its otpauth address, confirmed by a code, answering 10 recovery codes once', async () => {
      const user = await staffUser(server, instituteId);
      const browser = await signIn(server, user.email);
      assert.equal((await sessionOf(browser)).second_factor_enabled, false);
      const started = await consolePost(browser, '/auth/second_factor/start');
      assert.equal(started.status, 200, started.text);
      const { secret, otpauth_uri } = started.json as { secret: string; otpauth_uri: string };
      assert.match(secret, /^[A-Z2-7]{32}$/);
      assert.equal(
        otpauth_uri,
        `otpauth://totp/Invigil:${encodeURIComponent(user.email)}?secret=${secret}&issuer=Invigil`,
      );
      // Until confirmed, the password alone still signs in.
      await signIn(server, user.email);
      const wrong = await consolePost(browser, '/auth/second_factor/confirm', {
        code: codeAt(secret, clock.now(), 3),
      });
      assert.equal(wrong.status, 422);
      assert.deepEqual(wrong.json, invalid('code', 'is not valid'));
      const confirmed = await consolePost(browser, '/auth/second_factor/confirm', {
        code: codeAt(secret, clock.now()),
      });
      assert.equal(confirmed.status, 200, confirmed.text);
      const codes = (confirmed.json as { recovery_codes: string[] }).recovery_codes;
      assert.equal(codes.length, 10);
      assert.equal(new Set(codes).size, 10);
      for (const code of codes) assert.match(code, /^[a-z2-9]{5}-[a-z2-9]{5}$/);
      assert.equal((await sessionOf(browser)).second_factor_enabled, true);
      // Stored encrypted and hashed: neither the secret nor a code is in the database as shown.
      const db = server.app.database.db;
      const factor = await db
        .selectFrom('second_factors')
        .selectAll()
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.ok(!factor.secret_encrypted.includes(secret));
      assert.match(factor.secret_encrypted, /^v1:/);
      const stored = await db
        .selectFrom('recovery_codes')
        .select('id')
        .where('user_id', '=', user.id)
        .execute();
      assert.equal(stored.length, 10);
      assert.ok(stored.every((row) => !codes.includes(row.id)));
      // Enabled means enabled: starting again is refused rather than replacing the secret.
      const again = await consolePost(browser, '/auth/second_factor/start');
      assert.equal(again.status, 422);
      assert.deepEqual(again.json, invalid('second_factor', 'is already enabled'));
    });

    it('needs the second step: no session from the password, then the code sets the cookie as a sign-in does', async () => {
      const user = await enrolledUser();
      const pending = await passwordStep(user.email);
      const answer = await secondStep(pending, codeAt(user.secret, clock.now()));
      assert.equal(answer.status, 200, answer.text);
      const cookie = setCookieOf(answer);
      assert.ok(cookie?.startsWith('invigil_session='));
      assert.match(String(answer.headers['set-cookie']), /; HttpOnly/);
      const body = answer.json as Json;
      assert.equal((body.user as Json).id, user.id);
      assert.equal(body.second_factor_enabled, true);
      const browser = { cookie: cookie ?? '', csrf: String(body.csrf_token) };
      const exams = await consoleV3(server, browser, 'GET', '/exams');
      assert.equal(exams.status, 200, exams.text);
      // The pending token is spent by its use.
      clock.current += STEP;
      const reused = await secondStep(pending, codeAt(user.secret, clock.now()));
      assert.equal(reused.status, 403);
      assert.deepEqual(reused.json, NOT_AUTHORIZED);
    });

    it('accepts a code one step off (a phone clock a little wrong), not two', async () => {
      const user = await enrolledUser();
      assert.equal(
        (await secondStep(await passwordStep(user.email), codeAt(user.secret, clock.now(), 2))).status,
        403,
      );
      // The step before the current one (the enrolment used the one before that).
      clock.current += STEP;
      assert.equal(
        (await secondStep(await passwordStep(user.email), codeAt(user.secret, clock.now(), -1))).status,
        200,
      );
      assert.equal(
        (await secondStep(await passwordStep(user.email), codeAt(user.secret, clock.now(), 1))).status,
        200,
      );
    });

    it('refuses a replayed code, even within its 30 seconds', async () => {
      const user = await enrolledUser();
      const code = codeAt(user.secret, clock.now());
      assert.equal((await secondStep(await passwordStep(user.email), code)).status, 200);
      const replay = await secondStep(await passwordStep(user.email), code);
      assert.equal(replay.status, 403);
      assert.deepEqual(replay.json, NOT_AUTHORIZED);
      // An older step than the one used is refused too.
      const older = await secondStep(await passwordStep(user.email), codeAt(user.secret, clock.now(), -1));
      assert.equal(older.status, 403);
    });

    it('refuses wrong codes alike and throttles them with the password failures (429 with Retry-After)', async () => {
      const user = await enrolledUser();
      const pending = await passwordStep(user.email);
      for (const code of ['000000', 'not-a-code', codeAt(user.secret, clock.now(), 5)]) {
        const answer = await secondStep(pending, code);
        assert.equal(answer.status, 403, code);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      }
      // The account's three free failures are spent: even the right code waits now.
      const blocked = await secondStep(pending, codeAt(user.secret, clock.now()));
      assert.equal(blocked.status, 429);
      assert.equal(blocked.headers['retry-after'], '1');
      // The password step is throttled by the same count.
      const password = await postJson(server, '/auth/sign_in', {
        email: user.email,
        password: GOOD_PASSWORD,
      });
      assert.equal(password.status, 429);
      clock.current += 2000;
      const done = await secondStep(pending, codeAt(user.secret, clock.now()));
      assert.equal(done.status, 200, done.text);
    });

    it('spends a pending step after 5 wrong codes, and after 5 minutes', async () => {
      const user = await enrolledUser();
      const pending = await passwordStep(user.email);
      for (let attempt = 0; attempt < 5; attempt++) {
        clock.current += 20_000;
        assert.equal((await secondStep(pending, '000000')).status, 403);
      }
      await server.app.database.db.deleteFrom('sign_in_throttles').execute();
      assert.equal((await secondStep(pending, codeAt(user.secret, clock.now()))).status, 403);

      const late = await passwordStep(user.email);
      clock.current += 5 * 60 * 1000;
      assert.equal((await secondStep(late, codeAt(user.secret, clock.now()))).status, 403);
      assert.equal((await secondStep('made-up', codeAt(user.secret, clock.now()))).status, 403);
    });

    it('takes a recovery code once (dashes and case as typed do not matter)', async () => {
      const user = await enrolledUser();
      const [first] = user.recoveryCodes;
      assert.ok(first !== undefined);
      const typed = first.replace('-', '').toUpperCase();
      assert.equal((await secondStep(await passwordStep(user.email), typed)).status, 200);
      const again = await secondStep(await passwordStep(user.email), first);
      assert.equal(again.status, 403);
    });

    it('replaces the recovery codes with a TOTP code; the old ones stop working', async () => {
      const user = await enrolledUser();
      const wrong = await consolePost(user.browser, '/auth/second_factor/recovery_codes', {
        code: user.recoveryCodes[0],
      });
      assert.equal(wrong.status, 422);
      const answer = await consolePost(user.browser, '/auth/second_factor/recovery_codes', {
        code: codeAt(user.secret, clock.now()),
      });
      assert.equal(answer.status, 200, answer.text);
      const fresh = (answer.json as { recovery_codes: string[] }).recovery_codes;
      assert.equal(fresh.length, 10);
      assert.equal(
        (await secondStep(await passwordStep(user.email), user.recoveryCodes[1] ?? '')).status,
        403,
      );
      assert.equal((await secondStep(await passwordStep(user.email), fresh[0] ?? '')).status, 200);
    });

    it('disables with the password again; then the password alone signs in', async () => {
      const user = await enrolledUser();
      const wrong = await consolePost(user.browser, '/auth/second_factor/disable', {
        password: 'not the password at all',
      });
      assert.equal(wrong.status, 422);
      assert.deepEqual(wrong.json, invalid('password', 'is not correct'));
      const noCsrf = await postJson(
        server,
        '/auth/second_factor/disable',
        { password: GOOD_PASSWORD },
        { cookie: user.browser.cookie },
      );
      assert.equal(noCsrf.status, 403);
      const done = await consolePost(user.browser, '/auth/second_factor/disable', {
        password: GOOD_PASSWORD,
      });
      assert.equal(done.status, 204, done.text);
      const browser = await signIn(server, user.email);
      assert.equal((await sessionOf(browser)).second_factor_enabled, false);
    });

    /** The audit events of a user, newest first. */
    const eventsOf = (userId: number) =>
      server.app.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('id', 'desc')
        .execute();

    const eventCount = async () =>
      Number(
        (
          await server.app.database.db
            .selectFrom('audit_events')
            .select((eb) => eb.fn.countAll().as('count'))
            .executeTakeFirstOrThrow()
        ).count,
      );

    it('records a wrong code at the second step as sign_in_failed (403) for the account, never the code', async () => {
      const user = await enrolledUser();
      const pending = await passwordStep(user.email);
      const wrongTotp = codeAt(user.secret, clock.now(), 5);
      const wrongRecovery = 'zzzzz-zzzzz';
      for (const code of [wrongTotp, wrongRecovery]) {
        const answer = await secondStep(pending, code);
        assert.equal(answer.status, 403, code);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      }
      const events = (await eventsOf(user.id)).slice(0, 2);
      assert.deepEqual(
        events.map((event) => [event.action, event.status, event.email, event.institute_id]),
        [
          ['sign_in_failed', 403, user.email, instituteId],
          ['sign_in_failed', 403, user.email, instituteId],
        ],
      );
      for (const event of events) {
        const stored = JSON.stringify(event);
        assert.ok(!stored.includes(wrongTotp) && !stored.includes('zzzzz'), stored);
        assert.ok(!stored.includes(pending), 'the pending token is not recorded either');
      }
      // A pending token that names nobody is not recorded: there is no account to show it to.
      const before = await eventCount();
      assert.equal((await secondStep('made-up', wrongTotp)).status, 403);
      assert.equal(await eventCount(), before);
      // The right code still signs in, recorded as a sign-in.
      const done = await secondStep(pending, codeAt(user.secret, clock.now()));
      assert.equal(done.status, 200, done.text);
      const [latest] = await eventsOf(user.id);
      assert.deepEqual([latest?.action, latest?.status], ['sign_in', 200]);
    });

    it('records a wrong password at disable and a wrong code at recovery_codes as password_confirmation_failed (422), and throttles both', async () => {
      const user = await enrolledUser();
      const wrongPassword = 'not the password at all';
      const disable = await consolePost(user.browser, '/auth/second_factor/disable', {
        password: wrongPassword,
      });
      assert.equal(disable.status, 422);
      const wrongCodes = [codeAt(user.secret, clock.now(), 5), user.recoveryCodes[0] ?? ''];
      for (const code of wrongCodes) {
        const answer = await consolePost(user.browser, '/auth/second_factor/recovery_codes', { code });
        assert.equal(answer.status, 422, code);
        assert.deepEqual(answer.json, invalid('code', 'is not valid'));
      }
      const events = (await eventsOf(user.id)).slice(0, 3);
      assert.deepEqual(
        events.map((event) => [event.action, event.status, event.institute_id]),
        [
          ['password_confirmation_failed', 422, instituteId],
          ['password_confirmation_failed', 422, instituteId],
          ['password_confirmation_failed', 422, instituteId],
        ],
      );
      for (const event of events) {
        const stored = JSON.stringify(event);
        assert.ok(!stored.includes(wrongPassword), stored);
        for (const code of wrongCodes) assert.ok(!stored.includes(code), stored);
      }
      // Three failures for the account: even the right code waits now, unrecorded, as at sign-in.
      const before = await eventCount();
      const blocked = await consolePost(user.browser, '/auth/second_factor/recovery_codes', {
        code: codeAt(user.secret, clock.now()),
      });
      assert.equal(blocked.status, 429, blocked.text);
      assert.equal(blocked.headers['retry-after'], '1');
      assert.equal(await eventCount(), before);
      clock.current += 2000;
      const replaced = await consolePost(user.browser, '/auth/second_factor/recovery_codes', {
        code: codeAt(user.secret, clock.now()),
      });
      assert.equal(replaced.status, 200, replaced.text);
      const [latest] = await eventsOf(user.id);
      assert.deepEqual([latest?.action, latest?.status], ['recovery_codes_regenerated', 200]);
    });

    it('ends pending second steps when the password changes', async () => {
      const user = await enrolledUser();
      const pending = await passwordStep(user.email);
      await server.app.services.staffAuth.setPassword(user.id, `${GOOD_PASSWORD} again`);
      const answer = await secondStep(pending, codeAt(user.secret, clock.now()));
      assert.equal(answer.status, 403);
      assert.deepEqual(answer.json, NOT_AUTHORIZED);
    });

    it('refuses the compat sign-in of a user with a second factor (the Go client has no second step)', async () => {
      const user = await enrolledUser();
      const answer = await postJson(server, '/users/sign_in.json', {
        user: { email: user.email, password: GOOD_PASSWORD },
      });
      assert.equal(answer.status, 403);
      assert.deepEqual(answer.json, NOT_AUTHORIZED);
    });

    it('limits an administrator without a second factor to enrolment when the institute requires one', async () => {
      const required = await server.institute();
      const superuser = await staffUser(server, required, 'superuser');
      const root = await signIn(server, superuser.email);
      const setting = await consoleV3(server, root, 'PUT', `/institutes/${required}`, {
        body: { require_second_factor_for_administrators: true },
        csrf: root.csrf,
      });
      assert.equal(setting.status, 200, setting.text);
      assert.equal(((setting.json as Json).institute as Json).require_second_factor_for_administrators, true);

      const admin = await staffUser(server, required, 'administrator');
      const browser = await signIn(server, admin.email);
      assert.equal((await sessionOf(browser)).second_factor_enrolment_required, true);
      const refused = await consoleV3(server, browser, 'GET', `/institutes/${required}`);
      assert.equal(refused.status, 403);
      assert.deepEqual(refused.json, NOT_AUTHORIZED);
      // A teacher of the same institute is not affected.
      const teacher = await staffUser(server, required, 'teacher');
      assert.equal(
        (await consoleV3(server, await signIn(server, teacher.email), 'GET', '/exams')).status,
        200,
      );

      const started = await consolePost(browser, '/auth/second_factor/start');
      const { secret } = started.json as { secret: string };
      const confirmed = await consolePost(browser, '/auth/second_factor/confirm', {
        code: codeAt(secret, clock.now()),
      });
      assert.equal(confirmed.status, 200, confirmed.text);
      // The same session is a full one from now on.
      assert.equal((await sessionOf(browser)).second_factor_enrolment_required, false);
      assert.equal((await consoleV3(server, browser, 'GET', `/institutes/${required}`)).status, 200);
    });
  });
}
