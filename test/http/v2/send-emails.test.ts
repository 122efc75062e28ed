import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { runDueJobs, startSmtpServer, type TestSmtpServer } from '../../mail/support.ts';
import { object } from '../../helpers/json.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://exams.example.org';
/** The exam window, in epoch seconds. */
const START = Date.parse('2026-11-21T09:00:00Z') / 1000;
const END = Date.parse('2026-11-21T12:00:00Z') / 1000;

function assertEmpty(answer: HttpAnswer, status: number): void {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.text, '');
}

for (const dialect of DIALECTS) {
  describe(`V2 POST /api/exams/:id/send_emails [${dialect}]`, () => {
    let server: TestServer;
    let smtp: TestSmtpServer;
    let clock: TestClock;
    let teacher: TestUser;
    let proctor: TestUser;
    let colleague: TestUser;
    let outsider: TestUser;

    before(async () => {
      smtp = await startSmtpServer();
      clock = new TestClock(Date.now());
      server = await startTestServer(dialect, { clock, env: { SMTP_URL: smtp.url, PUBLIC_URL } });
      const instituteId = await server.institute();
      teacher = await server.user(instituteId, 'teacher');
      proctor = await server.user(instituteId, 'proctor');
      colleague = await server.user(instituteId, 'teacher');
      outsider = await server.user(await server.institute(), 'administrator');
    });

    after(async () => {
      await server.close();
      await smtp.close();
    });

    beforeEach(async () => {
      await runDueJobs(server, dialect, clock);
      smtp.messages.length = 0;
    });

    async function createExam(): Promise<number> {
      const answer = await teacher.client.v2('POST', '/exams', {
        name: 'Legacy exam',
        duration: 45,
        type: 'classroom',
        start_time: START,
        end_time: END,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(answer.json, 'body').id as number;
    }

    async function addStudent(examId: number, params: Record<string, Scalar>): Promise<Json> {
      const answer = await teacher.client.v2('POST', '/exams/:id/add_student', { id: examId, ...params });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').student_session, 'student_session');
    }

    function sendEmails(user: TestUser, examId: Scalar): Promise<HttpAnswer> {
      return user.client.v2('POST', '/exams/:id/send_emails', { id: examId });
    }

    it('answers exactly {"student_sessions": [V2 records with use_duration]} for the students just emailed', async () => {
      const exam = await createExam();
      const ann = await addStudent(exam, {
        name: 'Ann',
        email: 'ann@example.org',
        individual_info: 'Desk 4',
        open_time: START + 1800,
      });
      const bob = await addStudent(exam, { name: 'Bob', email: 'bob@example.org', use_duration: 0 });

      const answer = await sendEmails(teacher, exam);
      assert.equal(answer.status, 200, answer.text);
      assert.match(String(answer.headers['content-type']), /^application\/json/);
      const expected = {
        student_sessions: [
          {
            student_id: ann.student_id,
            name: 'Ann',
            email: 'ann@example.org',
            attempt: 0,
            exam_id: exam,
            status: 'email_sent',
            individual_info: 'Desk 4',
            is_individual_info_html: false,
            open_time: START + 1800,
            start_time: null,
            end_time: null,
            token: ann.token,
            use_duration: true,
          },
          {
            student_id: bob.student_id,
            name: 'Bob',
            email: 'bob@example.org',
            attempt: 0,
            exam_id: exam,
            status: 'email_sent',
            individual_info: null,
            is_individual_info_html: false,
            open_time: null,
            start_time: null,
            end_time: null,
            token: bob.token,
            use_duration: false,
          },
        ],
      };
      assert.equal(answer.text, JSON.stringify(expected), 'the exact body, keys in this order');

      await runDueJobs(server, dialect, clock);
      assert.deepEqual(
        smtp.messages.map((message) => message.envelopeTo),
        [['ann@example.org'], ['bob@example.org']],
      );
      assert.ok(smtp.messages[0]?.text?.includes(`${PUBLIC_URL}/room/${String(ann.token)}`));
      assert.ok(smtp.messages[0]?.html?.includes(`${PUBLIC_URL}/room/${String(ann.token)}`));
      assert.ok(smtp.messages[0]?.text?.includes('Once started, you have 45 minutes.'));
      assert.ok(
        !smtp.messages[1]?.text?.includes('Once started'),
        'no duration for a student whose use_duration is off',
      );
    });

    it('answers {"student_sessions": []} the second time and sends nothing more', async () => {
      const exam = await createExam();
      await addStudent(exam, { name: 'Cy', email: 'cy@example.org' });
      assert.equal((await sendEmails(teacher, exam)).status, 200);
      const again = await sendEmails(teacher, exam);
      assert.equal(again.status, 200, again.text);
      assert.equal(again.text, '{"student_sessions":[]}');
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 1);
    });

    it('answers V2 failures with empty bodies: 403 for a proctor, 404 out of scope or missing', async () => {
      const exam = await createExam();
      await addStudent(exam, { name: 'Dee', email: 'dee@example.org' });
      assertEmpty(await sendEmails(proctor, exam), 403);
      assertEmpty(await sendEmails(colleague, exam), 404);
      assertEmpty(await sendEmails(outsider, exam), 404);
      assertEmpty(await sendEmails(teacher, 987654321), 404);
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 0, 'nobody was emailed');
      const answer = await sendEmails(teacher, exam);
      assert.equal(object(answer.json, 'body').student_sessions instanceof Array, true);
      assert.equal((object(answer.json, 'body').student_sessions as unknown[]).length, 1);
    });
  });
}
