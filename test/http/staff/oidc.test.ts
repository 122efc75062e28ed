import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { base32Decode, hotp, totpStep } from '../../../src/security/totp.ts';
import { hashToken } from '../../../src/security/keys.ts';
import { invalid } from '../../helpers/answers.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { freePort } from '../../helpers/processes.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { startTestProvider, type TestProvider, throughProvider } from './oidc-provider.support.ts';
import { postJson, setCookieOf } from './support.ts';

type Json = Record<string, unknown>;

const MINUTE = 60 * 1000;
const SAML_METADATA =
  '<?xml version="1.0"?>\n<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" ' +
  'entityID="https://idp.example.org/saml"><md:IDPSSODescriptor/></md:EntityDescriptor>';

/** The `name=value` of the cookie `name` an answer sets, or undefined. */
function cookieSet(answer: HttpAnswer, name: string): string | undefined {
  const header = answer.headers['set-cookie'];
  const lines = Array.isArray(header) ? header : header === undefined ? [] : [header];
  return lines.find((line) => line.startsWith(`${name}=`));
}

for (const dialect of DIALECTS) {
  describe(`OpenID Connect staff sign-in [${dialect}]`, () => {
    // Real time: the provider signs its tokens with the real clock, and the client checks them so.
    const clock = new TestClock(Date.now());
    let server: TestServer;
    let idp: TestProvider;
    let publicUrl: string;
    let home: number;
    let other: number;
    let providerId: number;
    let samlId: number;
    let sequence = 0;

    /** A user of `instituteId` and a provider account with that email (claims as given). */
    async function person(
      instituteId: number,
      claims: { email_verified?: unknown; emailCase?: 'upper'; noEmail?: boolean } = {},
      role: 'teacher' | 'administrator' = 'teacher',
    ) {
      sequence += 1;
      const email = `person${sequence}-${Date.now()}@uni.example.org`;
      const user = await server.user(instituteId, role, email);
      const accountId = `account-${sequence}`;
      idp.accounts.set(accountId, {
        ...(claims.noEmail === true
          ? {}
          : { email: claims.emailCase === 'upper' ? email.toUpperCase() : email }),
        email_verified: 'email_verified' in claims ? claims.email_verified : true,
      });
      return { ...user, email, accountId };
    }

    /** GET /auth/oidc/:id/start, as a browser following the console's button. */
    function start(id: number | string, query = '', cookie?: string): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/auth/oidc/${id}/start${query}`,
        headers: cookie === undefined ? {} : { cookie },
      });
    }

    /**
     * Starts a sign-in, lets the provider sign in `accountId` (`deny`: refuse), and returns the callback
     * address it redirects to with the browser's binding cookie, without calling the callback yet.
     */
    async function toCallback(
      accountId: string,
      options: { id?: number; query?: string } = {},
    ): Promise<{ callback: string; binding: string; authorization: URL }> {
      idp.next = accountId === 'deny' ? 'deny' : { accountId };
      const started = await start(options.id ?? providerId, options.query ?? '');
      assert.equal(started.status, 302, started.text);
      const location = String(started.headers.location);
      assert.ok(location.startsWith(`${idp.issuer}/`), `redirected to ${location}`);
      const binding = cookieSet(started, 'invigil_oidc')?.split(';')[0];
      assert.ok(binding !== undefined, 'no binding cookie');
      const callback = await throughProvider(location, `${publicUrl}/auth/oidc/callback`);
      return { callback, binding, authorization: new URL(location) };
    }

    function callback(url: string, cookie?: string): Promise<HttpAnswer> {
      return httpRequest({ url, headers: cookie === undefined ? {} : { cookie } });
    }

    /** The whole round trip. Returns the callback's answer. */
    async function signInThrough(accountId: string, options: { id?: number; query?: string } = {}) {
      const reached = await toCallback(accountId, options);
      return callback(reached.callback, reached.binding);
    }

    /** Asserts a refusal: a 302 to the sign-in page with `code`, and no session cookie. */
    function refused(answer: HttpAnswer, code: string): void {
      assert.equal(answer.status, 302, answer.text);
      assert.equal(answer.headers.location, `${publicUrl}/console/sign-in?error=${code}`);
      assert.equal(cookieSet(answer, 'invigil_session'), undefined, 'no session cookie on a refusal');
      assert.equal(answer.headers['cache-control'], 'no-store');
    }

    const lastEvent = async () =>
      server.app.database.db
        .selectFrom('audit_events')
        .selectAll()
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();

    before(async () => {
      const port = await freePort();
      publicUrl = `http://127.0.0.1:${port}`;
      idp = await startTestProvider(`${publicUrl}/auth/oidc/callback`);
      // The test provider is on loopback, which the guarded outbound client refuses unless named.
      server = await startTestServer(dialect, {
        clock,
        port,
        env: { PUBLIC_URL: publicUrl, OUTBOUND_ALLOWLIST: '127.0.0.1' },
      });
      home = await server.institute('Home University');
      other = await server.institute('Other College');
      const created = await server.app.services.identityProviders.createOidc({
        instituteId: home,
        name: 'Home Login',
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecret: idp.clientSecret,
      });
      providerId = created.id;
      samlId = (
        await server.app.services.identityProviders.create({
          name: 'Home SAML',
          protocol: 'saml',
          metadata: SAML_METADATA,
          instituteId: home,
        })
      ).id;
    });
    after(async () => {
      await server?.close();
      await idp?.close();
    });
    // Every request comes from 127.0.0.1: each test starts with the address's counts at zero.
    beforeEach(async () => {
      await server.app.database.db.deleteFrom('sign_in_throttles').execute();
    });

    describe('GET /auth/identity_providers', () => {
      it('lists the OIDC providers one can sign in with, and no SAML, global or incomplete one', async () => {
        await server.app.services.identityProviders.create({
          name: 'Global OIDC',
          protocol: 'oidc',
          metadata: JSON.stringify({ issuer: idp.issuer, client_id: 'x', client_secret: 'y' }),
          instituteId: null,
        });
        await server.app.services.identityProviders.create({
          name: 'Discovery document only',
          protocol: 'oidc',
          metadata: JSON.stringify({ issuer: 'https://login.example.org' }),
          instituteId: home,
        });
        const answer = await httpRequest({ url: `${server.baseUrl}/auth/identity_providers` });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, {
          identity_providers: [
            { id: providerId, name: 'Home Login', institute_id: home, institute_name: 'Home University' },
          ],
        });
        assert.equal(answer.headers['cache-control'], 'no-store');
      });
    });

    describe('GET /auth/oidc/:id/start', () => {
      it('redirects to the provider: code flow, PKCE S256, state, nonce, the redirect URI; binds the browser', async () => {
        const answer = await start(providerId);
        assert.equal(answer.status, 302, answer.text);
        const url = new URL(String(answer.headers.location));
        assert.equal(url.origin, idp.issuer);
        const params = Object.fromEntries(url.searchParams);
        assert.equal(params.response_type, 'code');
        assert.equal(params.client_id, idp.clientId);
        assert.equal(params.redirect_uri, `${publicUrl}/auth/oidc/callback`);
        assert.equal(params.scope, 'openid email profile');
        assert.equal(params.code_challenge_method, 'S256');
        assert.match(params.code_challenge ?? '', /^[A-Za-z0-9_-]{43}$/);
        assert.match(params.state ?? '', /^[A-Za-z0-9_-]{43}$/);
        assert.match(params.nonce ?? '', /^[A-Za-z0-9_-]{43}$/);
        const cookie = cookieSet(answer, 'invigil_oidc') ?? '';
        assert.match(
          cookie,
          /^invigil_oidc=[A-Za-z0-9_-]{43}; Path=\/auth\/oidc; HttpOnly; SameSite=Lax; Max-Age=600$/,
        );
        // The state is stored only as its hash, the verifier only encrypted.
        const row = await server.app.database.db
          .selectFrom('oidc_logins')
          .selectAll()
          .where('id', '=', hashToken(params.state ?? ''))
          .executeTakeFirstOrThrow();
        assert.equal(row.identity_provider_id, providerId);
        assert.equal(row.return_to, '/console');
        assert.equal(Number(row.expires_at) - Number(row.created_at), 10 * MINUTE);
        assert.match(row.code_verifier_encrypted, /^v1:/);
        assert.equal(row.browser_hash, hashToken(cookie.split(';')[0]?.split('=')[1] ?? ''));
      });

      it('keeps a well-formed binding cookie the browser already has, so two tabs can sign in at once', async () => {
        const first = await start(providerId);
        const binding = cookieSet(first, 'invigil_oidc')?.split(';')[0] ?? '';
        const second = await start(providerId, '', binding);
        assert.equal(cookieSet(second, 'invigil_oidc')?.split(';')[0], binding);
      });

      it('discovers a provider once and reuses the configuration', async () => {
        const count = idp.discoveries;
        await start(providerId);
        await start(providerId);
        assert.equal(idp.discoveries, count);
      });

      it('refuses a SAML provider, an unknown id and one that is not a number, to the sign-in page', async () => {
        refused(await start(samlId), 'unknown_provider');
        const event = await lastEvent();
        assert.equal(event.action, 'sign_in_failed');
        assert.equal(event.target_type, 'identity_providers');
        assert.equal(Number(event.target_id), samlId);
        // Refused: 403 in the log, as a refused password sign-in (the answer itself is a 302).
        assert.equal(event.status, 403);
        refused(await start(987654321), 'unknown_provider');
        refused(await start('abc'), 'unknown_provider');
        refused(await start('1e3'), 'unknown_provider');
      });

      it('answers hostile ids and return_to values with a redirect, keeping only a plain path', async () => {
        for (const id of ['0', '-1', '18446744073709551616', '__proto__', '💥']) {
          refused(await start(encodeURIComponent(id)), 'unknown_provider');
        }
        // A NUL is refused before any route reads it, as in every request (docs/security.md).
        const nulId = await start('%00');
        assert.equal(nulId.status, 422, nulId.text);
        assert.deepEqual(nulId.json, invalid('id', 'contains a NUL character'));
        const nulReturn = await start(providerId, '?return_to=%00');
        assert.equal(nulReturn.status, 422, nulReturn.text);
        assert.deepEqual(nulReturn.json, invalid('return_to', 'contains a NUL character'));
        for (const query of [
          `?return_to=/${'x'.repeat(5000)}`,
          '?return_to[]=/a&return_to[]=/b',
          '?return_to[a]=/x',
          '?return_to=/%E2%80%AEevil',
          '?return_to=/ok%20path',
          '?return_to=%2F%2Fevil.example',
          '?return_to=/console%0d%0aSet-Cookie:%20x=y',
        ]) {
          const answer = await start(providerId, query);
          assert.equal(answer.status, 302, query);
          assert.ok(String(answer.headers.location).startsWith(`${idp.issuer}/`), query);
          const state = new URL(String(answer.headers.location)).searchParams.get('state') ?? '';
          const row = await server.app.database.db
            .selectFrom('oidc_logins')
            .select('return_to')
            .where('id', '=', hashToken(state))
            .executeTakeFirstOrThrow();
          assert.equal(row.return_to, '/console', query);
        }
      });

      it('answers provider_unavailable when the provider cannot be reached', async () => {
        const closed = await freePort();
        const unreachable = await server.app.services.identityProviders.createOidc({
          instituteId: home,
          name: 'Down',
          issuer: `http://127.0.0.1:${closed}`,
          clientId: 'x',
          clientSecret: 'y',
        });
        refused(await start(unreachable.id), 'provider_unavailable');
        const event = await lastEvent();
        assert.equal(event.action, 'sign_in_failed');
        assert.equal(event.status, 502);
      });

      it('reaches providers only through the guarded client: a loopback provider not allowlisted is unavailable', async () => {
        const guardedPort = await freePort();
        const guardedUrl = `http://127.0.0.1:${guardedPort}`;
        const guarded = await startTestServer(dialect, {
          clock,
          port: guardedPort,
          env: { PUBLIC_URL: guardedUrl },
        });
        try {
          const institute = await guarded.institute('Guarded University');
          const provider = await guarded.app.services.identityProviders.createOidc({
            instituteId: institute,
            name: 'Home Login',
            issuer: idp.issuer,
            clientId: idp.clientId,
            clientSecret: idp.clientSecret,
          });
          const answer = await httpRequest({ url: `${guardedUrl}/auth/oidc/${provider.id}/start` });
          assert.equal(answer.status, 302, answer.text);
          assert.equal(answer.headers.location, `${guardedUrl}/console/sign-in?error=provider_unavailable`);
        } finally {
          await guarded.close();
        }
      });
    });

    describe('GET /auth/oidc/callback', () => {
      it('signs a verified user of the institute in: the session cookie, /auth/session, return_to, the audit log', async () => {
        const user = await person(home, { emailCase: 'upper' });
        const answer = await signInThrough(user.accountId, {
          query: `?return_to=${encodeURIComponent('/console/exams/7?tab=students')}`,
        });
        assert.equal(answer.status, 302, answer.text);
        assert.equal(answer.headers.location, `${publicUrl}/console/exams/7?tab=students`);
        const header = cookieSet(answer, 'invigil_session') ?? '';
        assert.match(header, /^invigil_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax$/);
        const session = await httpRequest({
          url: `${server.baseUrl}/auth/session`,
          headers: { cookie: setCookieOf(answer) ?? '' },
        });
        assert.equal(session.status, 200, session.text);
        const body = object(session.json, 'session');
        assert.deepEqual(object(body.user, 'user'), {
          id: user.id,
          institute_id: home,
          email: user.email,
          name: object(body.user, 'user').name,
          role: 'teacher',
          language: null,
        });
        assert.equal(body.second_factor_enrolment_required, false);
        const event = await lastEvent();
        assert.equal(event.action, 'sign_in');
        assert.equal(event.user_id, user.id);
        assert.equal(event.institute_id, home);
        assert.equal(event.target_type, 'identity_providers');
        assert.equal(Number(event.target_id), providerId);
        assert.equal(event.status, 302);
      });

      it('ignores a return_to on another origin, or that is not a plain path', async () => {
        const user = await person(home);
        for (const target of ['https://evil.example/x', '//evil.example/x', '/\\evil.example/x', 'console']) {
          const answer = await signInThrough(user.accountId, {
            query: `?return_to=${encodeURIComponent(target)}`,
          });
          assert.equal(answer.status, 302, answer.text);
          assert.equal(answer.headers.location, `${publicUrl}/console`, target);
          assert.ok(cookieSet(answer, 'invigil_session') !== undefined);
        }
      });

      it('refuses a wrong state, and a state used once already', async () => {
        const user = await person(home);
        const reached = await toCallback(user.accountId);
        const wrong = new URL(reached.callback);
        wrong.searchParams.set('state', 'A'.repeat(43));
        refused(await callback(wrong.href, reached.binding), 'invalid_state');
        assert.equal((await lastEvent()).action, 'sign_in_failed');
        const first = await callback(reached.callback, reached.binding);
        assert.equal(first.status, 302);
        assert.equal(first.headers.location, `${publicUrl}/console`);
        refused(await callback(reached.callback, reached.binding), 'invalid_state');
      });

      it('refuses a callback without the binding cookie of the browser that started it (login CSRF)', async () => {
        const user = await person(home);
        const reached = await toCallback(user.accountId);
        refused(await callback(reached.callback), 'invalid_state');
        refused(await callback(reached.callback, `invigil_oidc=${'B'.repeat(43)}`), 'invalid_state');
      });

      it('refuses an expired pending login (10 minutes)', async () => {
        const user = await person(home);
        const reached = await toCallback(user.accountId);
        clock.current += 10 * MINUTE + 1000;
        try {
          refused(await callback(reached.callback, reached.binding), 'invalid_state');
        } finally {
          clock.current = Date.now();
        }
      });

      it('refuses an ID token whose nonce is not the one sent', async () => {
        const user = await person(home);
        const reached = await toCallback(user.accountId);
        const state = new URL(reached.callback).searchParams.get('state') ?? '';
        await server.app.database.db
          .updateTable('oidc_logins')
          .set({ nonce: 'not-the-nonce-sent' })
          .where('id', '=', hashToken(state))
          .execute();
        refused(await callback(reached.callback, reached.binding), 'invalid_response');
      });

      it('refuses a code exchanged without the right PKCE verifier', async () => {
        const user = await person(home);
        const reached = await toCallback(user.accountId);
        const state = new URL(reached.callback).searchParams.get('state') ?? '';
        const otherStart = await start(providerId);
        const otherState = new URL(String(otherStart.headers.location)).searchParams.get('state') ?? '';
        const otherRow = await server.app.database.db
          .selectFrom('oidc_logins')
          .select('code_verifier_encrypted')
          .where('id', '=', hashToken(otherState))
          .executeTakeFirstOrThrow();
        await server.app.database.db
          .updateTable('oidc_logins')
          .set({ code_verifier_encrypted: otherRow.code_verifier_encrypted })
          .where('id', '=', hashToken(state))
          .execute();
        refused(await callback(reached.callback, reached.binding), 'invalid_response');
      });

      it('refuses an email the provider does not say is verified', async () => {
        for (const verified of [false, 'true', undefined]) {
          const user = await person(home, { email_verified: verified });
          refused(await signInThrough(user.accountId), 'email_not_verified');
        }
        const event = await lastEvent();
        assert.equal(event.action, 'sign_in_failed');
        assert.equal(event.target_type, 'identity_providers');
        assert.match(String(event.email), /@uni\.example\.org$/);
      });

      it('refuses an account the provider names no email for', async () => {
        const user = await person(home, { noEmail: true });
        refused(await signInThrough(user.accountId), 'email_missing');
      });

      it('refuses an email no user has', async () => {
        idp.accounts.set('stranger', { email: 'nobody-here@uni.example.org', email_verified: true });
        refused(await signInThrough('stranger'), 'no_matching_user');
        const event = await lastEvent();
        assert.equal(event.email, 'nobody-here@uni.example.org');
        assert.equal(event.user_id, null);
      });

      it("refuses a user of another institute than the provider's", async () => {
        const user = await person(other);
        refused(await signInThrough(user.accountId), 'no_matching_user');
      });

      it('refuses a deactivated user', async () => {
        const user = await person(home);
        await server.app.database.db
          .updateTable('users')
          .set({ active: false })
          .where('id', '=', user.id)
          .execute();
        refused(await signInThrough(user.accountId), 'no_matching_user');
      });

      it('sends a user who cancels at the provider back with provider_error', async () => {
        refused(await signInThrough('deny'), 'provider_error');
      });

      it('answers hostile callbacks with a redirect, never an error page', async () => {
        for (const query of [
          '',
          '?state=',
          '?state[]=a&state[]=b',
          '?code=x',
          `?state=${'x'.repeat(5000)}`,
          '?state=%ZZ',
        ]) {
          refused(await callback(`${server.baseUrl}/auth/oidc/callback${query}`), 'invalid_state');
        }
      });

      it('asks a user with a second factor for a code, as after a password', async () => {
        const user = await person(home);
        const secret = await server.app.services.staffAuth.startSecondFactor(user.id);
        const code = (offset: number) => hotp(base32Decode(secret), totpStep(clock.now()) + offset);
        await server.app.services.staffAuth.confirmSecondFactor(user.id, code(0));
        const answer = await signInThrough(user.accountId, { query: '?return_to=/console/exams' });
        assert.equal(answer.status, 302, answer.text);
        assert.equal(cookieSet(answer, 'invigil_session'), undefined, 'no session before the code');
        const location = new URL(String(answer.headers.location));
        assert.equal(
          `${location.origin}${location.pathname}${location.search}`,
          `${publicUrl}/console/sign-in`,
        );
        const fragment = new URLSearchParams(location.hash.slice(1));
        assert.equal(fragment.get('return_to'), '/console/exams');
        assert.ok(fragment.get('expires_at') !== null);
        const second = await postJson(server, '/auth/sign_in/second_factor', {
          pending_token: fragment.get('pending_token'),
          code: code(1),
        });
        assert.equal(second.status, 200, second.text);
        assert.equal(object(object(second.json, 'session').user, 'user').id, user.id);
      });

      it('limits an administrator of an institute that requires a second factor to enrolling one', async () => {
        const strict = await server.institute('Strict Institute');
        await server.app.database.db
          .updateTable('institutes')
          .set({ require_second_factor_for_administrators: true })
          .where('id', '=', strict)
          .execute();
        const strictProvider = await server.app.services.identityProviders.createOidc({
          instituteId: strict,
          name: 'Strict Login',
          issuer: idp.issuer,
          clientId: idp.clientId,
          clientSecret: idp.clientSecret,
        });
        const admin = await person(strict, {}, 'administrator');
        const answer = await signInThrough(admin.accountId, { id: strictProvider.id });
        assert.equal(answer.status, 302, answer.text);
        const session = await httpRequest({
          url: `${server.baseUrl}/auth/session`,
          headers: { cookie: setCookieOf(answer) ?? '' },
        });
        assert.equal(object(session.json, 'session').second_factor_enrolment_required, true);
      });
    });

    describe('throttling', () => {
      const garbageCallback = () => callback(`${server.baseUrl}/auth/oidc/callback?state=${'x'.repeat(43)}`);
      const eventCount = async () =>
        Number(
          (
            await server.app.database.db
              .selectFrom('audit_events')
              .select((eb) => eb.fn.countAll().as('count'))
              .executeTakeFirstOrThrow()
          ).count,
        );
      const pendingCount = async () =>
        Number(
          (
            await server.app.database.db
              .selectFrom('oidc_logins')
              .select((eb) => eb.fn.countAll().as('count'))
              .executeTakeFirstOrThrow()
          ).count,
        );

      it('counts failed callbacks per address with password sign-in: after 20, start and callback answer error=throttled, unrecorded, until the block ends', async () => {
        const user = await person(home);
        // A sign-in under way at the provider while the address runs into the throttle.
        const reached = await toCallback(user.accountId);
        for (let attempt = 0; attempt < 20; attempt += 1) refused(await garbageCallback(), 'invalid_state');
        assert.equal((await lastEvent()).status, 403);
        const recorded = await eventCount();

        refused(await callback(reached.callback, reached.binding), 'throttled');
        const blockedStart = await start(providerId);
        refused(blockedStart, 'throttled');
        assert.equal(cookieSet(blockedStart, 'invigil_oidc'), undefined);
        // One throttle for every way in: the password sign-in from this address waits too.
        const password = await postJson(server, '/auth/sign_in', {
          email: user.email,
          password: 'no password was ever set here',
        });
        assert.equal(password.status, 429, password.text);
        // Throttled attempts checked nothing and are not recorded.
        assert.equal(await eventCount(), recorded);

        clock.current += 2000;
        try {
          // The throttled callback did not spend the state: the same sign-in completes now.
          const done = await callback(reached.callback, reached.binding);
          assert.equal(done.status, 302, done.text);
          assert.equal(done.headers.location, `${publicUrl}/console`);
          assert.ok(cookieSet(done, 'invigil_session') !== undefined);
          // Failures after the block double it, as for passwords.
          refused(await garbageCallback(), 'invalid_state');
          refused(await garbageCallback(), 'throttled');
        } finally {
          clock.current = Date.now();
        }
      });

      it('counts refused starts (unknown provider) as failed sign-ins, but not an unreachable provider', async () => {
        const closed = await freePort();
        const down = await server.app.services.identityProviders.createOidc({
          instituteId: home,
          name: 'Down for throttling',
          issuer: `http://127.0.0.1:${closed}`,
          clientId: 'x',
          clientSecret: 'y',
        });
        for (let attempt = 0; attempt < 25; attempt += 1) {
          refused(await start(down.id), 'provider_unavailable');
        }
        assert.equal((await start(providerId)).status, 302);
        assert.ok(String((await start(providerId)).headers.location).startsWith(`${idp.issuer}/`));
        for (let attempt = 0; attempt < 20; attempt += 1) refused(await start(samlId), 'unknown_provider');
        refused(await start(providerId), 'throttled');
      });

      it('bounds the starts of an address: after 100 in 10 minutes, error=throttled and no pending login written, until the window ends', async () => {
        await server.app.database.db.deleteFrom('oidc_logins').execute();
        for (let attempt = 0; attempt < 100; attempt += 1) {
          const answer = await start(providerId);
          assert.equal(answer.status, 302, answer.text);
          assert.ok(String(answer.headers.location).startsWith(`${idp.issuer}/`));
        }
        assert.equal(await pendingCount(), 100);
        const recorded = await eventCount();
        const refusedStart = await start(providerId);
        refused(refusedStart, 'throttled');
        assert.equal(cookieSet(refusedStart, 'invigil_oidc'), undefined);
        assert.equal(await pendingCount(), 100);
        assert.equal(await eventCount(), recorded);
        // The bound is on starts, not failures: a callback from the address is still judged.
        refused(await garbageCallback(), 'invalid_state');

        clock.current += 10 * MINUTE;
        try {
          const again = await start(providerId);
          assert.equal(again.status, 302, again.text);
          assert.ok(String(again.headers.location).startsWith(`${idp.issuer}/`));
          // The expired pending logins went with that start: the table holds one window's worth.
          assert.equal(await pendingCount(), 1);
        } finally {
          clock.current = Date.now();
        }
      });
    });

    describe('the client secret', () => {
      it('is stored encrypted and never answered by the V3 listing', async () => {
        const row = await server.app.database.db
          .selectFrom('identity_providers')
          .select('metadata')
          .where('id', '=', providerId)
          .executeTakeFirstOrThrow();
        assert.ok(!row.metadata.includes(idp.clientSecret), 'the secret is not stored in clear');
        const metadata = JSON.parse(row.metadata) as Json;
        assert.deepEqual(Object.keys(metadata).sort(), [
          'client_id',
          'client_secret_encrypted',
          'issuer',
          'scopes',
        ]);
        const admin = await server.user(home, 'administrator');
        const listed = await admin.client.v3('GET', '/identity_providers', {});
        assert.equal(listed.status, 200, listed.text);
        assert.ok(listed.text.includes('Home Login'));
        assert.ok(!listed.text.includes(idp.clientSecret));
        assert.ok(!listed.text.includes('client_secret'));
        assert.ok(!listed.text.includes(idp.clientId));
      });

      it('given in clear in OIDC metadata (idp create --metadata) is stored encrypted too', async () => {
        const created = await server.app.services.identityProviders.create({
          name: 'Metadata with secret',
          protocol: 'oidc',
          metadata: JSON.stringify({
            issuer: idp.issuer,
            client_id: 'c',
            client_secret: 'very-secret-value',
          }),
          instituteId: home,
        });
        const row = await server.app.database.db
          .selectFrom('identity_providers')
          .select('metadata')
          .where('id', '=', created.id)
          .executeTakeFirstOrThrow();
        assert.ok(!row.metadata.includes('very-secret-value'));
        assert.match(String((JSON.parse(row.metadata) as Json).client_secret_encrypted), /^v1:/);
      });
    });
  });
}
