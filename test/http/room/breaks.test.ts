import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const MINUTE = 60_000;
const iso = (millis: number) => new Date(millis).toISOString();

function body(answer: HttpAnswer, status = 200): Json {
  assert.equal(answer.status, status, answer.text);
  return object(answer.json, 'body');
}

function conflict(answer: HttpAnswer, error: string): void {
  assert.equal(answer.status, 409, answer.text);
  assert.deepEqual(answer.json, { error });
}

for (const dialect of DIALECTS) {
  describe(`rest breaks and the one clock in the room [${dialect}]`, () => {
    const start = Math.floor(Date.now() / 1000) * 1000;
    const clock = new TestClock(start);
    let server: TestServer;
    let owner: TestUser;
    let examId: number;
    let webcamExam: number;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      const institute = await server.institute();
      owner = await server.user(institute, 'teacher');
      examId = await createExam({ name: 'Timed exam', type: 'classroom', duration_minutes: 30 });
      webcamExam = await createExam({
        name: 'Webcam exam',
        type: 'record_review',
        duration_minutes: 30,
        web_cam: true,
        screen_share: true,
      });
      const document = await owner.client.v3('POST', '/exams/:exam_id/documents', {
        exam_id: examId,
        exam_content: 'Question 1.',
      });
      assert.equal(document.status, 201, document.text);
    });

    after(async () => {
      await server.close();
    });

    async function createExam(params: Record<string, Scalar>): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams', params);
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam').id as number;
    }

    let students = 0;
    async function createStudent(
      exam: number,
      accommodations?: Json,
    ): Promise<{ id: number; token: string }> {
      students += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: exam,
        name: `Candidate ${students}`,
        email: `breaks${students}@example.org`,
        ...(accommodations === undefined ? {} : { accommodations: JSON.stringify(accommodations) }),
      });
      assert.equal(answer.status, 201, answer.text);
      const student = object(object(answer.json, 'body').student, 'student');
      return { id: student.id as number, token: student.token as string };
    }

    function room(token: string, method: string, action = ''): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}${action === '' ? '' : `/${action}`}`,
        method,
      });
    }

    async function started(accommodations?: Json): Promise<{ id: number; token: string; startedAt: number }> {
      const student = await createStudent(examId, accommodations);
      const view = body(await room(student.token, 'POST', 'start'));
      assert.equal(object(view.session, 'session').status, 'exam_started');
      return { ...student, startedAt: clock.current };
    }

    async function incidents(sessionId: number) {
      const rows = await server.app.database.db
        .selectFrom('incidents')
        .select(['kind', 'type', 'comment', 'offset_time', 'created_at'])
        .where('student_session_id', '=', sessionId)
        .orderBy('id')
        .execute();
      return rows.map((row) => ({ ...row, created_at: Number(row.created_at) }));
    }

    it('stops the clock during a break, moves the deadline by it and writes the incident pair', async () => {
      clock.current = start;
      const student = await started({ breaks: { count: 2, minutes: 10 } });
      const first = body(await room(student.token, 'GET'));
      const session = object(first.session, 'session');
      assert.equal(session.deadline_at, iso(student.startedAt + 30 * MINUTE));
      assert.equal(session.deadline_at, session.ends_at);
      assert.equal(session.time_allowed_seconds, 30 * 60);
      assert.deepEqual(first.accommodations, {
        extra_time_minutes: 0,
        extra_time_percent: 0,
        breaks: { count: 2, minutes: 10, taken: 0, remaining: 2 },
        break: null,
        exemptions: [],
        assistive_technology: false,
      });
      assert.equal(object(first.exam, 'exam').record_during_breaks, true);
      assert.notEqual(first.document, null);

      clock.current = student.startedAt + 5 * MINUTE;
      const onBreak = body(await room(student.token, 'POST', 'break'));
      const breakAt = clock.current;
      assert.deepEqual(object(onBreak.accommodations, 'accommodations').break, {
        started_at: iso(breakAt),
        ends_at: iso(breakAt + 10 * MINUTE),
      });
      assert.deepEqual(object(onBreak.accommodations, 'accommodations').breaks, {
        count: 2,
        minutes: 10,
        taken: 1,
        remaining: 1,
      });
      assert.equal(onBreak.document, null, 'the questions are hidden during the break');
      assert.equal(object(onBreak.session, 'session').time_left_seconds, 25 * 60);

      // The clock stands still: three minutes later the same time is left.
      clock.current = breakAt + 3 * MINUTE;
      const during = object(body(await room(student.token, 'GET')).session, 'session');
      assert.equal(during.time_left_seconds, 25 * 60);
      assert.equal(during.deadline_at, iso(student.startedAt + 33 * MINUTE));

      const back = body(await room(student.token, 'POST', 'break/end'));
      assert.equal(object(back.accommodations, 'accommodations').break, null);
      assert.notEqual(back.document, null);
      const afterBreak = object(back.session, 'session');
      assert.equal(afterBreak.deadline_at, iso(student.startedAt + 33 * MINUTE));
      clock.current += MINUTE;
      assert.equal(
        object(body(await room(student.token, 'GET')).session, 'session').time_left_seconds,
        24 * 60,
      );

      assert.deepEqual(await incidents(student.id), [
        {
          kind: 'break_started',
          type: 'break_started',
          comment: 'The student started a rest break',
          offset_time: 5 * 60,
          created_at: breakAt,
        },
        {
          kind: 'break_ended',
          type: 'break_ended',
          comment: 'The student ended the rest break',
          offset_time: 8 * 60,
          created_at: breakAt + 3 * MINUTE,
        },
      ]);
      // The V3 record's incidents name them too.
      const v3 = await owner.client.v3('GET', '/student_sessions/:id', { id: student.id });
      assert.equal(v3.status, 200, v3.text);
      const types = (object(object(v3.json, 'body').student, 'student').incidents as Json[]).map(
        (incident) => incident.type,
      );
      assert.deepEqual(types, ['break_started', 'break_ended']);
    });

    it('ends a break by itself at its allowance, dated at that instant, and counts the limit', async () => {
      clock.current = start;
      const student = await started({ extra_time_percent: 50, breaks: { count: 1, minutes: 10 } });
      assert.equal(
        object(body(await room(student.token, 'GET')).session, 'session').deadline_at,
        iso(student.startedAt + 45 * MINUTE),
      );
      clock.current = student.startedAt + 20 * MINUTE + 500;
      const breakAt = clock.current;
      body(await room(student.token, 'POST', 'break'));
      // Long past the allowance: read again, the break ended at exactly ten minutes.
      clock.current = breakAt + 14 * MINUTE;
      const view = body(await room(student.token, 'GET'));
      assert.equal(object(view.accommodations, 'accommodations').break, null);
      const session = object(view.session, 'session');
      assert.equal(session.deadline_at, iso(student.startedAt + 55 * MINUTE));
      assert.equal(
        session.time_left_seconds,
        Math.ceil((student.startedAt + 55 * MINUTE - clock.current) / 1000),
      );
      const ended = (await incidents(student.id)).at(-1);
      assert.deepEqual(ended, {
        kind: 'break_ended',
        type: 'break_ended',
        comment: 'The rest break ended by itself at its allowance',
        offset_time: 30 * 60,
        created_at: breakAt + 10 * MINUTE,
      });
      // Settled once: another read writes nothing more.
      await room(student.token, 'GET');
      assert.equal((await incidents(student.id)).length, 2);

      // The one break is taken.
      conflict(await room(student.token, 'POST', 'break'), 'No rest breaks are left');
      conflict(await room(student.token, 'POST', 'break/end'), 'No rest break is running');

      // The time-up sweep finishes it at the exact deadline.
      clock.current = student.startedAt + 55 * MINUTE;
      await server.app.services.room.finishTimedOut();
      const v3 = await owner.client.v3('GET', '/student_sessions/:id', { id: student.id });
      const record = object(object(v3.json, 'body').student, 'student');
      assert.equal(record.status, 'exam_finished');
      assert.equal(record.end_reason, 'time_up');
      assert.equal(record.end_time, iso(student.startedAt + 55 * MINUTE));
    });

    it('settles a running break past its allowance before the sweep finishes by time_up', async () => {
      clock.current = start;
      const student = await started({ breaks: { count: 1, minutes: 5 } });
      clock.current = student.startedAt + 28 * MINUTE;
      body(await room(student.token, 'POST', 'break'));
      // Nobody reads the session; the deadline is 30 + 5 minutes after the start.
      clock.current = student.startedAt + 40 * MINUTE;
      const swept = await server.app.services.room.finishTimedOut();
      assert.ok(swept.finished >= 1);
      const rows = await incidents(student.id);
      assert.deepEqual(
        rows.map((row) => [row.kind, row.offset_time, row.created_at]),
        [
          ['break_started', 28 * 60, student.startedAt + 28 * MINUTE],
          ['break_ended', 33 * 60, student.startedAt + 33 * MINUTE],
        ],
      );
      const session = await server.app.database.db
        .selectFrom('student_sessions')
        .select(['status', 'end_reason', 'end_time', 'break_started_at', 'break_ms'])
        .where('id', '=', student.id)
        .executeTakeFirstOrThrow();
      assert.equal(session.status, 'exam_finished');
      assert.equal(session.end_reason, 'time_up');
      assert.equal(Number(session.end_time), student.startedAt + 35 * MINUTE);
      assert.equal(session.break_started_at, null);
      assert.equal(Number(session.break_ms), 5 * MINUTE);
    });

    it('answers 409 where no break may start or end', async () => {
      clock.current = start;
      const none = await started();
      conflict(await room(none.token, 'POST', 'break'), 'This student has no rest breaks');
      assert.equal(object(body(await room(none.token, 'GET')).accommodations, 'accommodations').breaks, null);

      const waiting = await createStudent(examId, { breaks: { count: 1, minutes: 10 } });
      conflict(
        await room(waiting.token, 'POST', 'break'),
        'Rest breaks can be taken only while the exam is started',
      );

      const student = await started({ breaks: { count: 3, minutes: 10 } });
      body(await room(student.token, 'POST', 'break'));
      conflict(await room(student.token, 'POST', 'break'), 'A rest break is already running');
      clock.current += MINUTE;
      // Finishing during a break ends it with the exam.
      const finished = body(await room(student.token, 'POST', 'finish'));
      assert.equal(object(finished.session, 'session').status, 'exam_finished');
      const rows = await incidents(student.id);
      assert.deepEqual(
        rows.map((row) => [row.kind, row.comment]),
        [
          ['break_started', 'The student started a rest break'],
          ['break_ended', 'The rest break ended when the exam was finished'],
        ],
      );
      const finishedError = 'The exam is finished: this student session accepts no more changes';
      conflict(await room(student.token, 'POST', 'break'), finishedError);
      conflict(await room(student.token, 'POST', 'break/end'), finishedError);
      assert.equal((await room('0'.repeat(32), 'POST', 'break')).status, 404);
    });

    it('shows the candidate which checks they are exempt from, never why', async () => {
      clock.current = start;
      const student = await createStudent(webcamExam, {
        exemptions: [
          { check: 'webcam', reason: 'Secret reason about the camera' },
          { check: 'screen_share', reason: 'Another private reason' },
        ],
        assistive_technology: true,
        note: 'Staff-only note about the student',
      });
      const answer = await room(student.token, 'GET');
      const view = body(answer);
      assert.deepEqual(object(view.accommodations, 'accommodations').exemptions, ['webcam', 'screen_share']);
      assert.equal(object(view.accommodations, 'accommodations').assistive_technology, true);
      assert.ok(!answer.text.includes('Secret reason'), answer.text);
      assert.ok(!answer.text.includes('private reason'), answer.text);
      assert.ok(!answer.text.includes('Staff-only note'), answer.text);
      assert.deepEqual(object(view.session, 'session').required_checks, [
        'microphone_check',
        'bandwidth_check',
      ]);
    });

    it('needs no phone for a candidate exempt from it', async () => {
      const phoneExam = await createExam({
        name: 'Phone exam',
        type: 'record_review',
        duration_minutes: 30,
        mobile_cam: true,
      });
      const usual = await createStudent(phoneExam);
      const usualView = body(await room(usual.token, 'GET'));
      assert.notEqual(usualView.mobile, undefined);
      assert.deepEqual(object(usualView.session, 'session').required_checks, [
        'mobile_check',
        'bandwidth_check',
      ]);
      const exempt = await createStudent(phoneExam, {
        exemptions: [{ check: 'mobile', reason: 'No smartphone' }],
      });
      const view = body(await room(exempt.token, 'GET'));
      assert.equal(view.mobile, undefined, 'no pairing for a candidate exempt from the phone');
      assert.ok(!(object(view.session, 'session').required_checks as string[]).includes('mobile_check'));
    });

    it('shows a changed accommodation of a running session on the next read', async () => {
      clock.current = start;
      const student = await started();
      const before = object(body(await room(student.token, 'GET')).session, 'session');
      assert.equal(before.deadline_at, iso(student.startedAt + 30 * MINUTE));
      clock.current += MINUTE;
      const patched = await owner.client.v3('PATCH', '/student_sessions/:id', {
        id: student.id,
        accommodations: JSON.stringify({ extra_time_minutes: 10, breaks: { count: 1, minutes: 5 } }),
      });
      assert.equal(patched.status, 200, patched.text);
      const view = body(await room(student.token, 'GET'));
      const session = object(view.session, 'session');
      assert.equal(session.deadline_at, iso(student.startedAt + 40 * MINUTE));
      assert.equal(session.time_allowed_seconds, 40 * 60);
      assert.equal(session.time_left_seconds, 39 * 60);
      assert.deepEqual(object(view.accommodations, 'accommodations').breaks, {
        count: 1,
        minutes: 5,
        taken: 0,
        remaining: 1,
      });
      // The new break allowance applies at once too.
      body(await room(student.token, 'POST', 'break'));
    });
  });
}
