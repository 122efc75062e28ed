/**
 * LTI 1.3 launches against the in-process fake platform (test/lti/fake-platform.ts): the login
 * initiation, the platform's authentication request, the id_token's verification and what a launch
 * leads to (a learner to the room, staff to the console, top-level when framed), every refusal as a
 * page and a log line, the browser binding (cookie, platform storage, a new window), the tool's key
 * set and its rotation, and the caching of the platform's key set.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { createToolKeys } from '../../../src/lti/keys.ts';
import { httpRequest, type HttpAnswer } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { ApiClient } from '../../helpers/client.ts';
import { DIALECTS, TestClock } from '../../helpers/server.ts';
import { CLAIM, ROLE } from '../../lti/fake-platform.ts';
import {
  authorize,
  cookiesOf,
  launchAs,
  logged,
  loginParams,
  type LtiWorld,
  postLaunch,
  startLogin,
  startLtiWorld,
} from './lti-13.support.ts';

const DAY = 24 * 60 * 60_000;

/** The first `<a ... href>` of a page whose id is `open`, decoded. */
function openLink(answer: HttpAnswer): { href: string; target: string | undefined } {
  const match = /<a class="button" id="open" href="([^"]+)" target="([^"]+)"/.exec(answer.text);
  assert.ok(match !== null, `no open link in ${answer.text}`);
  return { href: (match[1] ?? '').replaceAll('&amp;', '&'), target: match[2] };
}

/** The data attributes of the platform-storage element. */
function storageData(answer: HttpAnswer): Record<string, string> {
  const element = /<p id="platform-storage"([^>]*)>/.exec(answer.text);
  assert.ok(element !== null, answer.text);
  const data: Record<string, string> = {};
  for (const match of (element[1] ?? '').matchAll(/data-([a-z]+)="([^"]*)"/g)) {
    data[match[1] ?? ''] = (match[2] ?? '').replaceAll('&amp;', '&');
  }
  return data;
}

function hiddenFields(answer: HttpAnswer): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const match of answer.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[match[1] ?? ''] = match[2] ?? '';
  }
  return fields;
}

for (const dialect of DIALECTS) {
  describe(`LTI 1.3 launches [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let world: LtiWorld;
    let teacher: ApiClient;
    let teacherEmail: string;
    let examId: number;
    let users = 0;

    before(async () => {
      world = await startLtiWorld(dialect, { clock });
      teacherEmail = `teacher-${crypto.randomBytes(3).toString('hex')}@example.org`;
      const created = await world.app.services.users.create(world.instituteId, {
        email: teacherEmail,
        name: 'Teacher',
        role: 'teacher',
      });
      teacher = new ApiClient(world.baseUrl, created.credentials);
      const exam = await teacher.v3('POST', '/exams', {
        name: 'Final exam',
        type: 'classroom',
        duration_minutes: 60,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = object(object(exam.json, 'body').exam, 'exam').id as number;
      const now = clock.now();
      await world.app.database.db
        .insertInto('lti_resources')
        .values({
          institute_id: world.instituteId,
          tool_provider_id: world.toolProviderId,
          exam_id: examId,
          resource_link_id: 'resource-link-1',
          context_id: 'course-1',
          title: 'Final exam',
          created_at: now,
          updated_at: now,
        })
        .execute();
    });

    after(async () => {
      await world.close();
    });

    /** A fresh platform user with these claims (over the learner defaults). Returns the login_hint. */
    function platformUser(overrides: Record<string, unknown> = {}): string {
      users += 1;
      const hint = `user-${users}-${crypto.randomBytes(3).toString('hex')}`;
      world.platform.launches.set(hint, world.platform.launchClaims(hint, overrides));
      return hint;
    }

    /** The refusal's page and log line: status, an HTML page with a heading, the code logged. */
    function assertRefused(answer: HttpAnswer, status: number, code: string, text: RegExp): void {
      assert.equal(answer.status, status, answer.text);
      assert.match(answer.headers['content-type'] ?? '', /^text\/html/);
      assert.match(answer.text, /<h1>/);
      assert.match(answer.text, text);
      assert.doesNotMatch(answer.text, /at .*\.ts:\d+/, 'no stack trace');
      assert.match(String(answer.headers['content-security-policy']), /default-src 'none'/);
      const lines = logged(world, 'lti launch refused').filter((line) => line.code === code);
      assert.ok(lines.length > 0, `no log line with code ${code}`);
    }

    describe('GET /lti/jwks', () => {
      it('publishes the tool key set (public RSA keys with kid, alg and use), cacheable for five minutes', async () => {
        const answer = await httpRequest({ url: `${world.baseUrl}/lti/jwks` });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers['cache-control'], 'public, max-age=300');
        const keys = object(answer.json, 'jwks').keys as Record<string, unknown>[];
        assert.ok(keys.length >= 1);
        for (const key of keys) {
          assert.equal(key.kty, 'RSA');
          assert.equal(key.alg, 'RS256');
          assert.equal(key.use, 'sig');
          assert.equal(typeof key.kid, 'string');
          assert.equal(key.d, undefined, 'no private part');
        }
      });

      it('rotates the signing key after the rotation age and keeps the old one published for the overlap', async () => {
        const keysClock = new TestClock(clock.now());
        const keys = createToolKeys({
          db: world.app.database.db,
          clock: keysClock,
          serverKey: crypto.randomBytes(32),
        });
        const kidOf = (jwt: string) =>
          (JSON.parse(Buffer.from(jwt.split('.')[0] ?? '', 'base64url').toString()) as { kid: string }).kid;
        // Another tool key store on the same table (the app's) may already have made a key: start clean.
        await world.app.database.db.deleteFrom('lti_tool_keys').execute();
        const first = await keys.sign({ iss: 'tool' });
        const firstKid = kidOf(first);
        assert.equal(kidOf(await keys.sign({ iss: 'tool' })), firstKid, 'the same key signs until rotation');
        keysClock.current += 91 * DAY;
        const second = await keys.sign({ iss: 'tool' });
        assert.notEqual(kidOf(second), firstKid, 'a new key after 90 days');
        const published = await keys.jwks();
        assert.deepEqual(
          published.keys.map((key) => key.kid),
          [kidOf(second), firstKid],
          'the old key stays published',
        );
        // A platform holding the key set verifies both tokens.
        const set = createLocalJWKSet(published);
        await jwtVerify(first, set, { currentDate: new Date(clock.now()) });
        await jwtVerify(second, set, { currentDate: new Date(keysClock.now()) });
        // Over HTTP too: the service's own store reads the same table.
        const answer = await httpRequest({ url: `${world.baseUrl}/lti/jwks` });
        const served = (object(answer.json, 'jwks').keys as { kid: string }[]).map((key) => key.kid);
        assert.ok(served.includes(firstKid) && served.includes(kidOf(second)), JSON.stringify(served));
        keysClock.current += 31 * DAY;
        assert.deepEqual(
          (await keys.jwks()).keys.map((key) => key.kid),
          [kidOf(second)],
          'gone after the overlap',
        );
      });
    });

    describe('GET and POST /lti/login', () => {
      it('redirects to the platform with the OIDC authentication request and sets a partitioned binding cookie', async () => {
        const hint = platformUser();
        const login = await startLogin(world, hint);
        assert.equal(login.authUrl.origin + login.authUrl.pathname, world.platform.authLoginUrl);
        const query = login.authUrl.searchParams;
        assert.equal(query.get('scope'), 'openid');
        assert.equal(query.get('response_type'), 'id_token');
        assert.equal(query.get('response_mode'), 'form_post');
        assert.equal(query.get('prompt'), 'none');
        assert.equal(query.get('client_id'), world.platform.clientId);
        assert.equal(query.get('redirect_uri'), `${world.baseUrl}/lti/launch`);
        assert.equal(query.get('login_hint'), hint);
        assert.equal(query.get('lti_message_hint'), 'message-hint');
        assert.ok((query.get('state') ?? '').length >= 32);
        assert.ok((query.get('nonce') ?? '').length >= 32);
        const cookie = String(login.answer.headers['set-cookie']);
        assert.match(cookie, /^invigil_lti_[0-9a-f]{16}=/);
        for (const part of [
          'Path=/lti',
          'HttpOnly',
          'SameSite=None',
          'Secure',
          'Partitioned',
          'Max-Age=600',
        ]) {
          assert.ok(cookie.includes(part), `${part} in ${cookie}`);
        }
        // The platform's own checks of the request pass.
        await authorize(login);
        assert.deepEqual(world.platform.authRefusals, []);
      });

      it('accepts the initiation as a form post', async () => {
        const answer = await httpRequest({
          url: `${world.baseUrl}/lti/login`,
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: loginParams(world, platformUser()).toString(),
        });
        assert.equal(answer.status, 302);
        assert.ok(String(answer.headers.location).startsWith(world.platform.authLoginUrl));
      });

      it('refuses an unknown platform (404), a missing login_hint (400) and an unknown deployment (403)', async () => {
        const unknown = await httpRequest({
          url: `${world.baseUrl}/lti/login?${loginParams(world, 'x', { iss: 'https://other.example' }).toString()}`,
        });
        assertRefused(unknown, 404, 'unknown_platform', /not registered/);
        const params = loginParams(world, 'x');
        params.delete('login_hint');
        assertRefused(
          await httpRequest({ url: `${world.baseUrl}/lti/login?${params.toString()}` }),
          400,
          'invalid_login',
          /login_hint/,
        );
        assertRefused(
          await httpRequest({
            url: `${world.baseUrl}/lti/login?${loginParams(world, 'x', { lti_deployment_id: 'other' }).toString()}`,
          }),
          403,
          'unknown_deployment',
          /deployment/,
        );
      });
    });

    describe('POST /lti/launch: a learner', () => {
      it('sets the student’s language from the launch’s locale, ignoring one the service does not speak', async () => {
        const shownLanguage = async (hint: string) => {
          const found = await teacher.v3('GET', '/exams/:id/show_lti_student', {
            id: examId,
            student_lms_id: hint,
            resource_link_id: 'resource-link-1',
          });
          assert.equal(found.status, 200, found.text);
          return object(object(found.json, 'body').student, 'student').language;
        };
        const dutch = platformUser({ [CLAIM.launchPresentation]: { locale: 'nl-NL' } });
        assert.equal((await launchAs(world, dutch)).status, 303);
        assert.equal(await shownLanguage(dutch), 'nl-NL');
        // The next launch from a platform now set to Arabic updates it.
        world.platform.launches.set(
          dutch,
          world.platform.launchClaims(dutch, { [CLAIM.launchPresentation]: { locale: 'ar' } }),
        );
        assert.equal((await launchAs(world, dutch)).status, 303);
        assert.equal(await shownLanguage(dutch), 'ar');
        // Portuguese is not a language of the service: the launch goes on, the language stays unset.
        const brazilian = platformUser({ [CLAIM.launchPresentation]: { locale: 'pt-BR' } });
        assert.equal((await launchAs(world, brazilian)).status, 303);
        assert.equal(await shownLanguage(brazilian), null);
      });

      it('lands in the room (303) and show_lti_student finds the session', async () => {
        const hint = platformUser();
        const answer = await launchAs(world, hint);
        assert.equal(answer.status, 303, answer.text);
        const location = String(answer.headers.location);
        assert.match(location, new RegExp(`^${world.baseUrl}/room/[^/]+$`));
        const token = decodeURIComponent(location.split('/room/')[1] ?? '');
        const found = await teacher.v3('GET', '/exams/:id/show_lti_student', {
          id: examId,
          student_lms_id: hint,
          resource_link_id: 'resource-link-1',
          context_id: 'course-1',
        });
        assert.equal(found.status, 200, found.text);
        const student = object(object(found.json, 'body').student, 'student');
        assert.equal(student.token, token);
        assert.equal(student.email, `${hint}@students.example.org`);
        // The room itself opens with that token.
        const room = await httpRequest({ url: location });
        assert.equal(room.status, 200);
        const line = logged(world, 'lti launch').at(-1);
        assert.equal(line?.outcome, 'room');
      });

      it('inside an iframe answers a page that opens the room in a new top-level window', async () => {
        const answer = await launchAs(world, platformUser(), { 'sec-fetch-dest': 'iframe' });
        assert.equal(answer.status, 200, answer.text);
        const link = openLink(answer);
        assert.match(link.href, new RegExp(`^${world.baseUrl}/room/`));
        assert.equal(link.target, '_blank');
        assert.match(String(answer.headers['content-security-policy']), /form-action 'none'/);
      });
    });

    describe('POST /lti/launch: an instructor', () => {
      it('is signed in to the console on the exam (303 with a session cookie)', async () => {
        const hint = platformUser({ [CLAIM.roles]: [ROLE.instructor], email: teacherEmail });
        const answer = await launchAs(world, hint);
        assert.equal(answer.status, 303, answer.text);
        assert.equal(answer.headers.location, `${world.baseUrl}/console/exams/${examId}`);
        const cookie = cookiesOf(answer);
        assert.match(cookie, /invigil_session=/);
        const session = await httpRequest({ url: `${world.baseUrl}/auth/session`, headers: { cookie } });
        assert.equal(session.status, 200, session.text);
        assert.equal(object(object(session.json, 'session').user, 'user').email, teacherEmail);
      });

      it('inside an iframe gets a single-use link that signs in top-level', async () => {
        const hint = platformUser({ [CLAIM.roles]: [ROLE.instructor], email: teacherEmail });
        const answer = await launchAs(world, hint, { 'sec-fetch-dest': 'iframe' });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(
          answer.headers['set-cookie'] === undefined || !cookiesOf(answer).includes('invigil_session'),
          true,
        );
        const link = openLink(answer);
        assert.match(link.href, new RegExp(`^${world.baseUrl}/lti/continue/`));
        const opened = await httpRequest({ url: link.href });
        assert.equal(opened.status, 303, opened.text);
        assert.equal(opened.headers.location, `${world.baseUrl}/console/exams/${examId}`);
        assert.match(cookiesOf(opened), /invigil_session=/);
        assertRefused(await httpRequest({ url: link.href }), 400, 'invalid_ticket', /already used/);
      });
    });

    describe('POST /lti/launch: refusals', () => {
      /** A login whose token the test signs itself. Returns the launch's answer. */
      async function launchWith(
        claims: (nonce: string, hint: string) => Record<string, unknown>,
        options: { key?: 'current' | 'stranger'; kid?: string } = {},
      ): Promise<HttpAnswer> {
        const hint = platformUser();
        const login = await startLogin(world, hint);
        const idToken = await world.platform.idToken(claims(login.nonce, hint), options);
        return postLaunch(world, { id_token: idToken, state: login.state }, { cookie: login.cookie });
      }
      const base = (nonce: string, hint: string) => ({ ...world.platform.launchClaims(hint), nonce });

      it('refuses a token from another issuer (401)', async () => {
        assertRefused(
          await launchWith((nonce, hint) => ({ ...base(nonce, hint), iss: 'https://evil.example' })),
          401,
          'wrong_issuer',
          /not issued by the platform/,
        );
      });

      it('refuses a token for another audience (401), and one whose azp is another client', async () => {
        assertRefused(
          await launchWith((nonce, hint) => ({ ...base(nonce, hint), aud: 'someone-else' })),
          401,
          'wrong_audience',
          /another tool/,
        );
        assertRefused(
          await launchWith((nonce, hint) => ({
            ...base(nonce, hint),
            aud: [world.platform.clientId, 'someone-else'],
            azp: 'someone-else',
          })),
          401,
          'wrong_audience',
          /authorized party/,
        );
      });

      it('refuses an expired token (401)', async () => {
        const past = Math.floor(clock.now() / 1000) - 600;
        assertRefused(
          await launchWith((nonce, hint) => ({ ...base(nonce, hint), iat: past - 300, exp: past })),
          401,
          'expired',
          /expired/,
        );
      });

      it('refuses a reused state and a nonce of another login', async () => {
        const hint = platformUser();
        const login = await startLogin(world, hint);
        const { idToken, state } = await authorize(login);
        const first = await postLaunch(world, { id_token: idToken, state }, { cookie: login.cookie });
        assert.equal(first.status, 303);
        assertRefused(
          await postLaunch(world, { id_token: idToken, state }, { cookie: login.cookie }),
          400,
          'invalid_state',
          /already used/,
        );
        // The same token with a fresh login's state: its nonce is not that login's.
        const other = await startLogin(world, hint);
        assertRefused(
          await postLaunch(world, { id_token: idToken, state: other.state }, { cookie: other.cookie }),
          401,
          'nonce_mismatch',
          /nonce/,
        );
      });

      it('refuses an unknown deployment (403)', async () => {
        assertRefused(
          await launchWith((nonce, hint) => ({ ...base(nonce, hint), [CLAIM.deploymentId]: 'deployment-9' })),
          403,
          'unknown_deployment',
          /deployment/,
        );
      });

      it('refuses a bad signature (401): a key the platform never published, or a forged kid', async () => {
        assertRefused(await launchWith(base, { key: 'stranger' }), 401, 'bad_signature', /signature/);
        assertRefused(
          await launchWith(base, { key: 'stranger', kid: world.platform.kid }),
          401,
          'bad_signature',
          /signature/,
        );
      });

      it('refuses a message type it does not handle and a version other than 1.3.0 (400)', async () => {
        assertRefused(
          await launchWith((nonce, hint) => ({
            ...base(nonce, hint),
            [CLAIM.messageType]: 'LtiSubmissionReviewRequest',
          })),
          400,
          'unsupported_message_type',
          /LtiSubmissionReviewRequest/,
        );
        assertRefused(
          await launchWith((nonce, hint) => ({ ...base(nonce, hint), [CLAIM.version]: '1.2.0' })),
          400,
          'wrong_version',
          /1\.3\.0/,
        );
      });

      it('refuses a launch without state (400) and a post that is no launch (400)', async () => {
        const hint = platformUser();
        const idToken = await world.platform.idToken(world.platform.launchClaims(hint));
        assertRefused(
          await postLaunch(world, { id_token: idToken }),
          400,
          'missing_state',
          /without its state/,
        );
        assertRefused(await postLaunch(world, { hello: 'world' }), 400, 'invalid_launch', /expects a launch/);
      });

      it('without the binding cookie, in a frame, offers the same login again in a top-level window', async () => {
        const hint = platformUser();
        const login = await startLogin(world, hint);
        const { idToken, state } = await authorize(login);
        const answer = await postLaunch(world, { id_token: idToken, state }, { 'sec-fetch-dest': 'iframe' });
        assert.equal(answer.status, 200, answer.text);
        const link = openLink(answer);
        const relaunch = new URL(link.href);
        assert.equal(relaunch.origin + relaunch.pathname, `${world.baseUrl}/lti/login`);
        assert.equal(relaunch.searchParams.get('login_hint'), hint);
        assert.equal(relaunch.searchParams.get('iss'), world.platform.issuer);
        assert.equal(link.target, '_blank');
        // Top-level, the relaunch goes through.
        const again = await startLogin(world, hint);
        const second = await authorize(again);
        const landed = await postLaunch(
          world,
          { id_token: second.idToken, state: second.state },
          { cookie: again.cookie, 'sec-fetch-dest': 'document' },
        );
        assert.equal(landed.status, 303);
        // Top-level without a cookie there is nowhere else to go: a page that says so.
        const third = await startLogin(world, hint);
        const token3 = await authorize(third);
        assertRefused(
          await postLaunch(
            world,
            { id_token: token3.idToken, state: token3.state },
            { 'sec-fetch-dest': 'document' },
          ),
          400,
          'binding_missing',
          /Allow cookies/,
        );
      });
    });

    describe('platform storage (lti_storage_target)', () => {
      it('stores the binding through the platform and checks it back at /lti/launch/verify', async () => {
        const hint = platformUser();
        const params = loginParams(world, hint, { lti_storage_target: '_parent' });
        const page = await httpRequest({ url: `${world.baseUrl}/lti/login?${params.toString()}` });
        assert.equal(page.status, 200, page.text);
        // The page's script is the web build's hashed file, served by the service itself.
        const scriptPath =
          /<script type="module" src="(\/assets\/lti-platform-storage-[\w-]+\.js)"><\/script>/.exec(
            page.text,
          )?.[1];
        assert.ok(scriptPath !== undefined, 'the platform-storage script is loaded from /assets/');
        assert.doesNotMatch(page.text, /<script>/, 'no inline script');
        assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
        const put = storageData(page);
        assert.equal(put.mode, 'put');
        assert.equal(put.target, '_parent');
        assert.equal(put.origin, world.platform.url);
        assert.match(put.key ?? '', /^invigil_lti_[0-9a-f]{16}$/);
        const authUrl = new URL(put.next ?? '');
        assert.equal(authUrl.origin + authUrl.pathname, world.platform.authLoginUrl);
        const script = await httpRequest({ url: `${world.baseUrl}${scriptPath}` });
        assert.equal(script.status, 200);
        assert.match(script.headers['content-type'] ?? '', /text\/javascript/);
        assert.match(script.text, /lti\.put_data/);

        // The cookie did not come back (blocked in the frame): the launch asks the platform's storage.
        const login = { answer: page, cookie: '', authUrl, state: '', nonce: '' };
        const { idToken, state } = await authorize(login);
        const asked = await postLaunch(world, { id_token: idToken, state }, { 'sec-fetch-dest': 'iframe' });
        assert.equal(asked.status, 200, asked.text);
        const get = storageData(asked);
        assert.equal(get.mode, 'get');
        assert.equal(get.key, put.key);
        assert.match(String(asked.headers['content-security-policy']), /form-action 'self'/);
        const { ticket } = hiddenFields(asked);
        assert.ok(ticket !== undefined && ticket !== '');

        const verify = (fields: Record<string, string>) =>
          httpRequest({
            url: `${world.baseUrl}/lti/launch/verify`,
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(fields).toString(),
          });
        const verified = await verify({ ticket, binding: put.value ?? '' });
        assert.equal(verified.status, 303, verified.text);
        assert.match(String(verified.headers.location), /\/room\//);
        assertRefused(
          await verify({ ticket, binding: put.value ?? '' }),
          400,
          'invalid_ticket',
          /already used/,
        );
      });

      it('refuses a value that is not the login binding, and offers a new window when storage gave nothing', async () => {
        const run = async () => {
          const hint = platformUser();
          const params = loginParams(world, hint, { lti_storage_target: '_parent' });
          const page = await httpRequest({ url: `${world.baseUrl}/lti/login?${params.toString()}` });
          const authUrl = new URL(storageData(page).next ?? '');
          const { idToken, state } = await authorize({
            answer: page,
            cookie: '',
            authUrl,
            state: '',
            nonce: '',
          });
          const asked = await postLaunch(world, { id_token: idToken, state }, { 'sec-fetch-dest': 'iframe' });
          return hiddenFields(asked).ticket ?? '';
        };
        const verify = (fields: Record<string, string>) =>
          httpRequest({
            url: `${world.baseUrl}/lti/launch/verify`,
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(fields).toString(),
          });
        assertRefused(
          await verify({ ticket: await run(), binding: 'someone-elses' }),
          401,
          'binding_mismatch',
          /another browser window/,
        );
        const empty = await verify({ ticket: await run(), binding: '' });
        assert.equal(empty.status, 200, empty.text);
        const relaunch = new URL(openLink(empty).href);
        assert.equal(relaunch.pathname, '/lti/login');
        assert.equal(relaunch.searchParams.get('lti_storage_target'), null);
      });
    });

    describe('the platform key set', () => {
      it('is fetched once and kept as its Cache-Control says, refetched for a new key at most once a minute', async () => {
        const fetches = () => world.platform.jwksFetches;
        // Launches above fetched it; within max-age=300 no launch fetches again.
        const before = fetches();
        assert.equal((await launchAs(world, platformUser())).status, 303);
        assert.equal(fetches(), before, 'served from the cache');

        // The platform rotates: the unknown kid makes one refetch (a minute after the last fetch).
        await world.platform.rotateKey();
        clock.current += 61_000;
        assert.equal((await launchAs(world, platformUser())).status, 303);
        assert.equal(fetches(), before + 1, 'refetched for the new kid');

        // A kid nobody publishes right after: no second fetch within the minute, refused.
        const hint = platformUser();
        const login = await startLogin(world, hint);
        const forged = await world.platform.idToken(
          { ...world.platform.launchClaims(hint), nonce: login.nonce },
          { kid: 'nobody' },
        );
        const refused = await postLaunch(
          world,
          { id_token: forged, state: login.state },
          { cookie: login.cookie },
        );
        assert.equal(refused.status, 401);
        assert.equal(fetches(), before + 1, 'no refetch within the minute');

        // max-age=60 from now on: after 61 s the set is stale and revalidated (a 304 keeps it).
        world.platform.jwksCacheControl = 'max-age=60';
        clock.current += 301_000;
        assert.equal((await launchAs(world, platformUser())).status, 303);
        assert.equal(fetches(), before + 2);
        assert.equal((await launchAs(world, platformUser())).status, 303);
        assert.equal(fetches(), before + 2, 'fresh for 60 s');
        clock.current += 61_000;
        assert.equal((await launchAs(world, platformUser())).status, 303);
        assert.equal(fetches(), before + 3, 'stale after 60 s');
        world.platform.jwksCacheControl = 'max-age=300';
      });
    });
  });
}
