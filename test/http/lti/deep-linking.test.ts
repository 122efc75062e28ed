/**
 * LTI Deep Linking: `POST /lti/deep-link`, the console's choice of exam for a deep-linking launch,
 * answered with a page posting a signed LtiDeepLinkingResponse to the platform's return URL. The
 * response is checked against the tool's /lti/jwks by the fake platform (test/lti/fake-platform.ts);
 * the ticket works once and only for the teacher the launch signed in.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTicket } from '../../../src/domain/lti/tickets.ts';
import { httpRequest, type HttpAnswer } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { freePort } from '../../helpers/processes.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { CLAIM, type FakePlatform, startFakePlatform } from '../../lti/fake-platform.ts';
import { type Browser, signIn, staffUser } from '../staff/support.ts';

const CONTENT_ITEMS = 'https://purl.imsglobal.org/spec/lti-dl/claim/content_items';
const DATA = 'https://purl.imsglobal.org/spec/lti-dl/claim/data';

/** The form of an auto-submitting page: its action and hidden fields. */
function formOf(answer: HttpAnswer): { action: string; fields: Record<string, string> } {
  const form = /<form method="post" action="([^"]+)"/.exec(answer.text);
  assert.ok(form !== null, answer.text);
  const fields: Record<string, string> = {};
  for (const match of answer.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[match[1] ?? ''] = match[2] ?? '';
  }
  return { action: (form[1] ?? '').replaceAll('&amp;', '&'), fields };
}

for (const dialect of DIALECTS) {
  describe(`POST /lti/deep-link [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let platform: FakePlatform;
    let publicUrl: string;
    let toolProviderId: number;
    let teacher: Awaited<ReturnType<typeof staffUser>>;
    let colleague: Awaited<ReturnType<typeof staffUser>>;
    let teacherBrowser: Browser;
    let colleagueBrowser: Browser;
    let examId: number;
    let otherExamId: number;

    before(async () => {
      const port = await freePort();
      publicUrl = `http://127.0.0.1:${port}`;
      platform = await startFakePlatform({ toolUrl: publicUrl });
      server = await startTestServer(dialect, {
        clock,
        port,
        env: { PUBLIC_URL: publicUrl, OUTBOUND_ALLOWLIST: '127.0.0.1' },
      });
      const instituteId = await server.institute();
      const otherInstitute = await server.institute();
      teacher = await staffUser(server, instituteId, 'teacher');
      colleague = await staffUser(server, instituteId, 'teacher');
      teacherBrowser = await signIn(server, teacher.email);
      colleagueBrowser = await signIn(server, colleague.email);
      const now = clock.now();
      toolProviderId = (
        await server.app.database.db
          .insertInto('tool_providers')
          .values({
            institute_id: instituteId,
            name: 'Fake LMS',
            lti_version: '1.3',
            consumer_key: null,
            shared_secret_encrypted: null,
            issuer: platform.issuer,
            client_id: platform.clientId,
            deployment_id: platform.deploymentId,
            auth_login_url: platform.authLoginUrl,
            auth_token_url: platform.authTokenUrl,
            jwks_url: platform.jwksUrl,
            created_at: now,
            updated_at: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
      const exam = await teacher.client.v3('POST', '/exams', {
        name: 'Chemistry final',
        type: 'record_review',
        duration_minutes: 90,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = object(object(exam.json, 'body').exam, 'exam').id as number;
      const outsider = await server.user(otherInstitute, 'teacher');
      const other = await outsider.client.v3('POST', '/exams', {
        name: 'Elsewhere',
        type: 'classroom',
        duration_minutes: 30,
      });
      assert.equal(other.status, 201, other.text);
      otherExamId = object(object(other.json, 'body').exam, 'exam').id as number;
    });

    after(async () => {
      await server.close();
      await platform.close();
    });

    /** A ticket as the deep-linking launch leaves it for `userId`. Returns it. */
    function deepLinkTicket(userId: number, settings: Record<string, unknown> = {}): Promise<string> {
      return createTicket({ db: server.app.database.db, clock }, 'deep_link', {
        toolProviderId,
        deploymentId: platform.deploymentId,
        platformIssuer: platform.issuer,
        userId,
        settings: {
          returnUrl: platform.deepLinkReturnUrl,
          data: 'opaque-platform-data',
          acceptTypes: ['ltiResourceLink'],
          acceptMultiple: false,
          title: null,
          ...settings,
        },
      });
    }

    function post(
      browser: Browser | undefined,
      fields: Record<string, string>,
      headers: Record<string, string> = {},
    ): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/lti/deep-link`,
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: publicUrl,
          ...(browser === undefined ? {} : { cookie: browser.cookie }),
          ...headers,
        },
        body: new URLSearchParams(fields).toString(),
      });
    }

    it('answers a page posting a signed LtiDeepLinkingResponse naming the exam to the return URL', async () => {
      const ticket = await deepLinkTicket(teacher.id);
      const answer = await post(teacherBrowser, {
        ticket,
        exam_id: String(examId),
        csrf_token: teacherBrowser.csrf,
      });
      assert.equal(answer.status, 200, answer.text);
      assert.match(
        String(answer.headers['content-security-policy']),
        new RegExp(`form-action ${platform.url}`),
      );
      const { action, fields } = formOf(answer);
      assert.equal(action, platform.deepLinkReturnUrl);
      assert.deepEqual(Object.keys(fields), ['JWT']);
      const claims = await platform.verifyToolJwt(fields.JWT ?? '');
      assert.equal(claims.iss, platform.clientId);
      assert.equal(claims.aud, platform.issuer);
      assert.equal(claims.azp, platform.clientId);
      assert.equal(typeof claims.nonce, 'string');
      assert.equal(claims[CLAIM.messageType], 'LtiDeepLinkingResponse');
      assert.equal(claims[CLAIM.version], '1.3.0');
      assert.equal(claims[CLAIM.deploymentId], platform.deploymentId);
      assert.equal(claims[DATA], 'opaque-platform-data');
      assert.deepEqual(claims[CONTENT_ITEMS], [
        {
          type: 'ltiResourceLink',
          title: 'Chemistry final',
          url: `${publicUrl}/lti/launch`,
          custom: { invigil_exam_id: String(examId) },
        },
      ]);
      // The platform takes the post.
      const returned = await httpRequest({
        url: action,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
      assert.equal(returned.status, 200);
      assert.equal(platform.deepLinkReturns.at(-1)?.fields.JWT, fields.JWT);
    });

    it('uses a ticket once: a second submission is refused with a page (400)', async () => {
      const ticket = await deepLinkTicket(teacher.id);
      const fields = { ticket, exam_id: String(examId), csrf_token: teacherBrowser.csrf };
      assert.equal((await post(teacherBrowser, fields)).status, 200);
      const again = await post(teacherBrowser, fields);
      assert.equal(again.status, 400);
      assert.match(again.headers['content-type'] ?? '', /^text\/html/);
      assert.match(again.text, /This link has expired/);
    });

    it('refuses another user of the institute (403) without spending the ticket', async () => {
      const ticket = await deepLinkTicket(teacher.id);
      const refused = await post(colleagueBrowser, {
        ticket,
        exam_id: String(examId),
        csrf_token: colleagueBrowser.csrf,
      });
      assert.equal(refused.status, 403);
      assert.match(refused.text, /made for another user/);
      const owner = await post(teacherBrowser, {
        ticket,
        exam_id: String(examId),
        csrf_token: teacherBrowser.csrf,
      });
      assert.equal(owner.status, 200, owner.text);
    });

    it('refuses without a session (401), without the CSRF token or from another site (403)', async () => {
      const ticket = await deepLinkTicket(teacher.id);
      const fields = { ticket, exam_id: String(examId), csrf_token: teacherBrowser.csrf };
      assert.equal((await post(undefined, fields)).status, 401);
      assert.equal((await post(teacherBrowser, { ...fields, csrf_token: 'wrong' })).status, 403);
      assert.equal((await post(teacherBrowser, fields, { origin: 'https://evil.example' })).status, 403);
      // None of these spent the ticket.
      assert.equal((await post(teacherBrowser, fields)).status, 200);
    });

    it('refuses an exam of another institute or a missing one (404), and keeps the ticket', async () => {
      const ticket = await deepLinkTicket(teacher.id);
      for (const id of [String(otherExamId), '987654321', 'abc']) {
        const answer = await post(teacherBrowser, { ticket, exam_id: id, csrf_token: teacherBrowser.csrf });
        assert.equal(answer.status, 404, answer.text);
        assert.match(answer.text, /choose another one/);
      }
      const chosen = await post(teacherBrowser, {
        ticket,
        exam_id: String(examId),
        csrf_token: teacherBrowser.csrf,
      });
      assert.equal(chosen.status, 200);
    });

    it('refuses when the platform accepts no resource links here (400)', async () => {
      const ticket = await deepLinkTicket(teacher.id, { acceptTypes: ['link', 'file'] });
      const answer = await post(teacherBrowser, {
        ticket,
        exam_id: String(examId),
        csrf_token: teacherBrowser.csrf,
      });
      assert.equal(answer.status, 400);
      assert.match(answer.text, /does not accept links to activities/);
    });
  });
}
