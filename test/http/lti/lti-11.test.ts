/**
 * LTI 1.1 over real HTTP: `POST /lti/launch` with a form signed by an independent OAuth 1.0a
 * implementation (`oauth-sign`), as Moodle or Canvas send it. A learner lands in the room and is
 * found by `show_lti_student`; an instructor lands in the console; a replayed or stale launch gets a
 * clear page and a log line.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { hmacsign } from 'oauth-sign';
import type { Actor } from '../../../src/domain/access.ts';
import { ApiClient } from '../../helpers/client.ts';
import { httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, TestClock } from '../../helpers/server.ts';
import { type LtiWorld, startLtiWorld } from './lti-13.support.ts';

const SECRET = 'moodle shared secret';

for (const dialect of DIALECTS) {
  describe(`LTI 1.1 launch over HTTP [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let world: LtiWorld;
    let consumerKey: string;
    let examId: number;
    let teacherClient: ApiClient;
    let teacherEmail: string;

    before(async () => {
      world = await startLtiWorld(dialect, { clock });
      const { services } = world.app;
      const admin = await services.users.create(world.instituteId, {
        email: `admin-${crypto.randomBytes(3).toString('hex')}@example.org`,
        name: 'Admin',
        role: 'administrator',
      });
      teacherEmail = `teacher-${crypto.randomBytes(3).toString('hex')}@example.org`;
      const teacher = await services.users.create(world.instituteId, {
        email: teacherEmail,
        name: 'Teacher',
        role: 'teacher',
      });
      teacherClient = new ApiClient(world.baseUrl, teacher.credentials);
      const adminActor: Actor = { id: admin.user.id, instituteId: world.instituteId, role: 'administrator' };
      consumerKey = `moodle-${crypto.randomBytes(4).toString('hex')}`;
      await services.toolProviders.create(adminActor, {
        name: 'Moodle 1.1',
        lti_version: '1.1',
        consumer_key: consumerKey,
        shared_secret: SECRET,
      });
      const teacherActor: Actor = { id: teacher.user.id, instituteId: world.instituteId, role: 'teacher' };
      examId = (
        await services.exams.create(teacherActor, {
          name: 'Organic chemistry',
          type: 'record_review',
          duration_minutes: 90,
        })
      ).id;
    });

    after(async () => {
      await world?.close();
    });

    /** A launch form as Moodle posts it, signed with oauth-sign over {PUBLIC_URL}/lti/launch. */
    function signedForm(overrides: Record<string, string> = {}): Record<string, string> {
      const params: Record<string, string> = {
        lti_message_type: 'basic-lti-launch-request',
        lti_version: 'LTI-1p0',
        resource_link_id: 'moodle-rl-31',
        resource_link_title: 'Organic chemistry (proctored)',
        context_id: 'moodle-course-8',
        context_title: 'Chemistry 201',
        user_id: 'moodle-user-77',
        roles: 'Learner',
        lis_person_name_full: 'Rosalind Franklin',
        lis_person_contact_email_primary: 'rosalind@example.edu',
        custom_invigil_exam_id: String(examId),
        oauth_callback: 'about:blank',
        oauth_consumer_key: consumerKey,
        oauth_nonce: crypto.randomBytes(16).toString('hex'),
        oauth_signature_method: 'HMAC-SHA1',
        oauth_timestamp: String(Math.floor(clock.now() / 1000)),
        oauth_version: '1.0',
        ...overrides,
      };
      params.oauth_signature = hmacsign('POST', `${world.baseUrl}/lti/launch`, params, SECRET);
      return params;
    }

    function post(form: Record<string, string>, headers: Record<string, string> = {}) {
      return httpRequest({
        url: `${world.baseUrl}/lti/launch`,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(form).toString(),
      });
    }

    function refusedLines(code: string): string[] {
      return world.lines.filter(
        (line) => line.includes('lti launch refused') && line.includes(`"code":"${code}"`),
      );
    }

    it('sends a learner to the room (303), where show_lti_student finds the session', async () => {
      const answer = await post(signedForm());
      assert.equal(answer.status, 303, answer.text);
      const location = answer.headers.location ?? '';
      const match = new RegExp(`^${world.baseUrl}/room/([0-9a-f]{32})$`).exec(location);
      assert.ok(match, location);
      const token = match[1] ?? '';
      const room = await httpRequest({ url: `${world.baseUrl}/api/room/${token}` });
      assert.equal(room.status, 200, room.text);

      const shown = await teacherClient.v3('GET', '/exams/:id/show_lti_student', {
        id: examId,
        student_lms_id: 'moodle-user-77',
        resource_link_id: 'moodle-rl-31',
      });
      assert.equal(shown.status, 200, shown.text);
      const student = object(object(shown.json, 'body').student, 'student');
      assert.equal(student.token, token);
      assert.equal(student.name, 'Rosalind Franklin');
      assert.equal(student.email, 'rosalind@example.edu');
      assert.equal(student.context_id, 'moodle-course-8');

      // The next launch of the same learner opens the same room.
      const again = await post(signedForm());
      assert.equal(again.headers.location, location);
    });

    it('sets the student’s language from launch_presentation_locale (de_DE → de-DE)', async () => {
      const answer = await post(
        signedForm({
          user_id: 'moodle-user-de',
          lis_person_contact_email_primary: 'lise@example.edu',
          launch_presentation_locale: 'de_DE',
        }),
      );
      assert.equal(answer.status, 303, answer.text);
      const shown = await teacherClient.v3('GET', '/exams/:id/show_lti_student', {
        id: examId,
        student_lms_id: 'moodle-user-de',
        resource_link_id: 'moodle-rl-31',
      });
      assert.equal(shown.status, 200, shown.text);
      assert.equal(object(object(shown.json, 'body').student, 'student').language, 'de-DE');
      // An unknown locale never fails a launch.
      const other = await post(
        signedForm({
          user_id: 'moodle-user-xx',
          lis_person_contact_email_primary: 'other@example.edu',
          launch_presentation_locale: 'zz-!!',
        }),
      );
      assert.equal(other.status, 303, other.text);
    });

    it('signs an instructor into the console on the exam (303 with the session cookie)', async () => {
      const answer = await post(
        signedForm({
          roles: 'urn:lti:role:ims/lis/Instructor',
          user_id: 'moodle-teacher-1',
          lis_person_contact_email_primary: teacherEmail.toUpperCase(),
        }),
      );
      assert.equal(answer.status, 303, answer.text);
      assert.equal(answer.headers.location, `${world.baseUrl}/console/exams/${examId}`);
      const cookies = answer.headers['set-cookie'] ?? [];
      assert.ok(
        cookies.some((cookie) => /HttpOnly/i.test(cookie)),
        `a session cookie: ${cookies.join(' | ')}`,
      );
    });

    it('refuses a replayed launch with a clear page and a log line', async () => {
      const form = signedForm({
        user_id: 'moodle-user-replay',
        lis_person_contact_email_primary: 'replay@example.edu',
      });
      assert.equal((await post(form)).status, 303);
      const replay = await post(form);
      assert.equal(replay.status, 401);
      assert.match(String(replay.headers['content-type']), /^text\/html/);
      assert.match(
        replay.text,
        /This launch was already used\. Go back to your course and open the link again\./,
      );
      assert.doesNotMatch(replay.text, /at .*\.ts:\d+/, 'no stack trace');
      assert.equal(refusedLines('replayed_nonce').length, 1);
    });

    it('refuses a stale launch with a clear page and a log line', async () => {
      const stale = await post(signedForm({ oauth_timestamp: String(Math.floor(clock.now() / 1000) - 600) }));
      assert.equal(stale.status, 401);
      assert.match(String(stale.headers['content-type']), /^text\/html/);
      assert.match(stale.text, /This launch is too old/);
      assert.equal(refusedLines('stale_timestamp').length, 1);
    });

    it('refuses a launch signed with another secret', async () => {
      const { oauth_signature: _signed, ...unsigned } = signedForm();
      const form = {
        ...unsigned,
        oauth_signature: hmacsign('POST', `${world.baseUrl}/lti/launch`, unsigned, 'wrong'),
      };
      const answer = await post(form);
      assert.equal(answer.status, 401);
      assert.match(answer.text, /This launch could not be verified/);
    });
  });
}
