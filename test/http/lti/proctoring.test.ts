/**
 * LTI Proctoring Services against the in-process fake platform (test/lti/fake-platform.ts): the
 * room's way on to the platform (GET /lti/start-assessment/<token> posting a signed
 * LtiStartAssessment, checked against the tool's /lti/jwks), and the Assessment Control Service:
 * a proctor's end_exam sent as `terminate`, a violation verdict as `flag`, each with a bearer token
 * the platform issued for a client assertion it verified, retried by the queue after a failure.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import { createWorker } from '../../../src/jobs/worker.ts';
import { LTI_ACS_JOB } from '../../../src/domain/lti/acs.ts';
import { ACS_CONTROL_TYPE, ACS_SCOPE } from '../../../src/lti/acs.ts';
import { httpRequest, type HttpAnswer } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { freePort } from '../../helpers/processes.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { CLAIM, type FakePlatform, startFakePlatform } from '../../lti/fake-platform.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const MINUTE = 60_000;

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
  describe(`LTI Proctoring Services [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let platform: FakePlatform;
    let teacher: TestUser;
    let administrator: TestUser;
    let toolProviderId: number;
    let examId: number;
    let students = 0;

    before(async () => {
      const port = await freePort();
      const publicUrl = `http://127.0.0.1:${port}`;
      platform = await startFakePlatform({ toolUrl: publicUrl });
      server = await startTestServer(dialect, {
        clock,
        port,
        env: { PUBLIC_URL: publicUrl, OUTBOUND_ALLOWLIST: '127.0.0.1' },
      });
      const instituteId = await server.institute();
      teacher = await server.user(instituteId, 'teacher');
      administrator = await server.user(instituteId, 'administrator');
      const now = clock.now();
      const provider = await server.app.database.db
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
        .executeTakeFirstOrThrow();
      toolProviderId = provider.id;
      const exam = await teacher.client.v3('POST', '/exams', {
        name: 'Proctored exam',
        type: 'classroom',
        duration_minutes: 60,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = object(object(exam.json, 'body').exam, 'exam').id as number;
    });

    after(async () => {
      await server.close();
      await platform.close();
    });

    beforeEach(() => {
      platform.acsStatus = 200;
    });

    /**
     * A student session as a Proctoring Services launch leaves it: the platform's user, resource
     * link and attempt on the session and its lti_session_links row. Returns its id and room token.
     */
    async function launchedSession(
      options: { acsActions?: string[] | null; startAssessment?: boolean } = {},
    ): Promise<{ id: number; token: string; sub: string }> {
      students += 1;
      const created = await teacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: `Candidate ${students}`,
        email: `candidate${students}@example.org`,
      });
      assert.equal(created.status, 201, created.text);
      const student = object(object(created.json, 'body').student, 'student');
      const id = student.id as number;
      const sub = `user-${crypto.randomBytes(4).toString('hex')}`;
      const { db } = server.app.database;
      await db
        .updateTable('student_sessions')
        .set({ lms_user_id: sub, resource_link_id: 'resource-link-1', context_id: 'course-1' })
        .where('id', '=', id)
        .execute();
      const actions = options.acsActions === undefined ? ['terminate', 'flag'] : options.acsActions;
      await db
        .insertInto('lti_session_links')
        .values({
          student_session_id: id,
          tool_provider_id: toolProviderId,
          lti_version: '1.3',
          platform_user_id: sub,
          deployment_id: platform.deploymentId,
          attempt_number: 2,
          start_assessment_url: options.startAssessment === false ? null : platform.startAssessmentUrl,
          session_data: `opaque-${students}`,
          acs_url: actions === null ? null : platform.acsUrl,
          acs_actions: actions === null ? null : JSON.stringify(actions),
          created_at: clock.now(),
          updated_at: clock.now(),
        })
        .execute();
      return { id, token: student.token as string, sub };
    }

    const roomCall = (token: string, action = '') =>
      httpRequest({
        url: `${server.baseUrl}/api/room/${token}${action === '' ? '' : `/${action}`}`,
        method: action === '' ? 'GET' : 'POST',
      });

    const startAssessment = (token: string) =>
      httpRequest({ url: `${server.baseUrl}/lti/start-assessment/${encodeURIComponent(token)}` });

    /** Runs every due job to its outcome (a retry waits for `clock` to pass its backoff). */
    async function runDueJobs(): Promise<void> {
      const worker = createWorker({
        db: server.app.database.db,
        dialect,
        clock,
        logger: pino({ level: 'silent' }),
        handlers: server.app.jobHandlers,
      });
      while (await worker.runOnce());
    }

    async function acsJobs(sessionId: number) {
      const rows = await server.app.database.db
        .selectFrom('jobs')
        .select(['id', 'status', 'attempts', 'last_error', 'payload'])
        .where('kind', '=', LTI_ACS_JOB)
        .orderBy('id')
        .execute();
      return rows.filter((row) => (JSON.parse(row.payload) as Json).sessionId === sessionId);
    }

    describe('the room of a Proctoring Services launch', () => {
      it('offers the start-assessment path in its view; an ordinary session has none', async () => {
        const launched = await launchedSession();
        const view = object((await roomCall(launched.token)).json, 'view');
        assert.equal(view.lti_start_assessment, `/lti/start-assessment/${launched.token}`);
        const plain = await launchedSession({ startAssessment: false });
        assert.equal('lti_start_assessment' in object((await roomCall(plain.token)).json, 'view'), false);
      });
    });

    describe('GET /lti/start-assessment/:token', () => {
      it('refuses before the candidate pressed start (409, a page saying what to do)', async () => {
        const { token } = await launchedSession();
        const answer = await startAssessment(token);
        assert.equal(answer.status, 409);
        assert.match(answer.headers['content-type'] ?? '', /^text\/html/);
        assert.match(answer.text, /Start the exam in the exam room first/);
      });

      it('answers a page posting a signed LtiStartAssessment to the platform once started', async () => {
        const { token, id } = await launchedSession();
        assert.equal((await roomCall(token, 'start')).status, 200);
        const answer = await startAssessment(token);
        assert.equal(answer.status, 200, answer.text);
        assert.match(
          String(answer.headers['content-security-policy']),
          new RegExp(`form-action ${platform.url}`),
        );
        assert.equal(answer.headers['cache-control'], 'no-store');
        const { action, fields } = formOf(answer);
        assert.equal(action, platform.startAssessmentUrl);
        assert.deepEqual(Object.keys(fields), ['JWT']);
        const claims = await platform.verifyToolJwt(fields.JWT ?? '');
        assert.equal(claims.iss, platform.clientId);
        assert.equal(claims.aud, platform.issuer);
        assert.equal(claims.azp, platform.clientId);
        assert.equal(typeof claims.nonce, 'string');
        assert.ok((claims.exp ?? 0) > (claims.iat ?? 0));
        assert.equal(claims[CLAIM.messageType], 'LtiStartAssessment');
        assert.equal(claims[CLAIM.version], '1.3.0');
        assert.equal(claims[CLAIM.deploymentId], platform.deploymentId);
        assert.deepEqual(claims[CLAIM.resourceLink], { id: 'resource-link-1' });
        assert.equal(claims[CLAIM.attemptNumber], 2);
        const row = await server.app.database.db
          .selectFrom('lti_session_links')
          .select('session_data')
          .where('student_session_id', '=', id)
          .executeTakeFirstOrThrow();
        assert.equal(claims[CLAIM.sessionData], row.session_data);
        // Each opening is a new message (a new nonce), and the platform takes the post.
        const again = formOf(await startAssessment(token));
        const second = await platform.verifyToolJwt(again.fields.JWT ?? '');
        assert.notEqual(second.nonce, claims.nonce);
        const posted = await httpRequest({
          url: action,
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(fields).toString(),
        });
        assert.equal(posted.status, 200);
        assert.equal(platform.startAssessmentPosts.at(-1)?.fields.JWT, fields.JWT);
      });

      it('refuses a finished exam (409), an unknown room and an ordinary session (404)', async () => {
        const { token } = await launchedSession();
        assert.equal((await roomCall(token, 'start')).status, 200);
        assert.equal((await roomCall(token, 'finish')).status, 200);
        const finished = await startAssessment(token);
        assert.equal(finished.status, 409);
        assert.match(finished.text, /This exam is over/);
        const unknown = await startAssessment('no-such-token');
        assert.equal(unknown.status, 404);
        assert.doesNotMatch(unknown.text, /at .*\.ts/);
        const plain = await launchedSession({ startAssessment: false });
        assert.equal((await roomCall(plain.token, 'start')).status, 200);
        assert.equal((await startAssessment(plain.token)).status, 404);
      });
    });

    describe('Assessment Control Service', () => {
      it('sends terminate when a proctor ends the session, with a token from a verified client assertion', async () => {
        const { id, sub } = await launchedSession();
        const calls = platform.acsCalls.length;
        const grants = platform.tokenGrants.length;
        const ended = await teacher.client.v3('POST', '/student_sessions/:id/end_exam', { id });
        assert.equal(ended.status, 200, ended.text);
        assert.equal((await acsJobs(id)).length, 1);
        await runDueJobs();
        const [job] = await acsJobs(id);
        assert.equal(job?.status, 'succeeded', job?.last_error ?? '');
        const call = platform.acsCalls[calls];
        assert.ok(call !== undefined, 'the platform received the call');
        assert.equal(call.headers['content-type'], ACS_CONTROL_TYPE);
        const body = object(call.json, 'acs body');
        assert.deepEqual(body.user, { sub });
        assert.deepEqual(body.resource_link, { id: 'resource-link-1' });
        assert.equal(body.attempt_number, 2);
        assert.equal(body.action, 'terminate');
        assert.equal(typeof body.incident_time, 'string');
        assert.equal(typeof body.incident_severity, 'number');
        assert.equal(body.reason_code, 'proctor_ended');
        // The first call of this run asked for a token (the platform verified its client assertion).
        const grant = platform.tokenGrants[grants];
        assert.ok(grant !== undefined, 'a token was granted');
        assert.equal(grant.scope, ACS_SCOPE);
        assert.equal(grant.assertion.iss, platform.clientId);
        assert.equal(grant.assertion.sub, platform.clientId);
        assert.equal(grant.assertion.aud, platform.authTokenUrl);
        assert.equal(call.headers.authorization?.startsWith('Bearer '), true);
      });

      it('sends flag for a violation verdict, reusing the cached token', async () => {
        const { id } = await launchedSession();
        const ended = await teacher.client.v3('POST', '/student_sessions/:id/end_exam', { id });
        assert.equal(ended.status, 200, ended.text);
        await runDueJobs();
        const grants = platform.tokenGrants.length;
        const calls = platform.acsCalls.length;
        const reviewed = await administrator.client.v3('PUT', '/student_sessions/:id/review', {
          id,
          verdict: 'violation',
          comment: 'A second person in the room',
        });
        assert.equal(reviewed.status, 200, reviewed.text);
        await runDueJobs();
        const flagged = platform.acsCalls.slice(calls).map((call) => object(call.json, 'body').action);
        assert.deepEqual(flagged, ['flag']);
        assert.equal(platform.tokenGrants.length, grants, 'the token of the earlier call was reused');
      });

      it('sends nothing the platform did not offer, and nothing without an ACS', async () => {
        const onlyFlag = await launchedSession({ acsActions: ['flag'] });
        const none = await launchedSession({ acsActions: null });
        for (const { id } of [onlyFlag, none]) {
          const ended = await teacher.client.v3('POST', '/student_sessions/:id/end_exam', { id });
          assert.equal(ended.status, 200, ended.text);
          assert.deepEqual(await acsJobs(id), []);
        }
      });

      it('retries after the platform failed, until it takes the call', async () => {
        const { id } = await launchedSession();
        platform.acsStatus = 503;
        const calls = platform.acsCalls.length;
        const ended = await teacher.client.v3('POST', '/student_sessions/:id/end_exam', { id });
        assert.equal(ended.status, 200, ended.text);
        await runDueJobs();
        let [job] = await acsJobs(id);
        assert.equal(job?.status, 'queued');
        assert.equal(job?.attempts, 1);
        assert.match(job?.last_error ?? '', /answered 503/);
        platform.acsStatus = 200;
        clock.current += 10 * MINUTE;
        await runDueJobs();
        [job] = await acsJobs(id);
        assert.equal(job?.status, 'succeeded', job?.last_error ?? '');
        assert.equal(job?.attempts, 2);
        assert.equal(platform.acsCalls.length - calls, 2, 'the same action was sent twice');
      });
    });
  });
}
