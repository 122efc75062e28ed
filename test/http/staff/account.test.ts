import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ApiClient } from '../../helpers/client.ts';
import { invalid, missing, NOT_AUTHORIZED } from '../../helpers/answers.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { type Browser, consoleV3, GOOD_PASSWORD, postJson, signIn, staffUser } from './support.ts';

type Json = Record<string, unknown>;

const NEW_PASSWORD = 'a brand new passphrase, long enough';
const WRONG = invalid('password', 'is not correct');

for (const dialect of DIALECTS) {
  describe(`my account: password and API credentials [${dialect}]`, () => {
    const clock = new TestClock(Date.UTC(2026, 10, 23, 9, 0, 0));
    let server: TestServer;
    let instituteId: number;

    /** A POST as the console makes it: the cookie, JSON, and the CSRF header unless `csrf: false`. */
    const consolePost = (
      browser: Browser,
      path: string,
      body: unknown,
      options: { csrf?: boolean } = {},
    ): Promise<HttpAnswer> =>
      postJson(server, path, body, {
        cookie: browser.cookie,
        ...(options.csrf === false ? {} : { 'x-csrf-token': browser.csrf }),
      });

    const sessionStatus = async (browser: Browser) =>
      (await httpRequest({ url: `${server.baseUrl}/auth/session`, headers: { cookie: browser.cookie } }))
        .status;

    /** The audit actions recorded for a user, oldest first. */
    const actionsOf = async (userId: number) =>
      (
        await server.app.database.db
          .selectFrom('audit_events')
          .select(['action', 'status'])
          .where('user_id', '=', userId)
          .orderBy('id')
          .execute()
      ).map((row) => `${row.action} ${row.status}`);

    before(async () => {
      server = await startTestServer(dialect, { clock });
      instituteId = await server.institute();
    });
    after(async () => {
      await server.close();
    });
    beforeEach(async () => {
      await server.app.database.db.deleteFrom('sign_in_throttles').execute();
      clock.current += 60 * 60 * 1000;
    });

    describe('POST /auth/password/change', () => {
      it('sets the new password, keeps this session and ends every other one', async () => {
        const user = await staffUser(server, instituteId);
        const here = await signIn(server, user.email);
        const elsewhere = await signIn(server, user.email);
        const answer = await consolePost(here, '/auth/password/change', {
          current_password: GOOD_PASSWORD,
          new_password: NEW_PASSWORD,
        });
        assert.equal(answer.status, 204, answer.text);
        assert.equal(answer.text, '');
        assert.equal(await sessionStatus(here), 200);
        assert.equal(await sessionStatus(elsewhere), 403);
        // The kept session still works with the API.
        assert.equal((await consoleV3(server, here, 'GET', '/exams')).status, 200);
        // The old password is refused, the new one signs in.
        const old = await postJson(server, '/auth/sign_in', { email: user.email, password: GOOD_PASSWORD });
        assert.equal(old.status, 403);
        await signIn(server, user.email, NEW_PASSWORD);
        assert.ok((await actionsOf(user.id)).includes('password_changed 204'));
      });

      it('spends the invitation and reset links the user had not used', async () => {
        const user = await staffUser(server, instituteId);
        const { url } = await server.app.services.staffAuth.invite(user.id);
        const token = new URL(url).searchParams.get('token') ?? '';
        const browser = await signIn(server, user.email);
        const changed = await consolePost(browser, '/auth/password/change', {
          current_password: GOOD_PASSWORD,
          new_password: NEW_PASSWORD,
        });
        assert.equal(changed.status, 204, changed.text);
        const redeemed = await postJson(server, '/auth/invitations/accept', {
          token,
          password: 'someone else chose this one',
        });
        assert.equal(redeemed.status, 422);
        assert.deepEqual(redeemed.json, invalid('token', 'is invalid or has expired'));
      });

      it('refuses a wrong current password with a generic 422, changes nothing, and records it', async () => {
        const user = await staffUser(server, instituteId);
        const here = await signIn(server, user.email);
        const elsewhere = await signIn(server, user.email);
        const answer = await consolePost(here, '/auth/password/change', {
          current_password: 'not the password at all',
          new_password: NEW_PASSWORD,
        });
        assert.equal(answer.status, 422);
        assert.deepEqual(answer.json, invalid('current_password', 'is not correct'));
        assert.equal(await sessionStatus(elsewhere), 200);
        await signIn(server, user.email);
        assert.ok((await actionsOf(user.id)).includes('password_confirmation_failed 422'));
      });

      it('refuses a new password shorter than 12 characters, and names missing fields', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        const short = await consolePost(browser, '/auth/password/change', {
          current_password: GOOD_PASSWORD,
          new_password: 'short',
        });
        assert.equal(short.status, 422);
        assert.deepEqual(short.json, invalid('new_password', 'is too short (minimum is 12 characters)'));
        const none = await consolePost(browser, '/auth/password/change', { current_password: GOOD_PASSWORD });
        assert.equal(none.status, 422);
        assert.deepEqual(none.json, missing('new_password'));
        await signIn(server, user.email);
      });

      it('refuses the cookie without X-CSRF-Token, and a request without a session', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        const body = { current_password: GOOD_PASSWORD, new_password: NEW_PASSWORD };
        for (const answer of [
          await consolePost(browser, '/auth/password/change', body, { csrf: false }),
          await postJson(server, '/auth/password/change', body, { 'x-csrf-token': browser.csrf }),
          await consolePost({ cookie: browser.cookie, csrf: 'x'.repeat(43) }, '/auth/password/change', body),
        ]) {
          assert.equal(answer.status, 403);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        }
        await signIn(server, user.email);
      });

      it('throttles guesses like sign-in: 429 with Retry-After, the right password too', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        const guess = (current: string) =>
          consolePost(browser, '/auth/password/change', {
            current_password: current,
            new_password: NEW_PASSWORD,
          });
        for (let i = 0; i < 3; i += 1) assert.equal((await guess(`wrong guess ${i} long`)).status, 422);
        const blocked = await guess(GOOD_PASSWORD);
        assert.equal(blocked.status, 429, blocked.text);
        assert.equal(blocked.headers['retry-after'], '1');
        // The throttle is the sign-in's: the account's sign-in waits as well.
        const signingIn = await postJson(server, '/auth/sign_in', {
          email: user.email,
          password: GOOD_PASSWORD,
        });
        assert.equal(signingIn.status, 429);
        clock.current += 2000;
        assert.equal((await guess(GOOD_PASSWORD)).status, 204);
      });
    });

    describe('PUT /auth/language', () => {
      const putLanguage = (browser: Browser, body: unknown, csrf = true) =>
        httpRequest({
          url: `${server.baseUrl}/auth/language`,
          method: 'PUT',
          headers: {
            'content-type': 'application/json',
            cookie: browser.cookie,
            ...(csrf ? { 'x-csrf-token': browser.csrf } : {}),
          },
          body: JSON.stringify(body),
        });
      const sessionLanguage = async (browser: Browser) =>
        (
          (await httpRequest({ url: `${server.baseUrl}/auth/session`, headers: { cookie: browser.cookie } }))
            .json as { user: { language: string | null } }
        ).user.language;

      it('keeps the console language for every later session, and clears it with null', async () => {
        const user = await staffUser(server, instituteId);
        const here = await signIn(server, user.email);
        assert.equal(await sessionLanguage(here), null);
        const saved = await putLanguage(here, { language: 'de-ch' });
        assert.equal(saved.status, 200, saved.text);
        assert.deepEqual(saved.json, { language: 'de-CH' });
        assert.equal(await sessionLanguage(await signIn(server, user.email)), 'de-CH');
        const cleared = await putLanguage(here, { language: null });
        assert.deepEqual(cleared.json, { language: null });
        assert.equal(await sessionLanguage(here), null);
      });

      it('refuses a language the service does not speak, a malformed one, none, and a request without CSRF', async () => {
        const user = await staffUser(server, instituteId);
        const here = await signIn(server, user.email);
        const refused = await putLanguage(here, { language: 'pt' });
        assert.equal(refused.status, 422);
        assert.deepEqual(refused.json, invalid('language', 'is not included in the list'));
        const malformed = await putLanguage(here, { language: 'not a tag' });
        assert.deepEqual(malformed.json, invalid('language', 'is not a valid language tag'));
        assert.equal((await putLanguage(here, {})).status, 422);
        assert.equal((await putLanguage(here, { language: 'nl' }, false)).status, 403);
        assert.equal(await sessionLanguage(here), null);
        const stranger = await putLanguage(
          { cookie: 'invigil_session=nothing', csrf: 'x' },
          { language: 'nl' },
        );
        assert.equal(stranger.status, 403);
      });
    });

    describe('API credentials', () => {
      it('GET /auth/api_credentials shows no token (only its hash is kept) and says the secret can be revealed', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        const answer = await httpRequest({
          url: `${server.baseUrl}/auth/api_credentials`,
          headers: { cookie: browser.cookie },
        });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, { api_token: null, secret_key_revealable: true });
        assert.equal(answer.headers['cache-control'], 'no-store');
        const none = await httpRequest({ url: `${server.baseUrl}/auth/api_credentials` });
        assert.equal(none.status, 403);
      });

      it('POST /auth/api_credentials/reveal answers the current secret key after the password, and records it', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        const answer = await consolePost(browser, '/auth/api_credentials/reveal', {
          password: GOOD_PASSWORD,
        });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, { secret_key: user.credentials.secretKey });
        assert.equal(answer.headers['cache-control'], 'no-store');
        // Revealing changes nothing: the credentials still sign requests.
        assert.equal((await user.client.v3('GET', '/exams')).status, 200);
        assert.ok((await actionsOf(user.id)).includes('api_secret_revealed 200'));
      });

      it('reveal refuses a wrong password (generic 422, recorded, throttled) and a cookie without CSRF', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        const wrong = await consolePost(browser, '/auth/api_credentials/reveal', {
          password: 'this is not it at all',
        });
        assert.equal(wrong.status, 422);
        assert.deepEqual(wrong.json, WRONG);
        assert.doesNotMatch(wrong.text, new RegExp(user.credentials.secretKey));
        const noCsrf = await consolePost(
          browser,
          '/auth/api_credentials/reveal',
          { password: GOOD_PASSWORD },
          { csrf: false },
        );
        assert.equal(noCsrf.status, 403);
        assert.deepEqual(noCsrf.json, NOT_AUTHORIZED);
        for (let i = 0; i < 2; i += 1) {
          await consolePost(browser, '/auth/api_credentials/reveal', { password: `wrong ${i} long enough` });
        }
        const blocked = await consolePost(browser, '/auth/api_credentials/reveal', {
          password: GOOD_PASSWORD,
        });
        assert.equal(blocked.status, 429);
        assert.ok(blocked.headers['retry-after'] !== undefined);
        const actions = await actionsOf(user.id);
        assert.equal(actions.filter((action) => action === 'password_confirmation_failed 422').length, 3);
        assert.ok(!actions.includes('api_secret_revealed 200'));
      });

      it('POST /auth/api_credentials/rotate issues new credentials once; the old ones fail a signed request at once', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        assert.equal((await user.client.v3('GET', '/exams')).status, 200);
        const answer = await consolePost(browser, '/auth/api_credentials/rotate', {
          password: GOOD_PASSWORD,
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.headers['cache-control'], 'no-store');
        const fresh = answer.json as { api_token: string; secret_key: string };
        assert.match(fresh.api_token, /^[0-9a-f]{32}$/);
        assert.match(fresh.secret_key, /^[0-9a-f]{48}$/);
        assert.notEqual(fresh.api_token, user.credentials.apiToken);
        assert.notEqual(fresh.secret_key, user.credentials.secretKey);

        const old = await user.client.v3('GET', '/exams');
        assert.equal(old.status, 403);
        assert.deepEqual(old.json, NOT_AUTHORIZED);
        const renewed = new ApiClient(server.baseUrl, {
          apiToken: fresh.api_token,
          secretKey: fresh.secret_key,
        });
        assert.equal((await renewed.v3('GET', '/exams')).status, 200);
        // The session is not touched, and the secret revealed now is the new one.
        const revealed = await consolePost(browser, '/auth/api_credentials/reveal', {
          password: GOOD_PASSWORD,
        });
        assert.deepEqual(revealed.json, { secret_key: fresh.secret_key });
        assert.ok((await actionsOf(user.id)).includes('api_credentials_rotated 200'));
      });

      it('rotate refuses a wrong password and a missing CSRF token, and the old credentials keep working', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        const wrong = await consolePost(browser, '/auth/api_credentials/rotate', {
          password: 'nope, not this one',
        });
        assert.equal(wrong.status, 422);
        assert.deepEqual(wrong.json, WRONG);
        const noCsrf = await consolePost(
          browser,
          '/auth/api_credentials/rotate',
          { password: GOOD_PASSWORD },
          { csrf: false },
        );
        assert.equal(noCsrf.status, 403);
        const missingPassword = await consolePost(browser, '/auth/api_credentials/rotate', {});
        assert.equal(missingPassword.status, 422);
        assert.deepEqual(missingPassword.json, missing('password'));
        assert.equal((await user.client.v3('GET', '/exams')).status, 200);
      });

      it('a user without a password cannot reveal or rotate: said like a wrong password', async () => {
        const user = await staffUser(server, instituteId);
        const browser = await signIn(server, user.email);
        await server.app.database.db
          .updateTable('users')
          .set({ password_hash: null })
          .where('id', '=', user.id)
          .execute();
        const state = await httpRequest({
          url: `${server.baseUrl}/auth/api_credentials`,
          headers: { cookie: browser.cookie },
        });
        assert.deepEqual(state.json, { api_token: null, secret_key_revealable: false });
        const answer = await consolePost(browser, '/auth/api_credentials/reveal', {
          password: GOOD_PASSWORD,
        });
        assert.equal(answer.status, 422);
        assert.deepEqual(answer.json, WRONG);
      });

      it('refuses every account route to a session limited to enrolling a second factor', async () => {
        const required = await server.institute();
        const superuser = await staffUser(server, required, 'superuser');
        const root = await signIn(server, superuser.email);
        const setting = await consoleV3(server, root, 'PUT', `/institutes/${required}`, {
          body: { require_second_factor_for_administrators: true },
          csrf: root.csrf,
        });
        assert.equal(setting.status, 200, setting.text);
        const admin = await staffUser(server, required, 'administrator');
        const browser = await signIn(server, admin.email);
        const answers = [
          await httpRequest({
            url: `${server.baseUrl}/auth/api_credentials`,
            headers: { cookie: browser.cookie },
          }),
          await consolePost(browser, '/auth/api_credentials/reveal', { password: GOOD_PASSWORD }),
          await consolePost(browser, '/auth/api_credentials/rotate', { password: GOOD_PASSWORD }),
          await consolePost(browser, '/auth/password/change', {
            current_password: GOOD_PASSWORD,
            new_password: NEW_PASSWORD,
          }),
        ];
        for (const answer of answers) {
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        }
        const signed = await admin.client.v3('GET', '/institutes/:id', { id: required });
        assert.equal(signed.status, 200, signed.text);
      });
    });

    it('never writes a password or a secret into the audit log', async () => {
      const user = await staffUser(server, instituteId);
      const browser = await signIn(server, user.email);
      await consolePost(browser, '/auth/api_credentials/reveal', { password: GOOD_PASSWORD });
      const rows = await server.app.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('user_id', '=', user.id)
        .execute();
      const text = JSON.stringify(rows);
      assert.ok(!text.includes(GOOD_PASSWORD));
      assert.ok(!text.includes(user.credentials.secretKey));
      assert.ok(rows.every((row: Json) => row.email === null || typeof row.email === 'string'));
    });
  });
}
