/**
 * A whole LTI Proctoring Services round trip over HTTP, with nothing seeded: the fake platform
 * (test/lti/fake-platform.ts) launches `LtiStartProctoring` through /lti/login and /lti/launch, the
 * candidate starts the exam through the room API, /lti/start-assessment sends the signed
 * `LtiStartAssessment` on to the platform (which verifies it and opens the assessment), and the
 * assessment's submit button is an `LtiEndAssessment` launch that hands the exam in. Then a second
 * attempt, a violation verdict on the first (ACS `flag`) and a proctor's end_exam on the second
 * (ACS `terminate`), each taken by the platform's Assessment Control Service with its own token.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { createWorker } from '../../../src/jobs/worker.ts';
import { ApiClient } from '../../helpers/client.ts';
import { httpRequest, type HttpAnswer } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS } from '../../helpers/server.ts';
import { CLAIM } from '../../lti/fake-platform.ts';
import { launchAs, launchAt, type LtiWorld, startLtiWorld } from './lti-13.support.ts';

type Json = Record<string, unknown>;

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

/** An attribute value as the browser reads it (numeric and &amp; escapes decoded). */
function unescapeHtml(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_all, code: string) => String.fromCharCode(Number(code)))
    .replaceAll('&amp;', '&');
}

for (const dialect of DIALECTS) {
  describe(`LTI Proctoring Services round trip [${dialect}]`, () => {
    let world: LtiWorld;
    let teacher: ApiClient;
    let administrator: ApiClient;
    let examId: number;
    const hint = `learner-${crypto.randomBytes(4).toString('hex')}`;
    /** The room tokens of attempt 1 and 2, as the launches gave them. */
    const tokens: string[] = [];

    before(async () => {
      world = await startLtiWorld(dialect);
      const staff = async (role: string) => {
        const { credentials } = await world.app.services.users.create(world.instituteId, {
          email: `${role}-${crypto.randomBytes(3).toString('hex')}@example.org`,
          name: role,
          role,
        });
        return new ApiClient(world.baseUrl, credentials);
      };
      teacher = await staff('teacher');
      administrator = await staff('administrator');
      // Record & review with nothing to check: the fewest steps from the room's setup to the start.
      const exam = await teacher.v3('POST', '/exams', {
        name: 'Proctored quiz',
        type: 'record_review',
        duration_minutes: 60,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = object(object(exam.json, 'body').exam, 'exam').id as number;
    });

    after(async () => {
      await world?.close();
    });

    /** The claims of an LtiStartProctoring launch of attempt `attemptNumber` (deep-linked to the exam). */
    const startClaims = (attemptNumber: number) =>
      world.platform.startProctoringClaims(hint, {
        attemptNumber,
        sessionData: `platform-state-${attemptNumber}`,
        overrides: { [CLAIM.custom]: { invigil_exam_id: String(examId) } },
      });

    const room = (token: string, action = '') =>
      httpRequest({
        url: `${world.baseUrl}/api/room/${encodeURIComponent(token)}${action === '' ? '' : `/${action}`}`,
        method: action === '' ? 'GET' : 'POST',
      });

    /** The V3 record of the session with room token `token`. */
    async function record(token: string): Promise<Json> {
      const listed = await teacher.v3('GET', '/exams/:exam_id/student_sessions', { exam_id: examId });
      assert.equal(listed.status, 200, listed.text);
      const body = object(listed.json, 'body');
      const students = (body.students ?? body.student_sessions) as Json[];
      const found = students.find((student) => student.token === token);
      assert.ok(found !== undefined, `no session with token ${token}`);
      const answer = await teacher.v3('GET', '/student_sessions/:id', { id: found.id as number });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').student, 'student');
    }

    /** Runs every due job to its outcome. */
    async function runDueJobs(): Promise<void> {
      const worker = createWorker({
        db: world.app.database.db,
        dialect,
        clock: world.app.clock,
        logger: pino({ level: 'silent' }),
        handlers: world.app.jobHandlers,
      });
      while (await worker.runOnce());
    }

    /** A launch answered 303 to the room. Returns the room token. */
    function roomToken(answer: HttpAnswer): string {
      assert.equal(answer.status, 303, answer.text);
      const location = new URL(String(answer.headers.location));
      assert.equal(location.origin, world.baseUrl);
      const match = /^\/room\/([^/]+)$/.exec(location.pathname);
      assert.ok(match !== null, location.href);
      return decodeURIComponent(match[1] ?? '');
    }

    it('starts proctoring, starts the assessment on the platform and hands in through LtiEndAssessment', async () => {
      world.platform.launches.set(hint, startClaims(1));
      const token = roomToken(await launchAs(world, hint));
      tokens.push(token);
      const found = await teacher.v3('GET', '/exams/:id/show_lti_student', {
        id: examId,
        student_lms_id: hint,
        resource_link_id: 'resource-link-1',
      });
      assert.equal(found.status, 200, found.text);
      assert.equal(object(object(found.json, 'body').student, 'student').token, token);

      // The room knows where the candidate goes once started; not before the start.
      const view = object((await room(token)).json, 'view');
      assert.equal(view.lti_start_assessment, `/lti/start-assessment/${token}`);
      const early = await httpRequest({ url: `${world.baseUrl}/lti/start-assessment/${token}` });
      assert.equal(early.status, 409, early.text);
      const started = await room(token, 'start');
      assert.equal(started.status, 200, started.text);
      assert.equal(object(object(started.json, 'started').session, 'session').status, 'exam_started');

      const page = await httpRequest({ url: `${world.baseUrl}/lti/start-assessment/${token}` });
      assert.equal(page.status, 200, page.text);
      const { action, fields } = formOf(page);
      assert.equal(action, world.platform.startAssessmentUrl);
      const posted = await httpRequest({
        url: action,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
      assert.equal(posted.status, 200, posted.text);
      assert.match(posted.text, /Assessment started/);
      const claims = world.platform.startAssessments.at(-1);
      assert.ok(claims !== undefined, 'the platform verified the LtiStartAssessment');
      assert.equal(claims.iss, world.platform.clientId);
      assert.equal(claims.aud, world.platform.issuer);
      assert.equal(claims[CLAIM.messageType], 'LtiStartAssessment');
      assert.equal(claims[CLAIM.sessionData], 'platform-state-1');
      assert.equal(claims[CLAIM.attemptNumber], 1);
      assert.deepEqual(claims[CLAIM.resourceLink], { id: 'resource-link-1' });
      assert.equal(claims[CLAIM.deploymentId], world.platform.deploymentId);

      // Submitting on the platform is an LtiEndAssessment launch of the same attempt.
      const submit = /<a id="submit-assessment" href="([^"]+)"/.exec(posted.text);
      assert.ok(submit !== null, posted.text);
      const ended = await launchAt(world, unescapeHtml(submit[1] ?? ''));
      assert.equal(ended.status, 200, ended.text);
      assert.match(ended.text, /<h1>Exam handed in<\/h1>/);
      assert.match(ended.text, /Your exam has been handed in\. You can close this window\./);
      const finished = await record(token);
      assert.equal(finished.status, 'exam_finished');
      assert.equal(finished.end_reason, 'finished');
      // The candidate handed in: nothing for the platform's control service.
      await runDueJobs();
      assert.equal(world.platform.acsCalls.length, 0);
      // The same attempt cannot be started again.
      const again = await launchAs(world, hint);
      assert.equal(again.status, 200, again.text);
      assert.match(again.text, /You have finished this exam/);
    });

    it('opens a new attempt for LtiStartProctoring with attempt_number 2', async () => {
      world.platform.launches.set(hint, startClaims(2));
      const token = roomToken(await launchAs(world, hint));
      assert.notEqual(token, tokens[0]);
      tokens.push(token);
      const second = await record(token);
      assert.equal(second.status, 'registered');
      assert.equal(second.email, `${hint}@students.example.org`);
      const first = await record(tokens[0] ?? '');
      assert.equal(first.status, 'exam_finished', 'the first attempt stays finished');
      const started = await room(token, 'start');
      assert.equal(started.status, 200, started.text);
      const page = formOf(await httpRequest({ url: `${world.baseUrl}/lti/start-assessment/${token}` }));
      const claims = await world.platform.verifyToolJwt(page.fields.JWT ?? '');
      assert.equal(claims[CLAIM.attemptNumber], 2);
      assert.equal(claims[CLAIM.sessionData], 'platform-state-2');
    });

    it('sends flag for a violation verdict on the handed-in attempt', async () => {
      const first = await record(tokens[0] ?? '');
      const reviewed = await administrator.v3('PUT', '/student_sessions/:id/review', {
        id: first.id as number,
        verdict: 'violation',
        comment: 'Notes on the desk',
      });
      assert.equal(reviewed.status, 200, reviewed.text);
      await runDueJobs();
      const calls = world.platform.acsCalls.map((call) => object(call.json, 'acs body'));
      assert.deepEqual(
        calls.map((body) => [body.action, body.attempt_number, body.user]),
        [['flag', 1, { sub: hint }]],
      );
    });

    it('sends terminate when a proctor ends the second attempt, with a token for a verified assertion', async () => {
      const second = await record(tokens[1] ?? '');
      const calls = world.platform.acsCalls.length;
      const ended = await teacher.v3('POST', '/student_sessions/:id/end_exam', { id: second.id as number });
      assert.equal(ended.status, 200, ended.text);
      await runDueJobs();
      // The platform records only calls whose bearer token it issued.
      const call = world.platform.acsCalls[calls];
      assert.ok(call !== undefined, 'the platform received the terminate call');
      assert.match(call.headers.authorization ?? '', /^Bearer [0-9a-f]{32}$/);
      const body = object(call.json, 'acs body');
      assert.equal(body.action, 'terminate');
      assert.equal(body.attempt_number, 2);
      assert.deepEqual(body.user, { sub: hint });
      assert.deepEqual(body.resource_link, { id: 'resource-link-1' });
      const grant = world.platform.tokenGrants.at(-1);
      assert.ok(grant !== undefined, 'a token was granted');
      assert.equal(grant.assertion.iss, world.platform.clientId);
      assert.equal(grant.assertion.aud, world.platform.authTokenUrl);
      assert.equal((await record(tokens[1] ?? '')).status, 'exam_finished');
    });
  });
}
