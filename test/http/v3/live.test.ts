/**
 * Live proctoring's REST side (docs/api-live.md) through real HTTP: the chat (V3 and the room), admitting
 * after a live ID check, pausing and resuming the candidate's clock, who may do each, the events the
 * live sockets are told, the audit entries and incidents, and what the room and the records show.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { LiveEvent } from '../../../src/domain/ports/live-events.ts';
import { invalid, missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { type Browser, consoleV3, signIn, staffUser } from '../staff/support.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const MINUTE = 60_000;
const MESSAGE_KEYS = ['id', 'student_session_id', 'sender', 'author', 'body', 'created_at'];
const NO_LIVE_PROCTOR = { error: 'This exam has no live proctor' };
const FINISHED = { error: 'The exam is finished: this student session accepts no more changes' };
const AWAITING = { error: 'Your proctor has to check your ID before you can continue' };
const TOO_LONG = invalid('body', 'is too long (maximum is 2000 characters)');

function assertAnswer(answer: HttpAnswer, status: number, body?: unknown): void {
  assert.equal(answer.status, status, answer.text);
  if (body !== undefined) assert.deepEqual(answer.json, body);
}

/** The record of a 200 `{"student": record}` answer (its only key). */
function studentIn(answer: HttpAnswer): Json {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['student']);
  return object(body.student, 'student');
}

/** The message of a 201 answer, with exactly the LiveMessageJson keys. */
function messageIn(answer: HttpAnswer): Json {
  assert.equal(answer.status, 201, answer.text);
  const message = object(answer.json, 'message');
  assert.deepEqual(Object.keys(message), MESSAGE_KEYS);
  return message;
}

function messagesIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['messages']);
  return (body.messages as unknown[]).map((item) => object(item, 'message'));
}

for (const dialect of DIALECTS) {
  describe(`live proctoring REST [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let instituteId: number;
    let owner: TestUser;
    let comanager: TestUser;
    let administrator: TestUser;
    let teacher: TestUser;
    let proctor: TestUser & { email: string };
    let otherProctor: TestUser;
    let reviewer: TestUser;
    let auditor: TestUser;
    let outsider: TestUser;
    let proctorName: string;
    /** A live_proctoring exam whose proctor admits each candidate after a live ID check. */
    let idCheckExam: number;
    /** A live_proctoring exam without the ID check. */
    let liveExam: number;
    /** A classroom exam: no live proctor. */
    let plainExam: number;
    const events: LiveEvent[] = [];

    before(async () => {
      server = await startTestServer(dialect, { clock });
      instituteId = await server.institute();
      owner = await server.user(instituteId, 'teacher');
      comanager = await server.user(instituteId, 'teacher');
      administrator = await server.user(instituteId, 'administrator');
      teacher = await server.user(instituteId, 'teacher');
      proctor = await staffUser(server, instituteId, 'proctor');
      otherProctor = await server.user(instituteId, 'proctor');
      reviewer = await server.user(instituteId, 'reviewer');
      auditor = await server.user(instituteId, 'auditor');
      outsider = await server.user(await server.institute(), 'administrator');
      proctorName = (
        await server.app.database.db
          .selectFrom('users')
          .select('name')
          .where('id', '=', proctor.id)
          .executeTakeFirstOrThrow()
      ).name;
      idCheckExam = await createExam({
        name: 'Live with ID check',
        type: 'live_proctoring',
        duration_minutes: 60,
        live_id_check: true,
      });
      liveExam = await createExam({ name: 'Live', type: 'live_proctoring', duration_minutes: 60 });
      plainExam = await createExam({ name: 'Classroom', type: 'classroom', duration_minutes: 60 });
      server.app.services.liveEvents.subscribe((event) => events.push(event));
    });

    after(async () => {
      await server.close();
    });

    beforeEach(() => {
      events.length = 0;
      clock.current += 1000;
    });

    async function createExam(params: Record<string, Scalar>): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams', params);
      assert.equal(answer.status, 201, answer.text);
      const exam = object(object(answer.json, 'body').exam, 'exam');
      assert.equal(exam.live_id_check, params.live_id_check ?? false);
      const added = await owner.client.v3('PUT', '/exams/:id/add_comanager', {
        id: exam.id as number,
        comanager_id: comanager.id,
      });
      assert.equal(added.status, 200, added.text);
      return exam.id as number;
    }

    let sequence = 0;

    /**
     * A new session of `exam` with `proctor` assigned, in `status` (set directly, as the candidate
     * room would have moved it). Returns its id and room token.
     */
    async function newSession(exam: number, status = 'registered'): Promise<{ id: number; token: string }> {
      sequence += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: exam,
        name: `Candidate ${sequence}`,
        email: `candidate${sequence}@example.org`,
      });
      assert.equal(answer.status, 201, answer.text);
      const student = object(object(answer.json, 'body').student, 'student');
      const id = student.id as number;
      await server.app.database.db
        .updateTable('student_sessions')
        .set({
          status,
          in_setup: status === 'in_setup',
          start_time: status === 'exam_started' ? clock.now() : null,
        })
        .where('id', '=', id)
        .execute();
      const assigned = await owner.client.v3('POST', '/student_sessions/:id/assign_proctor', {
        id,
        proctor_id: proctor.id,
      });
      assert.equal(assigned.status, 200, assigned.text);
      return { id, token: student.token as string };
    }

    function show(id: number): Promise<Json> {
      return owner.client.v3('GET', '/student_sessions/:id', { id }).then(studentIn);
    }

    function room(token: string, method: string, action = '', body?: Json): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}${action === '' ? '' : `/${action}`}`,
        method,
        ...(body === undefined
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
    }

    /** The room view's `session` and `live`, checking the 200. */
    async function roomView(token: string): Promise<{ session: Json; live: Json }> {
      const answer = await room(token, 'GET');
      assert.equal(answer.status, 200, answer.text);
      const body = object(answer.json, 'body');
      return { session: object(body.session, 'session'), live: object(body.live, 'live') };
    }

    function post(user: TestUser, id: Scalar, body: Scalar | undefined): Promise<HttpAnswer> {
      return user.client.v3(
        'POST',
        '/student_sessions/:id/messages',
        body === undefined ? { id } : { id, body },
      );
    }

    function act(user: TestUser, action: 'admit' | 'pause' | 'resume', id: Scalar): Promise<HttpAnswer> {
      return user.client.v3('POST', `/student_sessions/:id/${action}`, { id });
    }

    /** The audit entries of `action` on session `id`, as `[user_id, status]`. */
    async function audited(action: string, id: number): Promise<[number | null, number][]> {
      const rows = await server.app.database.db
        .selectFrom('audit_events')
        .select(['user_id', 'status', 'target_type'])
        .where('action', '=', action)
        .where('target_id', '=', id)
        .orderBy('id')
        .execute();
      for (const row of rows) assert.equal(row.target_type, 'student_sessions');
      return rows.map((row) => [row.user_id, row.status]);
    }

    /** The incidents of a session as `[comment, offset_time]`, oldest first. */
    async function incidentsOf(id: number): Promise<[unknown, unknown][]> {
      const record = await show(id);
      return (record.incidents as Json[]).map((incident) => [incident.comment, incident.offset_time]);
    }

    describe('the chat: GET and POST /api/v3/student_sessions/:id/messages, /api/room/:token/messages', () => {
      it('carries a conversation both ways, oldest first, each message told to the live sockets', async () => {
        const session = await newSession(liveExam, 'exam_started');
        const sent = messageIn(
          await post(proctor, session.id, '  Please show your ID card to the camera.  '),
        );
        assert.equal(sent.sender, 'proctor');
        assert.equal(sent.author, proctorName);
        assert.equal(sent.body, 'Please show your ID card to the camera.', 'trimmed');
        assert.equal(sent.student_session_id, session.id);
        assert.equal(sent.created_at, new Date(clock.now()).toISOString());
        assert.deepEqual(events, [
          { kind: 'message', examId: liveExam, sessionId: session.id, message: sent },
        ]);

        clock.current += 5000;
        events.length = 0;
        const answered = messageIn(await room(session.token, 'POST', 'messages', { body: 'Here it is.' }));
        assert.equal(answered.sender, 'candidate');
        assert.equal(answered.author, null);
        assert.deepEqual(events, [
          { kind: 'message', examId: liveExam, sessionId: session.id, message: answered },
        ]);

        const staffList = messagesIn(
          await proctor.client.v3('GET', '/student_sessions/:id/messages', { id: session.id }),
        );
        assert.deepEqual(staffList, [sent, answered]);
        assert.deepEqual(messagesIn(await room(session.token, 'GET', 'messages')), [sent, answered]);
        assert.deepEqual(await audited('POST /api/v3/student_sessions/:id/messages', session.id), [
          [proctor.id, 201],
        ]);
      });

      it("answers another session's room with its own conversation only", async () => {
        const first = await newSession(liveExam, 'exam_started');
        const second = await newSession(liveExam, 'exam_started');
        messageIn(await post(owner, first.id, 'For the first'));
        assert.deepEqual(messagesIn(await room(second.token, 'GET', 'messages')), []);
        assert.deepEqual(
          messagesIn(await owner.client.v3('GET', '/student_sessions/:id/messages', { id: second.id })),
          [],
        );
      });

      it('takes 1 to 2000 characters after trimming, counting characters rather than UTF-16 units', async () => {
        const session = await newSession(liveExam, 'in_setup');
        assertAnswer(await post(proctor, session.id, undefined), 422, missing('body'));
        assertAnswer(await post(proctor, session.id, '   \n\t '), 422, missing('body'));
        assertAnswer(await post(proctor, session.id, null), 422, missing('body'));
        assertAnswer(await post(proctor, session.id, 'x'.repeat(2001)), 422, TOO_LONG);
        assertAnswer(
          await room(session.token, 'POST', 'messages', { body: 'y'.repeat(2001) }),
          422,
          TOO_LONG,
        );
        assertAnswer(await room(session.token, 'POST', 'messages', {}), 422, missing('body'));
        assertAnswer(
          await room(session.token, 'POST', 'messages', { body: { text: 'hi' } }),
          422,
          invalid('body', 'must be a string'),
        );
        assert.equal(
          messageIn(await post(proctor, session.id, ` ${'x'.repeat(2000)} `)).body,
          'x'.repeat(2000),
        );
        // 2000 emoji are 4000 UTF-16 units: still 2000 characters.
        assert.equal(messageIn(await post(proctor, session.id, '🙂'.repeat(2000))).body, '🙂'.repeat(2000));
        assert.equal(messagesIn(await room(session.token, 'GET', 'messages')).length, 2);
        assert.equal(events.length, 2, 'only the stored messages are told');
      });

      it('answers 409 for an exam without a live proctor and for a finished session, storing nothing', async () => {
        const plain = await newSession(plainExam, 'exam_started');
        assertAnswer(await post(owner, plain.id, 'Hello'), 409, NO_LIVE_PROCTOR);
        assertAnswer(await room(plain.token, 'POST', 'messages', { body: 'Hello' }), 409, NO_LIVE_PROCTOR);
        assert.deepEqual(messagesIn(await room(plain.token, 'GET', 'messages')), []);
        const finished = await newSession(liveExam, 'exam_finished');
        assertAnswer(await post(proctor, finished.id, 'Hello'), 409, FINISHED);
        assertAnswer(await room(finished.token, 'POST', 'messages', { body: 'Hello' }), 409, FINISHED);
        assert.deepEqual(events, []);
        assertAnswer(await room('0'.repeat(32), 'GET', 'messages'), 404, {
          error: "Couldn't find the exam room",
        });
      });

      it('lists the newest 200 messages, oldest first', async () => {
        const session = await newSession(liveExam, 'exam_started');
        await server.app.database.db
          .insertInto('live_messages')
          .values(
            Array.from({ length: 205 }, (_, index) => ({
              student_session_id: session.id,
              sender: index % 2 === 0 ? 'candidate' : 'proctor',
              user_id: index % 2 === 0 ? null : proctor.id,
              body: `Message ${index}`,
              created_at: clock.now() + index,
            })),
          )
          .execute();
        const listed = messagesIn(
          await owner.client.v3('GET', '/student_sessions/:id/messages', { id: session.id }),
        );
        assert.equal(listed.length, 200);
        assert.equal(listed[0]?.body, 'Message 5');
        assert.equal(listed[199]?.body, 'Message 204');
        assert.deepEqual([listed[0]?.sender, listed[0]?.author], ['proctor', proctorName]);
        assert.deepEqual([listed[1]?.sender, listed[1]?.author], ['candidate', null]);
        assert.deepEqual(messagesIn(await room(session.token, 'GET', 'messages')), listed);
      });

      it('lets managers, administrators and the assigned proctor chat; 403 for other roles, 404 out of scope', async () => {
        const session = await newSession(liveExam, 'exam_started');
        for (const user of [owner, comanager, administrator, proctor]) {
          messageIn(await post(user, session.id, 'Hello'));
          messagesIn(await user.client.v3('GET', '/student_sessions/:id/messages', { id: session.id }));
        }
        for (const user of [otherProctor, reviewer, auditor]) {
          assertAnswer(await post(user, session.id, 'Hello'), 403, NOT_AUTHORIZED);
          assertAnswer(
            await user.client.v3('GET', '/student_sessions/:id/messages', { id: session.id }),
            403,
            NOT_AUTHORIZED,
          );
        }
        for (const user of [teacher, outsider]) {
          assertAnswer(await post(user, session.id, 'Hello'), 404, notFound('Student Session', session.id));
          assertAnswer(
            await user.client.v3('GET', '/student_sessions/:id/messages', { id: session.id }),
            404,
            notFound('Student Session', session.id),
          );
        }
        assertAnswer(await post(owner, 987654321, 'Hello'), 404, notFound('Student Session', 987654321));
        assert.equal(messagesIn(await room(session.token, 'GET', 'messages')).length, 4);
      });

      it('works from the console: the staff session cookie, with the CSRF header on a write', async () => {
        const session = await newSession(liveExam, 'exam_started');
        const browser: Browser = await signIn(server, proctor.email);
        const path = `/student_sessions/${session.id}/messages`;
        assertAnswer(
          await consoleV3(server, browser, 'POST', path, { body: { body: 'No header' } }),
          403,
          NOT_AUTHORIZED,
        );
        const sent = messageIn(
          await consoleV3(server, browser, 'POST', path, {
            body: { body: 'From the wall' },
            csrf: browser.csrf,
          }),
        );
        assert.equal(sent.author, proctorName);
        assert.deepEqual(messagesIn(await consoleV3(server, browser, 'GET', path)), [sent]);
        const paused = studentIn(
          await consoleV3(server, browser, 'POST', `/student_sessions/${session.id}/pause`, {
            csrf: browser.csrf,
          }),
        );
        assert.equal(paused.clock_paused, true);
        assert.deepEqual(await audited('POST /api/v3/student_sessions/:id/pause', session.id), [
          [proctor.id, 200],
        ]);
      });
    });

    describe('POST /api/v3/student_sessions/:id/admit and the room waiting for it', () => {
      it('keeps the candidate in the setup until a proctor admits them, then lets them start', async () => {
        const session = await newSession(idCheckExam, 'after_check_req');
        assertAnswer(await room(session.token, 'POST', 'start'), 409, AWAITING);
        assertAnswer(await room(session.token, 'POST', 'leave'), 409, AWAITING);
        const entered = await room(session.token, 'POST', 'enter');
        assert.equal(entered.status, 200, entered.text);
        const waiting = await roomView(session.token);
        assert.equal(waiting.session.status, 'in_setup');
        assert.deepEqual(waiting.live, {
          enabled: true,
          socket: `/live/room/${session.token}`,
          awaiting_admission: true,
          clock_paused: false,
        });
        assertAnswer(await room(session.token, 'POST', 'leave'), 409, AWAITING);
        assertAnswer(await room(session.token, 'POST', 'start'), 409, AWAITING);
        assert.equal((await show(session.id)).status, 'in_setup', 'the refusals changed nothing');
        assert.deepEqual(events, []);

        const admitted = studentIn(await act(proctor, 'admit', session.id));
        assert.equal(admitted.status, 'exam_not_started');
        assert.equal(admitted.in_setup, false);
        assert.equal(admitted.updated_at, new Date(clock.now()).toISOString());
        assert.deepEqual(admitted, await show(session.id));
        assert.deepEqual(await incidentsOf(session.id), [
          [`Admitted by ${proctorName} after a live ID check`, null],
        ]);
        assert.deepEqual(events, [
          { kind: 'control', examId: idCheckExam, sessionId: session.id, action: 'admitted' },
        ]);
        assert.deepEqual(await audited('POST /api/v3/student_sessions/:id/admit', session.id), [
          [proctor.id, 200],
        ]);
        assert.equal((await roomView(session.token)).live.awaiting_admission, false);
        // The page reloaded after the admission enters the room again: the candidate stays admitted.
        const reentered = await room(session.token, 'POST', 'enter');
        assert.equal(reentered.status, 200, reentered.text);
        assert.equal(object(object(reentered.json, 'body').session, 'session').status, 'exam_not_started');
        assert.equal((await roomView(session.token)).live.awaiting_admission, false);

        const started = await roomView(session.token).then(async () => room(session.token, 'POST', 'start'));
        assert.equal(started.status, 200, started.text);
        assert.equal(object(object(started.json, 'body').session, 'session').status, 'exam_started');
      });

      it('keeps an admitted candidate admitted when the room is entered again (a reload)', async () => {
        const session = await newSession(idCheckExam, 'exam_not_started');
        assert.equal((await room(session.token, 'POST', 'enter')).status, 200);
        assert.equal((await roomView(session.token)).live.awaiting_admission, false);
        assert.equal((await show(session.id)).status, 'exam_not_started');
        assert.equal((await room(session.token, 'POST', 'start')).status, 200);
      });

      it('admits in a live exam without the ID check too, where the room leaves the setup by itself', async () => {
        const session = await newSession(liveExam, 'in_setup');
        assert.equal((await roomView(session.token)).live.awaiting_admission, false);
        studentIn(await act(administrator, 'admit', session.id));
        const name = (
          await server.app.database.db
            .selectFrom('users')
            .select('name')
            .where('id', '=', administrator.id)
            .executeTakeFirstOrThrow()
        ).name;
        assert.deepEqual(await incidentsOf(session.id), [[`Admitted by ${name}`, null]]);
        const other = await newSession(liveExam, 'in_setup');
        const left = await room(other.token, 'POST', 'leave');
        assert.equal(left.status, 200, left.text);
        assert.equal(object(object(left.json, 'body').live, 'live').awaiting_admission, false);
      });

      it('answers 409 unless the session is in_setup, changing nothing', async () => {
        for (const status of ['registered', 'exam_not_started', 'exam_started', 'exam_finished']) {
          const session = await newSession(idCheckExam, status);
          assertAnswer(await act(proctor, 'admit', session.id), 409, {
            error: `Only a session in in_setup can be admitted (the session is ${status})`,
          });
          assert.equal((await show(session.id)).status, status);
          assert.deepEqual(await incidentsOf(session.id), []);
        }
        assert.deepEqual(events, []);
      });

      it('lets managers, administrators and the assigned proctor admit; 403 for other roles, 404 out of scope', async () => {
        for (const user of [owner, comanager, administrator, proctor]) {
          const session = await newSession(idCheckExam, 'in_setup');
          assert.equal(studentIn(await act(user, 'admit', session.id)).status, 'exam_not_started');
        }
        const session = await newSession(idCheckExam, 'in_setup');
        for (const user of [otherProctor, reviewer, auditor]) {
          assertAnswer(await act(user, 'admit', session.id), 403, NOT_AUTHORIZED);
        }
        for (const user of [teacher, outsider]) {
          assertAnswer(await act(user, 'admit', session.id), 404, notFound('Student Session', session.id));
        }
        assert.equal((await show(session.id)).status, 'in_setup');
      });
    });

    describe('POST /api/v3/student_sessions/:id/pause and /resume: the clock stands still', () => {
      it('stops the deadline while paused, gives the time back on resume, and finishes at the moved deadline', async () => {
        const session = await newSession(liveExam, 'exam_not_started');
        const start = clock.now();
        const started = await room(session.token, 'POST', 'start');
        assert.equal(started.status, 200, started.text);
        const fresh = await show(session.id);
        assert.deepEqual(
          [fresh.live_status, fresh.clock_paused, fresh.paused_seconds],
          ['offline', false, 0],
        );

        clock.current = start + 10 * MINUTE;
        events.length = 0;
        const paused = studentIn(await act(proctor, 'pause', session.id));
        assert.equal(paused.clock_paused, true);
        assert.equal(paused.paused_seconds, 0);
        assert.equal(paused.updated_at, new Date(clock.now()).toISOString());
        assert.deepEqual(events, [
          { kind: 'control', examId: liveExam, sessionId: session.id, action: 'paused' },
        ]);
        assert.deepEqual(await incidentsOf(session.id), [['The proctor paused the exam clock', 600]]);
        const monitor = object(
          object((await owner.client.v3('GET', '/exams/:id/monitor', { id: liveExam })).json, 'body').monitor,
          'monitor',
        );
        const entry = (monitor.sessions as Json[]).find((item) => item.id === session.id);
        assert.equal(entry?.clock_paused, true);
        assert.equal(entry?.live_status, 'offline');

        // Half an hour later, and again past the original deadline: the candidate still has 50 minutes.
        for (const minutes of [40, 75]) {
          clock.current = start + minutes * MINUTE;
          const view = await roomView(session.token);
          assert.equal(view.session.status, 'exam_started', `still started at ${minutes} minutes`);
          assert.equal(view.session.time_left_seconds, 50 * 60);
          assert.equal(view.session.ends_at, new Date(clock.now() + 50 * MINUTE).toISOString());
          assert.equal(view.live.clock_paused, true);
          assert.equal((await show(session.id)).paused_seconds, (minutes - 10) * 60);
        }
        assertAnswer(await act(proctor, 'pause', session.id), 409, {
          error: 'The exam clock is already paused',
        });

        events.length = 0;
        const resumed = studentIn(await act(comanager, 'resume', session.id));
        assert.equal(resumed.clock_paused, false);
        assert.equal(resumed.paused_seconds, 65 * 60);
        assert.deepEqual(events, [
          { kind: 'control', examId: liveExam, sessionId: session.id, action: 'resumed' },
        ]);
        assert.deepEqual(await incidentsOf(session.id), [
          ['The proctor paused the exam clock', 600],
          ['The proctor resumed the exam clock', 75 * 60],
        ]);
        assertAnswer(await act(proctor, 'resume', session.id), 409, {
          error: 'The exam clock is not paused',
        });
        assert.deepEqual(await audited('POST /api/v3/student_sessions/:id/resume', session.id), [
          [comanager.id, 200],
        ]);

        const deadline = start + 125 * MINUTE;
        clock.current = deadline - 1000;
        const before = await roomView(session.token);
        assert.equal(before.session.status, 'exam_started');
        assert.equal(before.session.ends_at, new Date(deadline).toISOString());
        assert.equal(before.live.clock_paused, false);

        clock.current = deadline + 5 * MINUTE;
        events.length = 0;
        const after = await roomView(session.token);
        assert.equal(after.session.status, 'exam_finished');
        assert.equal(after.session.end_reason, 'time_up');
        assert.equal(after.session.end_time, new Date(deadline).toISOString(), 'ended at the moved deadline');
        assert.deepEqual(events, [
          { kind: 'control', examId: liveExam, sessionId: session.id, action: 'ended' },
        ]);
        assert.equal((await show(session.id)).paused_seconds, 65 * 60, 'a finished session keeps its pauses');
      });

      it('answers 409 for a session not started, and once the time is up', async () => {
        for (const status of ['in_setup', 'exam_not_started', 'exam_finished']) {
          const session = await newSession(liveExam, status);
          assertAnswer(await act(proctor, 'pause', session.id), 409, {
            error: `Only a started exam's clock can be paused (the session is ${status})`,
          });
        }
        const late = await newSession(liveExam, 'exam_started');
        clock.current += 61 * MINUTE;
        assertAnswer(await act(proctor, 'pause', late.id), 409, {
          error: "The candidate's time is up: the clock cannot be paused",
        });
        assert.equal((await show(late.id)).clock_paused, false);
        assert.deepEqual(events, []);
      });

      it("ends a running pause when the exam ends (end_exam or the candidate's finish), each telling the sockets", async () => {
        const byApi = await newSession(liveExam, 'exam_started');
        const byRoom = await newSession(liveExam, 'exam_started');
        studentIn(await act(proctor, 'pause', byApi.id));
        studentIn(await act(proctor, 'pause', byRoom.id));
        clock.current += 3 * MINUTE;
        events.length = 0;
        const ended = studentIn(
          await proctor.client.v3('POST', '/student_sessions/:id/end_exam', { id: byApi.id }),
        );
        assert.equal(ended.status, 'exam_finished');
        assert.deepEqual([ended.clock_paused, ended.paused_seconds], [false, 180]);
        const finished = await room(byRoom.token, 'POST', 'finish');
        assert.equal(finished.status, 200, finished.text);
        assert.equal(object(object(finished.json, 'body').live, 'live').clock_paused, false);
        assert.deepEqual(events, [
          { kind: 'control', examId: liveExam, sessionId: byApi.id, action: 'ended' },
          { kind: 'control', examId: liveExam, sessionId: byRoom.id, action: 'ended' },
        ]);
        clock.current += 10 * MINUTE;
        for (const id of [byApi.id, byRoom.id]) {
          const record = await show(id);
          assert.deepEqual([record.clock_paused, record.paused_seconds], [false, 180], 'no longer counting');
        }
        assertAnswer(await act(proctor, 'resume', byApi.id), 409, { error: 'The exam clock is not paused' });
        events.length = 0;
        studentIn(await proctor.client.v3('POST', '/student_sessions/:id/end_exam', { id: byApi.id }));
        assert.deepEqual(events, [], 'ending an ended session tells nobody');
      });

      it('lets managers, administrators and the assigned proctor pause and resume; 403 for other roles, 404 out of scope', async () => {
        for (const user of [owner, comanager, administrator, proctor]) {
          const session = await newSession(liveExam, 'exam_started');
          assert.equal(studentIn(await act(user, 'pause', session.id)).clock_paused, true);
          assert.equal(studentIn(await act(user, 'resume', session.id)).clock_paused, false);
        }
        const session = await newSession(liveExam, 'exam_started');
        const pausedOne = await newSession(liveExam, 'exam_started');
        studentIn(await act(owner, 'pause', pausedOne.id));
        for (const user of [otherProctor, reviewer, auditor]) {
          assertAnswer(await act(user, 'pause', session.id), 403, NOT_AUTHORIZED);
          assertAnswer(await act(user, 'resume', pausedOne.id), 403, NOT_AUTHORIZED);
        }
        for (const user of [teacher, outsider]) {
          assertAnswer(await act(user, 'pause', session.id), 404, notFound('Student Session', session.id));
          assertAnswer(
            await act(user, 'resume', pausedOne.id),
            404,
            notFound('Student Session', pausedOne.id),
          );
        }
        assertAnswer(await act(owner, 'pause', 'abc'), 404, notFound('Student Session', 'abc'));
        assert.equal((await show(session.id)).clock_paused, false);
        assert.equal((await show(pausedOne.id)).clock_paused, true);
      });
    });

    describe('the V3 record and the exam', () => {
      it("shows the hub's live_status in the record, the monitor and the proctor's active_proctoring_sessions", async () => {
        const session = await newSession(liveExam, 'exam_started');
        const other = await newSession(liveExam, 'exam_started');
        const count = async () =>
          object(
            (
              await owner.client.v3('POST', '/student_sessions/:id/assign_proctor', {
                id: other.id,
                proctor_id: proctor.id,
              })
            ).json,
            'body',
          ).active_proctoring_sessions;
        const before = await count();
        await server.app.database.db
          .updateTable('student_sessions')
          .set({ live_status: 'live', updated_at: clock.now() })
          .where('id', '=', session.id)
          .execute();
        assert.equal((await show(session.id)).live_status, 'live');
        assert.equal(await count(), (before as number) + 1);
        const monitor = object(
          object((await owner.client.v3('GET', '/exams/:id/monitor', { id: liveExam })).json, 'body').monitor,
          'monitor',
        );
        assert.equal(
          (monitor.sessions as Json[]).find((item) => item.id === session.id)?.live_status,
          'live',
        );
      });

      it('reads and changes live_id_check like the other exam settings', async () => {
        const changed = await owner.client.v3('PATCH', '/exams/:id', { id: liveExam, live_id_check: 'true' });
        assert.equal(object(object(changed.json, 'body').exam, 'exam').live_id_check, true);
        const back = await owner.client.v3('PATCH', '/exams/:id', { id: liveExam, live_id_check: false });
        assert.equal(object(object(back.json, 'body').exam, 'exam').live_id_check, false);
        assertAnswer(
          await owner.client.v3('PATCH', '/exams/:id', { id: liveExam, live_id_check: 'maybe' }),
          422,
          invalid('live_id_check', 'must be one of true, false, 1, 0'),
        );
      });
    });
  });
}
