import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { invalid, notFound } from '../../helpers/answers.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { runDueJobs, startSmtpServer, type TestSmtpServer } from '../../mail/support.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://exams.example.org';
const PATH = '/exams/:id/email_deliveries';

/** One server's world: an institute, its exam manager and a proctor, and an outsider. */
interface World {
  server: TestServer;
  owner: TestUser;
  proctor: TestUser;
  outsider: TestUser;
}

async function startWorld(dialect: 'sqlite' | 'postgres', env: Record<string, string>): Promise<World> {
  const server = await startTestServer(dialect, { env: { PUBLIC_URL, ...env } });
  const instituteId = await server.institute();
  return {
    server,
    owner: await server.user(instituteId, 'teacher'),
    proctor: await server.user(instituteId, 'proctor'),
    outsider: await server.user(await server.institute(), 'administrator'),
  };
}

async function createExam(world: World): Promise<number> {
  const answer = await world.owner.client.v3('POST', '/exams', {
    name: 'Delivery check',
    type: 'record_review',
    duration_minutes: 60,
  });
  assert.equal(answer.status, 201, answer.text);
  return Number(object(object(answer.json, 'body').exam, 'exam').id);
}

async function addStudent(world: World, examId: number, name: string): Promise<Json> {
  const answer = await world.owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
    exam_id: examId,
    name,
    email: `${name.toLowerCase()}@example.org`,
  });
  assert.equal(answer.status, 201, answer.text);
  return object(object(answer.json, 'body').student, 'student');
}

async function sendEmails(world: World, examId: number): Promise<void> {
  const answer = await world.owner.client.v3('POST', '/exams/:id/send_emails', { id: examId });
  assert.equal(answer.status, 200, answer.text);
}

function deliveries(user: TestUser, examId: number, ids: readonly (number | string)[]): Promise<HttpAnswer> {
  const params: Record<string, Scalar> = { id: examId };
  if (ids.length > 0) params.student_session_ids = ids.join(',');
  return user.client.v3('GET', PATH, params);
}

function bodyOf(answer: HttpAnswer): Json {
  assert.equal(answer.status, 200, answer.text);
  return object(answer.json, 'body');
}

function studentsOf(body: Json): Json[] {
  assert.ok(Array.isArray(body.students));
  return body.students.map((item) => object(item, 'student'));
}

for (const dialect of DIALECTS) {
  describe(`GET /api/v3/exams/:id/email_deliveries [${dialect}]`, () => {
    let held: World;
    let smtpWorld: World;
    let smtp: TestSmtpServer;

    before(async () => {
      smtp = await startSmtpServer();
      held = await startWorld(dialect, { SMTP_URL: '' });
      smtpWorld = await startWorld(dialect, { SMTP_URL: smtp.url });
    });

    after(async () => {
      await held?.server.close();
      await smtpWorld?.server.close();
      await smtp?.close();
    });

    it('says queued, then held, without SMTP_URL, with each room link, while the V3 record says email_sent', async () => {
      const examId = await createExam(held);
      const ann = await addStudent(held, examId, 'Ann');
      const bob = await addStudent(held, examId, 'Bob');
      const ids = [Number(ann.id), Number(bob.id)];

      const before = bodyOf(await deliveries(held.owner, examId, ids));
      assert.equal(before.mail_server_configured, false);
      assert.deepEqual(before.counts, { queued: 0, delivered: 0, held: 0, failed: 0 });
      assert.deepEqual(
        studentsOf(before).map((student) => [student.student_session_id, student.room_url, student.email]),
        [
          [ann.id, `${PUBLIC_URL}/room/${String(ann.token)}`, null],
          [bob.id, `${PUBLIC_URL}/room/${String(bob.token)}`, null],
        ],
      );

      await sendEmails(held, examId);
      const queued = bodyOf(await deliveries(held.owner, examId, ids));
      assert.deepEqual(queued.counts, { queued: 2, delivered: 0, held: 0, failed: 0 });
      assert.deepEqual(
        studentsOf(queued).map((student) => object(student.email, 'email').delivery),
        ['queued', 'queued'],
      );

      await runDueJobs(held.server, dialect, held.server.app.clock);
      const answer = bodyOf(await deliveries(held.owner, examId, ids));
      assert.deepEqual(answer.counts, { queued: 0, delivered: 0, held: 2, failed: 0 });
      for (const student of studentsOf(answer)) {
        const email = object(student.email, 'email');
        assert.deepEqual(Object.keys(email), [
          'outbox_id',
          'delivery',
          'status',
          'last_error',
          'created_at',
          'sent_at',
        ]);
        assert.equal(email.delivery, 'held');
        assert.equal(email.status, 'held');
        assert.equal(email.sent_at, null);
      }
      // The contract's fields are untouched: the sessions moved to email_sent at send time.
      const listed = await held.owner.client.v3('GET', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
      });
      const records = object(listed.json, 'body').students as Json[];
      assert.deepEqual(
        records.map((record) => [record.status, record.is_email_sent]),
        [
          ['email_sent', true],
          ['email_sent', true],
        ],
      );
    });

    it('says delivered once the mail server took an email, and failed with the reason when it refused', async () => {
      const examId = await createExam(smtpWorld);
      const cleo = await addStudent(smtpWorld, examId, 'Cleo');
      await sendEmails(smtpWorld, examId);
      smtp.mode = 'accept';
      await runDueJobs(smtpWorld.server, dialect, smtpWorld.server.app.clock);
      const dan = await addStudent(smtpWorld, examId, 'Dan');
      await sendEmails(smtpWorld, examId);
      smtp.mode = 'reject';
      try {
        await runDueJobs(smtpWorld.server, dialect, smtpWorld.server.app.clock);
      } finally {
        smtp.mode = 'accept';
      }
      const body = bodyOf(await deliveries(smtpWorld.owner, examId, [Number(dan.id), Number(cleo.id)]));
      assert.equal(body.mail_server_configured, true);
      assert.deepEqual(body.counts, { queued: 0, delivered: 1, held: 0, failed: 1 });
      const [first, second] = studentsOf(body);
      assert.equal(first?.student_session_id, cleo.id, 'by id ascending');
      const delivered = object(first?.email, 'cleo');
      assert.equal(delivered.delivery, 'delivered');
      assert.equal(delivered.status, 'sent');
      assert.equal(typeof delivered.sent_at, 'string');
      const failed = object(second?.email, 'dan');
      assert.equal(failed.delivery, 'failed');
      assert.match(String(failed.last_error), /550|No such mailbox/);
    });

    it('answers readers of the exam, leaves out sessions of other exams, and hides the exam from others', async () => {
      const examId = await createExam(held);
      const other = await createExam(held);
      const eve = await addStudent(held, examId, 'Eve');
      const stranger = await addStudent(held, other, 'Stranger');
      const body = bodyOf(
        await deliveries(held.proctor, examId, [Number(stranger.id), Number(eve.id), 999999]),
      );
      assert.deepEqual(
        studentsOf(body).map((student) => student.student_session_id),
        [eve.id],
      );
      const summaryOnly = bodyOf(await deliveries(held.owner, examId, []));
      assert.deepEqual(summaryOnly.students, []);

      const outsider = await deliveries(held.outsider, examId, [Number(eve.id)]);
      assert.equal(outsider.status, 404);
      assert.deepEqual(outsider.json, notFound('Exam', examId));
    });

    it('answers 422 for ids that are not ids, and for more than 300', async () => {
      const examId = await createExam(held);
      for (const ids of [['1', 'x'], ['0'], ['-3'], ['1.5']]) {
        const answer = await deliveries(held.owner, examId, ids);
        assert.equal(answer.status, 422, `${ids.join(',')}: ${answer.text}`);
        assert.deepEqual(answer.json, invalid('student_session_ids', 'is invalid'));
      }
      const many = Array.from({ length: 301 }, (_, index) => index + 1);
      const answer = await deliveries(held.owner, examId, many);
      assert.equal(answer.status, 422, answer.text);
      assert.deepEqual(answer.json, invalid('student_session_ids', 'names more than 300 sessions'));
    });
  });
}
