import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import {
  mailJobs,
  outboxRows,
  runDueJobs,
  startSmtpServer,
  type TestSmtpServer,
} from '../../mail/support.ts';
import { object } from '../../helpers/json.ts';
import { NOT_AUTHORIZED } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** The record of a 200 `{"student": record}` answer (the only key). */
function studentIn(answer: HttpAnswer): Json {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['student']);
  return object(body.student, 'student');
}

for (const dialect of DIALECTS) {
  describe(`POST /api/v3/student_sessions/:id/end_exam [${dialect}]`, () => {
    let server: TestServer;
    let smtp: TestSmtpServer;
    let clock: TestClock;
    let instituteId: number;
    let owner: TestUser;
    let comanager: TestUser;
    let administrator: TestUser;
    let teacher: TestUser;
    let proctor: TestUser;
    let otherProctor: TestUser;
    let reviewer: TestUser;
    let auditor: TestUser;
    let outsider: TestUser;
    let exam: number;

    before(async () => {
      smtp = await startSmtpServer();
      clock = new TestClock(Date.now());
      server = await startTestServer(dialect, {
        clock,
        env: { SMTP_URL: smtp.url, PUBLIC_URL: 'https://exams.example.org' },
      });
      instituteId = await server.institute();
      owner = await server.user(instituteId, 'teacher');
      comanager = await server.user(instituteId, 'teacher');
      administrator = await server.user(instituteId, 'administrator');
      teacher = await server.user(instituteId, 'teacher');
      proctor = await server.user(instituteId, 'proctor');
      otherProctor = await server.user(instituteId, 'proctor');
      reviewer = await server.user(instituteId, 'reviewer');
      auditor = await server.user(instituteId, 'auditor');
      outsider = await server.user(await server.institute(), 'administrator');
      const created = await owner.client.v3('POST', '/exams', {
        name: 'Physics & Chemistry',
        type: 'live_proctoring',
        duration_minutes: 60,
      });
      assert.equal(created.status, 201, created.text);
      exam = object(object(created.json, 'body').exam, 'exam').id as number;
      const added = await owner.client.v3('PUT', '/exams/:id/add_comanager', {
        id: exam,
        comanager_id: comanager.id,
      });
      assert.equal(added.status, 200, added.text);
    });

    after(async () => {
      await server.close();
      await smtp.close();
    });

    beforeEach(async () => {
      await runDueJobs(server, dialect, clock);
      smtp.messages.length = 0;
      clock.current += 1000;
    });

    let sequence = 0;

    /** A new session of the exam, in `status` (set directly, as the candidate room would have moved it). */
    async function newSession(status = 'registered', proctorId?: number): Promise<Json> {
      sequence += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: exam,
        name: `Student ${sequence}`,
        email: `student${sequence}-${dialect}@example.org`,
      });
      assert.equal(answer.status, 201, answer.text);
      const id = object(object(answer.json, 'body').student, 'student').id as number;
      await server.app.database.db
        .updateTable('student_sessions')
        .set({ status })
        .where('id', '=', id)
        .execute();
      if (proctorId !== undefined) {
        const assigned = await owner.client.v3('POST', '/student_sessions/:id/assign_proctor', {
          id,
          proctor_id: proctorId,
        });
        assert.equal(assigned.status, 200, assigned.text);
      }
      return show(id);
    }

    async function show(id: unknown): Promise<Json> {
      const answer = await owner.client.v3('GET', '/student_sessions/:id', { id: id as number });
      return studentIn(answer);
    }

    function endExam(user: TestUser, id: Scalar): Promise<HttpAnswer> {
      return user.client.v3('POST', '/student_sessions/:id/end_exam', { id });
    }

    function setSwitch(value: boolean): Promise<HttpAnswer> {
      return administrator.client.v3('PATCH', '/institutes/:id', {
        id: instituteId,
        exam_finalized_emails_enabled: value,
      });
    }

    async function outboxOf(sessionId: unknown) {
      return (await outboxRows(server)).filter((row) => row.student_session_id === sessionId);
    }

    it('finishes the session (end_time, recording_ended_at, end_reason "api") and notifies the student once', async () => {
      const session = await newSession('exam_started');
      const now = new Date(clock.now()).toISOString();
      const ended = studentIn(await endExam(owner, session.id as number));
      assert.equal(ended.status, 'exam_finished');
      assert.equal(ended.end_time, now);
      assert.equal(ended.recording_ended_at, now);
      assert.equal(ended.end_reason, 'api');
      assert.equal(ended.updated_at, now);
      assert.deepEqual(ended, await show(session.id), 'the answer is the record as saved');
      const unchanged = Object.keys(session).filter(
        (key) => !['status', 'end_time', 'recording_ended_at', 'end_reason', 'updated_at'].includes(key),
      );
      for (const key of unchanged) assert.deepEqual(ended[key], session[key], `${key} is unchanged`);

      const rows = await outboxOf(session.id);
      assert.deepEqual(
        rows.map((row) => [row.kind, row.status, row.to_address]),
        [['exam_finished', 'pending', session.email]],
      );
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 1);
      const [message] = smtp.messages;
      assert.deepEqual(message?.envelopeTo, [session.email]);
      assert.equal(message?.subject, 'Your exam has ended: Physics & Chemistry');
      assert.ok(message?.text?.includes(`Hello ${String(session.name)},`));
      assert.ok(message?.text?.includes('"Physics & Chemistry"'));
      assert.ok(message?.html?.includes('<strong>Physics &amp; Chemistry</strong>'), 'escaped in HTML');
      assert.ok(!message?.text?.includes('/room/'), 'the notification carries no room link');
      assert.equal((await outboxOf(session.id))[0]?.status, 'sent');
    });

    it('answers an ended session with the record as it is: nothing changes, no new email', async () => {
      const session = await newSession('in_setup');
      const ended = studentIn(await endExam(owner, session.id as number));
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 1);
      const jobsBefore = (await mailJobs(server)).length;

      clock.current += 60_000;
      const again = studentIn(await endExam(administrator, session.id as number));
      assert.deepEqual(again, ended, 'same record, same end_time and updated_at');
      assert.equal((await outboxOf(session.id)).length, 1, 'no new outbox row');
      assert.equal((await mailJobs(server)).length, jobsBefore, 'no new delivery job');
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 1, 'no new message');
    });

    it('ends a session from every earlier status', async () => {
      for (const status of [
        'registered',
        'email_sent',
        'after_check_req',
        'in_setup',
        'exam_not_started',
        'exam_started',
      ]) {
        const session = await newSession(status);
        const ended = studentIn(await endExam(comanager, session.id as number));
        assert.equal(ended.status, 'exam_finished', `from ${status}`);
        assert.equal(ended.end_reason, 'api');
      }
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 6);
    });

    it("honours the institute's exam_finalized_emails_enabled: off ends the session without an email", async () => {
      const session = await newSession('exam_started');
      assert.equal((await setSwitch(false)).status, 200);
      try {
        const ended = studentIn(await endExam(owner, session.id as number));
        assert.equal(ended.status, 'exam_finished');
        assert.deepEqual(await outboxOf(session.id), []);
        await runDueJobs(server, dialect, clock);
        assert.equal(smtp.messages.length, 0);
      } finally {
        assert.equal((await setSwitch(true)).status, 200);
      }
    });

    it('writes exactly one notification when two calls race', async () => {
      const session = await newSession('exam_started');
      const answers = await Promise.all([
        endExam(owner, session.id as number),
        endExam(comanager, session.id as number),
        endExam(administrator, session.id as number),
      ]);
      const records = answers.map(studentIn);
      for (const record of records) assert.deepEqual(record, records[0]);
      assert.equal((await outboxOf(session.id)).length, 1);
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 1);
    });

    it('lets managers and the assigned proctor end a session; 403 for other roles, 404 out of scope', async () => {
      for (const user of [owner, comanager, administrator]) {
        const session = await newSession('exam_started');
        assert.equal(studentIn(await endExam(user, session.id as number)).status, 'exam_finished');
      }
      const assigned = await newSession('exam_started', proctor.id);
      for (const user of [otherProctor, reviewer, auditor]) {
        const answer = await endExam(user, assigned.id as number);
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      }
      for (const user of [teacher, outsider]) {
        const answer = await endExam(user, assigned.id as number);
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, {
          error: `Couldn't find Student Session with 'id'=${String(assigned.id)}`,
        });
      }
      assert.equal((await show(assigned.id)).status, 'exam_started', 'the refusals changed nothing');
      assert.deepEqual(await outboxOf(assigned.id), []);
      assert.equal(studentIn(await endExam(proctor, assigned.id as number)).status, 'exam_finished');
      assert.equal((await outboxOf(assigned.id)).length, 1);
    });

    it('answers 404 for a missing session, naming the id as sent', async () => {
      const missing = await endExam(owner, 987654321);
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.json, { error: "Couldn't find Student Session with 'id'=987654321" });
      const word = await endExam(owner, 'abc');
      assert.equal(word.status, 404);
      assert.deepEqual(word.json, { error: "Couldn't find Student Session with 'id'=abc" });
    });
  });
}
