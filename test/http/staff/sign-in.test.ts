import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ApiClient, V3_ACCEPT } from '../../helpers/client.ts';
import { httpRequest } from '../../helpers/http.ts';
import { invalid, NOT_AUTHORIZED } from '../../helpers/answers.ts';
import { multipartBody } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import {
  consoleV3,
  GOOD_PASSWORD,
  linkTokenFor,
  postJson,
  setCookieOf,
  signIn,
  staffUser,
} from './support.ts';

type Json = Record<string, unknown>;

const MINUTE = 60 * 1000;
const RESET_REQUESTED = {
  message: 'If this email belongs to an active account, a link to choose a new password is on its way.',
};

for (const dialect of DIALECTS) {
  describe(`staff sign-in [${dialect}]`, () => {
    const clock = new TestClock(Date.UTC(2026, 10, 23, 9, 0, 0));
    let server: TestServer;
    let instituteId: number;
    let admin: Awaited<ReturnType<TestServer['user']>>;

    /** The current state of the session a browser holds. */
    const sessionOf = (cookie: string) =>
      httpRequest({ url: `${server.baseUrl}/auth/session`, headers: { cookie } });

    before(async () => {
      server = await startTestServer(dialect, { clock });
      instituteId = await server.institute();
      admin = await server.user(instituteId, 'administrator');
    });
    after(async () => {
      await server.close();
    });
    beforeEach(async () => {
      // Every test starts with no failed sign-ins on record (they all come from 127.0.0.1).
      await server.app.database.db.deleteFrom('sign_in_throttles').execute();
    });

    describe('POST /auth/sign_in', () => {
      it('opens a session: an HttpOnly, SameSite=Lax cookie on Path=/ (not Secure over http), and the user with a CSRF token', async () => {
        const user = await staffUser(server, instituteId);
        const answer = await postJson(server, '/auth/sign_in', {
          email: user.email,
          password: GOOD_PASSWORD,
        });
        assert.equal(answer.status, 200, answer.text);
        const header = String(answer.headers['set-cookie']);
        assert.match(header, /^invigil_session=[A-Za-z0-9_-]{43}; /);
        assert.match(header, /; HttpOnly/);
        assert.match(header, /; SameSite=Lax/);
        assert.match(header, /; Path=\//);
        assert.doesNotMatch(header, /Secure/);
        const body = answer.json as Json;
        assert.deepEqual(body.user, {
          id: user.id,
          institute_id: instituteId,
          email: user.email,
          name: (body.user as Json).name,
          role: 'teacher',
          language: null,
        });
        assert.equal(typeof body.csrf_token, 'string');
        assert.equal(body.expires_at, new Date(clock.now() + 12 * 60 * MINUTE).toISOString());
        assert.equal(body.idle_expires_at, new Date(clock.now() + 30 * MINUTE).toISOString());

        const session = await sessionOf(setCookieOf(answer) ?? '');
        assert.equal(session.status, 200);
        // GET /auth/session adds the institute's name, which a teacher may not read otherwise.
        const institute = await server.app.database.db
          .selectFrom('institutes')
          .select('name')
          .where('id', '=', instituteId)
          .executeTakeFirstOrThrow();
        assert.deepEqual(session.json, { ...body, institute_name: institute.name });
      });

      it('finds the user whatever the case of the email', async () => {
        const user = await staffUser(server, instituteId);
        await signIn(server, user.email.toUpperCase());
      });

      it('answers one generic 403 for a wrong password, an unknown email, a user without a password and a deactivated user, and sets no cookie', async () => {
        const user = await staffUser(server, instituteId);
        const noPassword = await server.user(instituteId, 'teacher');
        const noPasswordEmail = (
          (
            await admin.client.v3('GET', '/institutes/:institute_id/users/:id', {
              institute_id: instituteId,
              id: noPassword.id,
            })
          ).json as { user: { email: string } }
        ).user.email;
        const deactivated = await staffUser(server, instituteId);
        await server.app.services.users.update(
          { id: admin.id, instituteId, role: 'administrator' },
          instituteId,
          deactivated.id,
          { active: false },
        );
        for (const [email, password] of [
          [user.email, 'wrong password, long enough'],
          ['nobody@example.org', GOOD_PASSWORD],
          [noPasswordEmail, GOOD_PASSWORD],
          [deactivated.email, GOOD_PASSWORD],
        ] as const) {
          const answer = await postJson(server, '/auth/sign_in', { email, password });
          assert.equal(answer.status, 403, email);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
          assert.equal(answer.headers['set-cookie'], undefined);
        }
      });

      it('answers 422 naming a missing password', async () => {
        const answer = await postJson(server, '/auth/sign_in', { email: 'someone@example.org' });
        assert.equal(answer.status, 422);
        assert.deepEqual(answer.json, { error: "Param is missing or the value is empty: 'password'" });
      });

      it('throttles an account with growing delays (429 and Retry-After), the right password included, until the time has passed', async () => {
        const user = await staffUser(server, instituteId);
        const attempt = (password: string) =>
          postJson(server, '/auth/sign_in', { email: user.email, password });
        for (let failure = 0; failure < 3; failure += 1) {
          assert.equal((await attempt('not the password at all')).status, 403);
        }
        const blocked = await attempt(GOOD_PASSWORD);
        assert.equal(blocked.status, 429);
        assert.equal(blocked.headers['retry-after'], '1');
        assert.deepEqual(blocked.json, { error: 'Too many failed sign-ins: try again in 1 seconds' });
        clock.current += 1000;
        assert.equal((await attempt('not the password at all')).status, 403);
        const longer = await attempt(GOOD_PASSWORD);
        assert.equal(longer.status, 429);
        assert.equal(longer.headers['retry-after'], '2');
        clock.current += 2000;
        assert.equal((await attempt(GOOD_PASSWORD)).status, 200);
        // Success clears the account's count: the next mistake is an ordinary refusal.
        assert.equal((await attempt('not the password at all')).status, 403);
      });

      it('throttles an unknown email exactly like a known one, so the 429 tells nothing', async () => {
        for (let failure = 0; failure < 3; failure += 1) {
          const answer = await postJson(server, '/auth/sign_in', {
            email: 'ghost@example.org',
            password: 'x',
          });
          assert.equal(answer.status, 403);
        }
        const answer = await postJson(server, '/auth/sign_in', { email: 'ghost@example.org', password: 'x' });
        assert.equal(answer.status, 429);
      });

      it('throttles a client address that fails across many accounts', async () => {
        const user = await staffUser(server, instituteId);
        for (let failure = 0; failure < 20; failure += 1) {
          const answer = await postJson(server, '/auth/sign_in', {
            email: `spray${failure}@example.org`,
            password: 'guess',
          });
          assert.equal(answer.status, 403);
        }
        const answer = await postJson(server, '/auth/sign_in', {
          email: user.email,
          password: GOOD_PASSWORD,
        });
        assert.equal(answer.status, 429);
        assert.equal(answer.headers['retry-after'], '1');
      });

      it('never keeps a session cookie the browser already had (session fixation)', async () => {
        const user = await staffUser(server, instituteId);
        const planted = 'invigil_session=chosen-by-an-attacker';
        const first = await signIn(server, user.email, GOOD_PASSWORD, { cookie: planted });
        assert.notEqual(first.cookie, planted);
        assert.equal((await sessionOf(planted)).status, 403);
        // Signing in again from a live session also gives a new one.
        const second = await signIn(server, user.email, GOOD_PASSWORD, { cookie: first.cookie });
        assert.notEqual(second.cookie, first.cookie);
        assert.notEqual(second.csrf, first.csrf);
      });

      it('refuses a cross-site sign-in (login CSRF): a form post 415, a foreign Origin or Sec-Fetch-Site 403', async () => {
        const user = await staffUser(server, instituteId);
        const form = await httpRequest({
          url: `${server.baseUrl}/auth/sign_in`,
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ email: user.email, password: GOOD_PASSWORD }).toString(),
        });
        assert.equal(form.status, 415);
        assert.equal(form.headers['set-cookie'], undefined);
        const body = { email: user.email, password: GOOD_PASSWORD };
        const crossSite: Record<string, string>[] = [
          { origin: 'https://evil.example' },
          { origin: 'null' },
          { 'sec-fetch-site': 'cross-site' },
        ];
        for (const headers of crossSite) {
          const answer = await postJson(server, '/auth/sign_in', body, headers);
          assert.equal(answer.status, 403, JSON.stringify(headers));
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
          assert.equal(answer.headers['set-cookie'], undefined);
        }
        const own = new URL(server.app.config.publicUrl).origin;
        await signIn(server, user.email, GOOD_PASSWORD, { origin: own, 'sec-fetch-site': 'same-origin' });
      });
    });

    describe('session lifetime', () => {
      it('ends a session idle for 30 minutes; requests before that keep it alive', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        clock.current += 29 * MINUTE;
        assert.equal((await sessionOf(browser.cookie)).status, 200);
        clock.current += 29 * MINUTE;
        assert.equal((await sessionOf(browser.cookie)).status, 200);
        clock.current += 30 * MINUTE;
        const ended = await sessionOf(browser.cookie);
        assert.equal(ended.status, 403);
        assert.deepEqual(ended.json, NOT_AUTHORIZED);
      });

      it('ends a session 12 hours after sign-in however active it is', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        for (let elapsed = 0; elapsed + 25 * MINUTE < 12 * 60 * MINUTE; elapsed += 25 * MINUTE) {
          clock.current += 25 * MINUTE;
          assert.equal((await sessionOf(browser.cookie)).status, 200, `after ${elapsed} ms`);
        }
        clock.current += 25 * MINUTE;
        assert.equal((await sessionOf(browser.cookie)).status, 403);
      });

      it('signs out with the CSRF token (refused without it), removing the cookie', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        const forged = await httpRequest({
          url: `${server.baseUrl}/auth/sign_out`,
          method: 'POST',
          headers: { cookie: browser.cookie },
        });
        assert.equal(forged.status, 403);
        assert.equal((await sessionOf(browser.cookie)).status, 200);
        const answer = await httpRequest({
          url: `${server.baseUrl}/auth/sign_out`,
          method: 'POST',
          headers: { cookie: browser.cookie, 'x-csrf-token': browser.csrf },
        });
        assert.equal(answer.status, 204);
        assert.match(
          String(answer.headers['set-cookie']),
          /^invigil_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0$/,
        );
        assert.equal((await sessionOf(browser.cookie)).status, 403);
      });

      it('signs out everywhere: every session of the user ends, another user’s stays', async () => {
        const user = await staffUser(server, instituteId);
        const other = await staffUser(server, instituteId);
        const laptop = await signIn(server, user.email);
        const phone = await signIn(server, user.email);
        const colleague = await signIn(server, other.email);
        const answer = await httpRequest({
          url: `${server.baseUrl}/auth/sign_out_everywhere`,
          method: 'POST',
          headers: { cookie: phone.cookie, 'x-csrf-token': phone.csrf },
        });
        assert.equal(answer.status, 204);
        assert.equal((await sessionOf(laptop.cookie)).status, 403);
        assert.equal((await sessionOf(phone.cookie)).status, 403);
        assert.equal((await sessionOf(colleague.cookie)).status, 200);
      });

      it('ends every session of a user who is deactivated, and they stay ended when reactivated', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        const path = '/institutes/:institute_id/users/:id';
        const off = await admin.client.v3('PUT', path, {
          institute_id: instituteId,
          id: user.id,
          active: false,
        });
        assert.equal(off.status, 200, off.text);
        assert.equal((await sessionOf(browser.cookie)).status, 403);
        assert.equal((await consoleV3(server, browser, 'GET', '/exams')).status, 403);
        const on = await admin.client.v3('PUT', path, {
          institute_id: instituteId,
          id: user.id,
          active: true,
        });
        assert.equal(on.status, 200, on.text);
        assert.equal((await sessionOf(browser.cookie)).status, 403);
      });

      it('ends every session of a user whose password changes', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        await server.app.services.staffAuth.setPassword(user.id, 'another long password');
        assert.equal((await sessionOf(browser.cookie)).status, 403);
        await signIn(server, user.email, 'another long password');
      });
    });

    describe('forgot password and invitations', () => {
      it('answers forgot-password the same for an unknown email and queues nothing for it', async () => {
        const before = await server.app.database.db.selectFrom('outbox').select('id').execute();
        const answer = await postJson(server, '/auth/password/forgot', { email: 'nobody-here@example.org' });
        assert.equal(answer.status, 202);
        assert.deepEqual(answer.json, RESET_REQUESTED);
        const afterwards = await server.app.database.db.selectFrom('outbox').select('id').execute();
        assert.equal(afterwards.length, before.length);
      });

      it('emails a single-use reset link that sets a new password and ends the sessions', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        const answer = await postJson(server, '/auth/password/forgot', { email: user.email });
        assert.equal(answer.status, 202);
        assert.deepEqual(answer.json, RESET_REQUESTED);
        const { url, token } = await linkTokenFor(server, user.email);
        assert.ok(url.startsWith(`${server.app.config.publicUrl}/console/reset-password?token=`), url);

        const short = await postJson(server, '/auth/password/reset', { token, password: 'too short' });
        assert.equal(short.status, 422);
        assert.deepEqual(short.json, invalid('password', 'is too short (minimum is 12 characters)'));
        const reset = await postJson(server, '/auth/password/reset', {
          token,
          password: 'a brand new password',
        });
        assert.equal(reset.status, 204, reset.text);
        assert.equal((await sessionOf(browser.cookie)).status, 403);
        await signIn(server, user.email, 'a brand new password');
        const old = await postJson(server, '/auth/sign_in', { email: user.email, password: GOOD_PASSWORD });
        assert.equal(old.status, 403);

        const again = await postJson(server, '/auth/password/reset', {
          token,
          password: 'yet another password',
        });
        assert.equal(again.status, 422);
        assert.deepEqual(again.json, invalid('token', 'is invalid or has expired'));
      });

      it('sends one reset email per user in 5 minutes, answering every request alike', async () => {
        const user = await staffUser(server, instituteId);
        const emails = () =>
          server.app.database.db
            .selectFrom('outbox')
            .select('id')
            .where('to_address', '=', user.email)
            .execute();
        for (let request = 0; request < 3; request += 1) {
          const answer = await postJson(server, '/auth/password/forgot', { email: user.email });
          assert.equal(answer.status, 202);
          assert.deepEqual(answer.json, RESET_REQUESTED);
        }
        assert.equal((await emails()).length, 1);
        clock.current += 5 * MINUTE;
        assert.equal((await postJson(server, '/auth/password/forgot', { email: user.email })).status, 202);
        assert.equal((await emails()).length, 2);
      });

      it('refuses a reset link after an hour', async () => {
        const user = await staffUser(server, instituteId);
        assert.equal((await postJson(server, '/auth/password/forgot', { email: user.email })).status, 202);
        const { token } = await linkTokenFor(server, user.email);
        clock.current += 61 * MINUTE;
        const answer = await postJson(server, '/auth/password/reset', {
          token,
          password: 'a brand new password',
        });
        assert.equal(answer.status, 422);
        assert.deepEqual(answer.json, invalid('token', 'is invalid or has expired'));
      });

      it('accepts an invitation once, only on its own endpoint', async () => {
        const invited = await server.user(instituteId, 'proctor');
        const link = await server.app.services.staffAuth.invite(invited.id);
        assert.match(link.url, /\/console\/accept-invitation\?token=[A-Za-z0-9_-]{43}$/);
        const token = new URL(link.url).searchParams.get('token') ?? '';
        const wrongDoor = await postJson(server, '/auth/password/reset', {
          token,
          password: 'my first password',
        });
        assert.equal(wrongDoor.status, 422);
        const accepted = await postJson(server, '/auth/invitations/accept', {
          token,
          password: 'my first password',
        });
        assert.equal(accepted.status, 204, accepted.text);
        const email = (
          await server.app.database.db
            .selectFrom('users')
            .select('email')
            .where('id', '=', invited.id)
            .executeTakeFirstOrThrow()
        ).email;
        await signIn(server, email, 'my first password');
        const twice = await postJson(server, '/auth/invitations/accept', {
          token,
          password: 'my second password',
        });
        assert.equal(twice.status, 422);
      });
    });

    describe('POST /users/sign_in.json (compat)', () => {
      /** Signs in on the compat endpoint; returns the credentials it answered. */
      const compatSignIn = async (email: string): Promise<{ api_token: string; secret_key: string }> => {
        const answer = await postJson(server, '/users/sign_in.json', {
          user: { email, password: GOOD_PASSWORD },
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.headers['cache-control'], 'no-store');
        const body = answer.json as Json;
        assert.deepEqual(Object.keys(body).sort(), ['api_token', 'email', 'id', 'secret_key']);
        assert.equal(body.email, email);
        return { api_token: String(body.api_token), secret_key: String(body.secret_key) };
      };
      const clientFor = (credentials: { api_token: string; secret_key: string }) =>
        new ApiClient(server.baseUrl, { apiToken: credentials.api_token, secretKey: credentials.secret_key });

      it('answers the user’s existing credentials on every sign-in, and they keep working', async () => {
        const user = await staffUser(server, instituteId);
        const first = await compatSignIn(user.email);
        assert.deepEqual(first, {
          api_token: user.credentials.apiToken,
          secret_key: user.credentials.secretKey,
        });
        const second = await compatSignIn(user.email);
        assert.deepEqual(second, first);
        assert.equal((await clientFor(first).v3('GET', '/exams')).status, 200);
        assert.equal((await user.client.v3('GET', '/exams')).status, 200);
      });

      it('answers the new credentials after a rotation, and the old ones stop working', async () => {
        const user = await staffUser(server, instituteId);
        const before = await compatSignIn(user.email);
        const browser = await signIn(server, user.email);
        const rotated = await postJson(
          server,
          '/auth/api_credentials/rotate',
          { password: GOOD_PASSWORD },
          { cookie: browser.cookie, 'x-csrf-token': browser.csrf },
        );
        assert.equal(rotated.status, 200, rotated.text);
        const after = await compatSignIn(user.email);
        assert.deepEqual(after, rotated.json);
        assert.notEqual(after.api_token, before.api_token);
        assert.notEqual(after.secret_key, before.secret_key);
        assert.equal((await clientFor(before).v3('GET', '/exams')).status, 403);
        assert.equal((await clientFor(after).v3('GET', '/exams')).status, 200);
        assert.deepEqual(await compatSignIn(user.email), after);
      });

      it('issues a user from before migration 0020 new credentials once, then answers those', async () => {
        const user = await staffUser(server, instituteId);
        // What a row written before 0020 holds: the token only as its hash.
        await server.app.database.db
          .updateTable('users')
          .set({ api_token_encrypted: null })
          .where('id', '=', user.id)
          .execute();
        const [one, two] = await Promise.all([compatSignIn(user.email), compatSignIn(user.email)]);
        assert.deepEqual(two, one);
        assert.notEqual(one.api_token, user.credentials.apiToken);
        assert.equal((await user.client.v3('GET', '/exams')).status, 403);
        assert.equal((await clientFor(one).v3('GET', '/exams')).status, 200);
        assert.deepEqual(await compatSignIn(user.email), one);
        const row = await server.app.database.db
          .selectFrom('users')
          .select('api_token_encrypted')
          .where('id', '=', user.id)
          .executeTakeFirstOrThrow();
        assert.ok(row.api_token_encrypted !== null && !row.api_token_encrypted.includes(one.api_token));
      });

      it('refuses a wrong password with the generic 403 and changes nothing', async () => {
        const user = await staffUser(server, instituteId);
        const answer = await postJson(server, '/users/sign_in.json', {
          user: { email: user.email, password: 'wrong password, long enough' },
        });
        assert.equal(answer.status, 403);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
        assert.equal((await user.client.v3('GET', '/exams')).status, 200);
      });
    });

    describe('the console speaks V3 with its session cookie', () => {
      it('reads without a CSRF token, changes only with the right one, under the same answers', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        const list = await consoleV3(server, browser, 'GET', '/exams');
        assert.equal(list.status, 200, list.text);
        const exam = { name: 'Cookie exam', type: 'record_review', duration_minutes: 60 };
        for (const csrf of [undefined, 'wrong', `${browser.csrf}x`]) {
          const refused = await consoleV3(server, browser, 'POST', '/exams', { body: exam, csrf });
          assert.equal(refused.status, 403, String(csrf));
          assert.deepEqual(refused.json, NOT_AUTHORIZED);
        }
        const created = await consoleV3(server, browser, 'POST', '/exams', {
          body: exam,
          csrf: browser.csrf,
        });
        assert.equal(created.status, 201, created.text);
        const id = (created.json as { exam: { id: number } }).exam.id;
        const signed = await user.client.v3('GET', '/exams/:id', { id });
        const viaCookie = await consoleV3(server, browser, 'GET', `/exams/${id}`);
        assert.deepEqual(viaCookie.json, signed.json);
      });

      it('applies the role rules: a proctor’s cookie cannot create an exam', async () => {
        const proctor = await staffUser(server, instituteId, 'proctor');
        const browser = await signIn(server, proctor.email);
        const signed = await proctor.client.v3('POST', '/exams', {
          name: 'No',
          type: 'record_review',
          duration_minutes: 60,
        });
        const viaCookie = await consoleV3(server, browser, 'POST', '/exams', {
          body: { name: 'No', type: 'record_review', duration_minutes: 60 },
          csrf: browser.csrf,
        });
        assert.equal(signed.status, 403);
        assert.equal(viaCookie.status, signed.status);
        assert.deepEqual(viaCookie.json, signed.json);
      });

      it('keeps the Accept rule (406) and judges a request with an Authorization header by its signature', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        const noAccept = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams`,
          headers: { cookie: browser.cookie, accept: 'application/json' },
        });
        assert.equal(noAccept.status, 406);
        const badToken = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams`,
          headers: { cookie: browser.cookie, accept: V3_ACCEPT, authorization: 'Token token=nonsense' },
        });
        assert.equal(badToken.status, 403);
      });

      it('refuses the cookie after sign-out and after expiry', async () => {
        const user = await staffUser(server, instituteId);
        const first = await signIn(server, user.email);
        const out = await httpRequest({
          url: `${server.baseUrl}/auth/sign_out`,
          method: 'POST',
          headers: { cookie: first.cookie, 'x-csrf-token': first.csrf },
        });
        assert.equal(out.status, 204);
        assert.equal((await consoleV3(server, first, 'GET', '/exams')).status, 403);
        const second = await signIn(server, user.email);
        clock.current += 31 * MINUTE;
        assert.equal((await consoleV3(server, second, 'GET', '/exams')).status, 403);
      });

      it('uploads multipart with the cookie and the CSRF token, and refuses it without the token', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        const exam = await consoleV3(server, browser, 'POST', '/exams', {
          body: { name: 'Upload exam', type: 'record_review', duration_minutes: 60 },
          csrf: browser.csrf,
        });
        const examId = (exam.json as { exam: { id: number } }).exam.id;
        const document = await consoleV3(server, browser, 'POST', `/exams/${examId}/documents`, {
          body: { exam_content: 'Rules' },
          csrf: browser.csrf,
        });
        assert.equal(document.status, 201, document.text);
        const documentId = (document.json as { document: { id: number } }).document.id;
        const send = (csrf: string | undefined) => {
          const { body, contentType } = multipartBody({}, [
            {
              field: 'document',
              fileName: 'rules.txt',
              contentType: 'text/plain',
              bytes: Buffer.from('hello'),
            },
          ]);
          return httpRequest({
            url: `${server.baseUrl}/api/v3/exams/${examId}/documents/${documentId}/attachments`,
            method: 'POST',
            headers: {
              cookie: browser.cookie,
              accept: V3_ACCEPT,
              'content-type': contentType,
              ...(csrf === undefined ? {} : { 'x-csrf-token': csrf }),
            },
            body,
          });
        };
        const refused = await send(undefined);
        assert.equal(refused.status, 403);
        const accepted = await send(browser.csrf);
        assert.equal(accepted.status, 201, accepted.text);
      });
    });
  });

  describe(`staff sign-in behind https [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(dialect, { env: { PUBLIC_URL: 'https://invigil.example.org' } });
    });
    after(async () => {
      await server.close();
    });

    it('marks the cookie Secure and accepts the https origin only', async () => {
      const user = await staffUser(server, await server.institute());
      const answer = await postJson(
        server,
        '/auth/sign_in',
        { email: user.email, password: GOOD_PASSWORD },
        { origin: 'https://invigil.example.org' },
      );
      assert.equal(answer.status, 200, answer.text);
      assert.match(String(answer.headers['set-cookie']), /; SameSite=Lax; Secure$/);
      const plain = await postJson(
        server,
        '/auth/sign_in',
        { email: user.email, password: GOOD_PASSWORD },
        { origin: 'http://invigil.example.org' },
      );
      assert.equal(plain.status, 403);
    });
  });
}
