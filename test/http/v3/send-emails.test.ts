import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import {
  mailJobs,
  outboxRows,
  type ReceivedMail,
  runDueJobs,
  startSmtpServer,
  type TestSmtpServer,
} from '../../mail/support.ts';
import { object } from '../../helpers/json.ts';
import { NOT_AUTHORIZED } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://exams.example.org';
const START = '2026-11-21T09:00:00.000Z';
const END = '2026-11-21T12:00:00.000Z';

/** The records of a 200 `{"students": [...]}` answer (the only key). */
function studentsIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['students']);
  assert.ok(Array.isArray(body.students), 'students is an array');
  return body.students.map((item) => object(item, 'student'));
}

function idOf(answer: HttpAnswer, key: string, status = 201): number {
  assert.equal(answer.status, status, answer.text);
  const id = object(object(answer.json, 'body')[key], key).id;
  assert.equal(typeof id, 'number');
  return id as number;
}

for (const dialect of DIALECTS) {
  describe(`POST /api/v3/exams/:id/send_emails [${dialect}]`, () => {
    let server: TestServer;
    let smtp: TestSmtpServer;
    let clock: TestClock;
    let instituteId: number;
    let owner: TestUser;
    let comanager: TestUser;
    let administrator: TestUser;
    let teacher: TestUser;
    let proctor: TestUser;
    let reviewer: TestUser;
    let auditor: TestUser;
    let outsider: TestUser;

    before(async () => {
      smtp = await startSmtpServer();
      clock = new TestClock(Date.now());
      server = await startTestServer(dialect, { clock, env: { SMTP_URL: smtp.url, PUBLIC_URL } });
      instituteId = await server.institute();
      owner = await server.user(instituteId, 'teacher');
      comanager = await server.user(instituteId, 'teacher');
      administrator = await server.user(instituteId, 'administrator');
      teacher = await server.user(instituteId, 'teacher');
      proctor = await server.user(instituteId, 'proctor');
      reviewer = await server.user(instituteId, 'reviewer');
      auditor = await server.user(instituteId, 'auditor');
      outsider = await server.user(await server.institute(), 'administrator');
    });

    after(async () => {
      await server.close();
      await smtp.close();
    });

    beforeEach(async () => {
      // Every test starts with an empty inbox and no delivery left over from the one before.
      await runDueJobs(server, dialect, clock);
      smtp.messages.length = 0;
      smtp.mode = 'accept';
    });

    async function createExam(params: Record<string, Scalar> = {}): Promise<number> {
      const id = idOf(
        await owner.client.v3('POST', '/exams', {
          name: 'Algebra <final>',
          type: 'classroom',
          duration_minutes: 90,
          start_time: START,
          end_time: END,
          ...params,
        }),
        'exam',
      );
      const added = await owner.client.v3('PUT', '/exams/:id/add_comanager', {
        id,
        comanager_id: comanager.id,
      });
      assert.equal(added.status, 200, added.text);
      return id;
    }

    async function addStudent(examId: number, params: Record<string, Scalar>): Promise<Json> {
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        ...params,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').student, 'student');
    }

    function sendEmails(user: TestUser, examId: Scalar): Promise<HttpAnswer> {
      return user.client.v3('POST', '/exams/:id/send_emails', { id: examId });
    }

    async function showStudent(id: unknown): Promise<Json> {
      const answer = await owner.client.v3('GET', '/student_sessions/:id', { id: id as number });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').student, 'student');
    }

    function setSwitch(name: string, value: boolean): Promise<HttpAnswer> {
      return administrator.client.v3('PATCH', '/institutes/:id', { id: instituteId, [name]: value });
    }

    function mailTo(address: string): ReceivedMail {
      const found = smtp.messages.filter((message) => message.envelopeTo.includes(address));
      assert.equal(found.length, 1, `exactly one message to ${address}`);
      return found[0] as ReceivedMail;
    }

    it('emails each registered student the room link with HTML and text parts, and moves them to email_sent', async () => {
      const exam = await createExam();
      const plain = await addStudent(exam, {
        name: 'Ann <Lee>',
        email: 'ann@example.org',
        individual_info: 'Room 4 & desk 7\nBring your ID',
      });
      const html = await addStudent(exam, {
        name: 'Bob',
        email: 'bob@example.org',
        individual_info:
          '<p>Use <strong>desk 9</strong></p><script>alert(1)</script><a href="javascript:x()">x</a>',
        is_individual_info_html: true,
      });
      const late = await addStudent(exam, {
        name: 'Cy',
        email: 'cy@example.org',
        open_time: '2026-11-21T10:30:00.000Z',
      });
      const started = await addStudent(exam, { name: 'Dee', email: 'dee@example.org' });
      await server.app.database.db
        .updateTable('student_sessions')
        .set({ status: 'in_setup' })
        .where('id', '=', started.id as number)
        .execute();

      const emailed = studentsIn(await sendEmails(owner, exam));
      assert.deepEqual(
        emailed.map((student) => student.id),
        [plain.id, html.id, late.id],
      );
      for (const student of emailed) {
        assert.equal(student.status, 'email_sent');
        assert.equal(student.is_email_sent, true);
        assert.equal(student.updated_at, new Date(clock.now()).toISOString());
        assert.deepEqual(student, await showStudent(student.id), 'the answer is the record as saved');
      }
      const untouched = await showStudent(started.id);
      assert.equal(untouched.status, 'in_setup');
      assert.equal(untouched.is_email_sent, false);

      // Written in the request's transaction, delivered by the worker.
      assert.equal(smtp.messages.length, 0, 'nothing is sent inside the request');
      const rows = (await outboxRows(server)).filter((row) =>
        [plain.id, html.id, late.id].includes(row.student_session_id),
      );
      assert.deepEqual(
        rows.map((row) => [row.kind, row.status, row.to_address]),
        [
          ['exam_link', 'pending', 'ann@example.org'],
          ['exam_link', 'pending', 'bob@example.org'],
          ['exam_link', 'pending', 'cy@example.org'],
        ],
      );
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 3);

      const ann = mailTo('ann@example.org');
      const annLink = `${PUBLIC_URL}/room/${String(plain.token)}`;
      assert.equal(ann.subject, 'Your exam link: Algebra <final>');
      assert.equal(ann.from, 'Invigil <no-reply@localhost>');
      assert.ok(ann.text?.includes(annLink), 'the text part holds the room link');
      assert.ok(ann.text?.includes('Hello Ann <Lee>,'));
      assert.ok(ann.text?.includes('"Algebra <final>"'));
      assert.ok(ann.text?.includes('You may start from 2026-11-21 09:00 UTC until 2026-11-21 12:00 UTC.'));
      assert.ok(ann.text?.includes('Once started, you have 90 minutes.'));
      assert.ok(ann.text?.includes('Room 4 & desk 7\nBring your ID'));
      assert.ok(ann.html?.includes(`<a href="${annLink}">`), 'the HTML part links the room');
      assert.ok(ann.html?.includes('Hello Ann &lt;Lee&gt;,'), 'names are escaped in HTML');
      assert.ok(ann.html?.includes('<strong>Algebra &lt;final&gt;</strong>'));
      assert.ok(ann.html?.includes('Room 4 &amp; desk 7<br>'), 'text info is escaped, line breaks kept');
      assert.ok(!ann.html?.includes('<Lee>'));

      const bob = mailTo('bob@example.org');
      assert.ok(bob.text?.includes(`${PUBLIC_URL}/room/${String(html.token)}`));
      assert.ok(bob.html?.includes('<p>Use <strong>desk 9</strong></p>'), 'HTML info is kept as HTML');
      assert.ok(!bob.html?.includes('<script'), 'scripts are removed');
      assert.ok(!bob.html?.includes('javascript:'), 'unsafe links are removed');
      assert.ok(bob.text?.includes('Use desk 9'), 'the text part reads the HTML info as text');
      assert.ok(!bob.text?.includes('<strong>'));

      const cy = mailTo('cy@example.org');
      assert.ok(cy.text?.includes(`${PUBLIC_URL}/room/${String(late.token)}`));
      assert.ok(
        cy.text?.includes('You may start from 2026-11-21 10:30 UTC until 2026-11-21 12:00 UTC.'),
        "the session's open_time opens its window",
      );

      const sent = (await outboxRows(server)).filter((row) => rows.some((written) => written.id === row.id));
      assert.deepEqual(
        sent.map((row) => [row.status, row.sent_at, row.attempts]),
        rows.map(() => ['sent', clock.now(), 1]),
      );
    });

    it('emails nobody the second time and answers {"students": []}', async () => {
      const exam = await createExam();
      await addStudent(exam, { name: 'Eve', email: 'eve@example.org' });
      assert.equal(studentsIn(await sendEmails(owner, exam)).length, 1);
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 1);
      const rowsBefore = (await outboxRows(server)).length;
      const jobsBefore = (await mailJobs(server)).length;

      const again = await sendEmails(owner, exam);
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.json, { students: [] });
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 1, 'no new message');
      assert.equal((await outboxRows(server)).length, rowsBefore, 'no new outbox row');
      assert.equal((await mailJobs(server)).length, jobsBefore, 'no new delivery job');
    });

    it('emails a student added later on the next call, and only that student', async () => {
      const exam = await createExam();
      await addStudent(exam, { name: 'Fay', email: 'fay@example.org' });
      studentsIn(await sendEmails(owner, exam));
      const newcomer = await addStudent(exam, { name: 'Gus', email: 'gus@example.org' });
      const emailed = studentsIn(await sendEmails(comanager, exam));
      assert.deepEqual(
        emailed.map((student) => student.id),
        [newcomer.id],
      );
      await runDueJobs(server, dialect, clock);
      assert.deepEqual(
        smtp.messages.map((message) => message.envelopeTo),
        [['fay@example.org'], ['gus@example.org']],
      );
    });

    it('writes the emails of every student in one transaction with their jobs (one row and one job each)', async () => {
      const exam = await createExam();
      const students = [];
      for (let index = 0; index < 5; index += 1) {
        students.push(await addStudent(exam, { name: `S${index}`, email: `s${index}-${exam}@example.org` }));
      }
      const rowsBefore = (await outboxRows(server)).length;
      const jobsBefore = (await mailJobs(server)).length;
      assert.equal(studentsIn(await sendEmails(administrator, exam)).length, 5);
      const rows = (await outboxRows(server)).slice(rowsBefore);
      const jobs = (await mailJobs(server)).slice(jobsBefore);
      assert.deepEqual(
        rows.map((row) => row.student_session_id),
        students.map((student) => student.id),
      );
      assert.deepEqual(
        jobs.map((job) => JSON.parse(job.payload) as unknown),
        rows.map((row) => ({ outboxId: row.id })),
      );
    });

    it("honours the institute's exam_link_emails_enabled: off emails nobody and changes nothing", async () => {
      const exam = await createExam();
      const student = await addStudent(exam, { name: 'Hal', email: 'hal@example.org' });
      const rowsBefore = (await outboxRows(server)).length;
      assert.equal((await setSwitch('exam_link_emails_enabled', false)).status, 200);
      try {
        const answer = await sendEmails(owner, exam);
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, { students: [] });
        const saved = await showStudent(student.id);
        assert.equal(saved.status, 'registered');
        assert.equal(saved.is_email_sent, false);
        assert.equal((await outboxRows(server)).length, rowsBefore, 'no outbox row');
        await runDueJobs(server, dialect, clock);
        assert.equal(smtp.messages.length, 0);
      } finally {
        assert.equal((await setSwitch('exam_link_emails_enabled', true)).status, 200);
      }
      // Turned back on, the same students are emailed.
      assert.deepEqual(
        studentsIn(await sendEmails(owner, exam)).map((item) => item.id),
        [student.id],
      );
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 1);
    });

    it('lets managers send (owner, co-manager, administrator) and no one else', async () => {
      const exam = await createExam();
      for (const user of [owner, comanager, administrator]) {
        const answer = await sendEmails(user, exam);
        assert.equal(answer.status, 200, answer.text);
      }
      await addStudent(exam, { name: 'Ida', email: 'ida@example.org' });
      for (const user of [proctor, reviewer, auditor]) {
        const answer = await sendEmails(user, exam);
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      }
      for (const user of [teacher, outsider]) {
        const answer = await sendEmails(user, exam);
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, { error: `Couldn't find Exam with 'id'=${exam}` });
      }
      // The refusals emailed nobody: the student is still waiting for the link.
      assert.equal(studentsIn(await sendEmails(owner, exam)).length, 1);
    });

    it('answers 404 for a missing or deleted exam, naming the id as sent', async () => {
      const missing = await sendEmails(owner, 987654321);
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.json, { error: "Couldn't find Exam with 'id'=987654321" });
      const exam = await createExam();
      await addStudent(exam, { name: 'Jo', email: 'jo@example.org' });
      assert.equal((await owner.client.v3('DELETE', '/exams/:id', { id: exam })).status, 200);
      const deleted = await sendEmails(owner, exam);
      assert.equal(deleted.status, 404);
      assert.deepEqual(deleted.json, { error: `Couldn't find Exam with 'id'=${exam}` });
      const word = await sendEmails(owner, 'abc');
      assert.equal(word.status, 404);
      assert.deepEqual(word.json, { error: "Couldn't find Exam with 'id'=abc" });
    });

    it('emails a student only once when two calls race', async () => {
      const exam = await createExam();
      for (let index = 0; index < 4; index += 1) {
        await addStudent(exam, { name: `R${index}`, email: `r${index}-${exam}@example.org` });
      }
      const [first, second] = await Promise.all([sendEmails(owner, exam), sendEmails(comanager, exam)]);
      const ids = [...studentsIn(first), ...studentsIn(second)].map((student) => student.id);
      assert.equal(ids.length, 4);
      assert.equal(new Set(ids).size, 4, 'no student in both answers');
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 4);
    });
  });
}
