import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';
import { invalid, missing } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const FINISHED = { error: 'The exam is finished: this student session accepts no more changes' };
const FLAGS_OFF = { error: 'This exam does not use automated flags' };

function flagOf(answer: HttpAnswer, status: number): Json {
  assert.equal(answer.status, status, answer.text);
  return object(object(answer.json, 'body').flag, 'flag');
}

function assertAnswer(answer: HttpAnswer, status: number, body: Json): void {
  assert.equal(answer.status, status, answer.text);
  assert.deepEqual(answer.json, body);
}

for (const dialect of DIALECTS) {
  describe(`candidate room automated flags /api/room/:token/flags [${dialect}]`, () => {
    const start = Math.floor(Date.now() / 1000) * 1000;
    const clock = new TestClock(start);
    let server: TestServer;
    let owner: TestUser;
    let flaggedExam: number;
    let plainExam: number;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      const institute = await server.institute();
      owner = await server.user(institute, 'teacher');
      flaggedExam = await createExam({
        name: 'Flagged exam',
        type: 'classroom',
        duration_minutes: 60,
        automated_flags: true,
        flag_settings: JSON.stringify({ no_face_seconds: 8, detection_hz: 3 }),
      });
      plainExam = await createExam({ name: 'Plain exam', type: 'classroom', duration_minutes: 60 });
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
    async function createStudent(examId: number): Promise<{ id: number; token: string }> {
      students += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: `Candidate ${students}`,
        email: `flags${students}@example.org`,
      });
      assert.equal(answer.status, 201, answer.text);
      const student = object(object(answer.json, 'body').student, 'student');
      return { id: student.id as number, token: student.token as string };
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

    async function started(examId = flaggedExam): Promise<{ id: number; token: string }> {
      const student = await createStudent(examId);
      const answer = await room(student.token, 'POST', 'start');
      assert.equal(answer.status, 200, answer.text);
      return student;
    }

    async function incidentsOf(sessionId: number): Promise<Json[]> {
      const answer = await owner.client.v3('GET', '/student_sessions/:id', { id: sessionId });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').student, 'student').incidents as Json[];
    }

    describe('GET /api/room/:token', () => {
      it('tells the room to run the detectors, with the thresholds in force and where to load them', async () => {
        const { token } = await createStudent(flaggedExam);
        const answer = await room(token, 'GET');
        assert.equal(answer.status, 200, answer.text);
        const flags = object(object(answer.json, 'body').automated_flags, 'automated_flags');
        assert.deepEqual(flags.settings, {
          no_face_seconds: 8,
          looking_away_seconds: 5,
          multiple_faces_seconds: 2,
          speech_forbidden: false,
          speech_seconds: 3,
          face_match: true,
          face_match_threshold: 0.5,
          detection_hz: 3,
        });
        assert.equal(flags.has_face_photo, false);
        assert.equal(flags.enabled, true);
        assert.match(String(flags.models), /^\/room\/models\/[0-9a-f]+\/$/);
      });

      it('leaves the block out for an exam without automated flags', async () => {
        const { token } = await createStudent(plainExam);
        const body = object((await room(token, 'GET')).json, 'body');
        assert.equal(Object.hasOwn(body, 'automated_flags'), false);
      });
    });

    describe('POST /api/room/:token/flags', () => {
      it('creates one incident per episode, then ends it and raises its confidence', async () => {
        const { id, token } = await started();
        clock.current = start;
        const opened = flagOf(
          await room(token, 'POST', 'flags', {
            key: 'no-face-1',
            type: 'no_face',
            confidence: 0.6,
            offset_time: 12,
          }),
          201,
        );
        assert.deepEqual(
          { ...opened, created_at: undefined, updated_at: undefined },
          {
            key: 'no-face-1',
            type: 'no_face',
            confidence: 0.6,
            offset_time: 12,
            end_offset_time: null,
            comment: 'Automatic flag: no face was in view of the webcam',
            created_at: undefined,
            updated_at: undefined,
          },
        );
        // The same report again (a retry) creates nothing new.
        flagOf(
          await room(token, 'POST', 'flags', {
            key: 'no-face-1',
            type: 'no_face',
            confidence: 0.6,
            offset_time: 12,
          }),
          200,
        );
        const raised = flagOf(
          await room(token, 'POST', 'flags', {
            key: 'no-face-1',
            type: 'no_face',
            confidence: 0.9,
            end_offset_time: 20,
          }),
          200,
        );
        assert.equal(raised.confidence, 0.9);
        assert.equal(raised.end_offset_time, 20);
        assert.equal(raised.offset_time, 12, 'the start stays the first report’s');
        // A lower confidence never lowers it.
        const kept = flagOf(
          await room(token, 'POST', 'flags', { key: 'no-face-1', type: 'no_face', confidence: 0.2 }),
          200,
        );
        assert.equal(kept.confidence, 0.9);
        assert.equal(kept.end_offset_time, 20);

        const incidents = await incidentsOf(id);
        assert.equal(incidents.length, 1);
        const [incident] = incidents;
        assert.ok(incident !== undefined);
        assert.deepEqual(
          {
            type: incident.type,
            source: incident.source,
            confidence: incident.confidence,
            offset_time: incident.offset_time,
            end_offset_time: incident.end_offset_time,
            dismissed: incident.dismissed,
            dismissed_at: incident.dismissed_at,
            dismissed_by: incident.dismissed_by,
            comment: incident.comment,
          },
          {
            type: 'no_face',
            source: 'automatic',
            confidence: 0.9,
            offset_time: 12,
            end_offset_time: 20,
            dismissed: false,
            dismissed_at: null,
            dismissed_by: null,
            comment: 'Automatic flag: no face was in view of the webcam',
          },
        );
      });

      it('takes the offset from the server clock when the room sends none', async () => {
        clock.current = start;
        const { token } = await started();
        clock.current = start + 42_500;
        const flag = flagOf(
          await room(token, 'POST', 'flags', { key: 'tab-1', type: 'tab_switch', confidence: 1 }),
          201,
        );
        assert.equal(flag.offset_time, 42);
        clock.current = start;
      });

      it('keeps the episodes of two sessions apart, even under the same key', async () => {
        const first = await started();
        const second = await started();
        flagOf(
          await room(first.token, 'POST', 'flags', {
            key: 'k',
            type: 'speech',
            confidence: 0.5,
            offset_time: 1,
          }),
          201,
        );
        flagOf(
          await room(second.token, 'POST', 'flags', {
            key: 'k',
            type: 'speech',
            confidence: 0.5,
            offset_time: 1,
          }),
          201,
        );
        assert.equal((await incidentsOf(first.id)).length, 1);
        assert.equal((await incidentsOf(second.id)).length, 1);
      });

      it('creates one incident when two first reports of an episode race', async () => {
        const { id, token } = await started();
        const body = { key: 'race', type: 'multiple_faces', confidence: 0.7, offset_time: 3 };
        const answers = await Promise.all(
          Array.from({ length: 6 }, () => room(token, 'POST', 'flags', body)),
        );
        const statuses = answers.map((answer) => answer.status).sort();
        assert.deepEqual(statuses, [200, 200, 200, 200, 200, 201]);
        assert.equal((await incidentsOf(id)).length, 1);
      });

      it('answers 422 naming a missing or bad field, and a type outside the closed list', async () => {
        const { token } = await started();
        const post = (body: Json) => room(token, 'POST', 'flags', body);
        assertAnswer(await post({ type: 'no_face', confidence: 1 }), 422, missing('key'));
        assertAnswer(
          await post({ key: 'a b', type: 'no_face', confidence: 1 }),
          422,
          invalid('key', 'must be 1 to 64 letters, digits or _ . : -'),
        );
        assertAnswer(
          await post({ key: 'x'.repeat(65), type: 'no_face', confidence: 1 }),
          422,
          invalid('key', 'must be 1 to 64 letters, digits or _ . : -'),
        );
        assertAnswer(await post({ key: 'a', confidence: 1 }), 422, missing('type'));
        assertAnswer(
          await post({ key: 'a', type: '<b>phone</b>', confidence: 1 }),
          422,
          invalid('type', 'is not included in the list'),
        );
        assertAnswer(await post({ key: 'a', type: 'no_face' }), 422, missing('confidence'));
        assertAnswer(
          await post({ key: 'a', type: 'no_face', confidence: 1.5 }),
          422,
          invalid('confidence', 'must be from 0 to 1'),
        );
        assertAnswer(
          await post({ key: 'a', type: 'no_face', confidence: 'high' }),
          422,
          invalid('confidence', 'is not a number'),
        );
        assertAnswer(
          await post({ key: 'a', type: 'no_face', confidence: 1, offset_time: -1 }),
          422,
          invalid('offset_time', 'must be greater than or equal to 0'),
        );
        assertAnswer(
          await post({ key: 'a', type: 'no_face', confidence: 1, offset_time: 30, end_offset_time: 10 }),
          422,
          invalid('end_offset_time', 'must not be before offset_time'),
        );
        flagOf(await post({ key: 'a', type: 'no_face', confidence: 1, offset_time: 30 }), 201);
        assertAnswer(
          await post({ key: 'a', type: 'speech', confidence: 1 }),
          422,
          invalid('type', "does not match the episode's type (no_face)"),
        );
        assertAnswer(
          await post({ key: 'a', type: 'no_face', confidence: 1, end_offset_time: 29 }),
          422,
          invalid('end_offset_time', 'must not be before offset_time'),
        );
      });

      it('answers 409 before the exam starts, after it finished, and in an exam without automated flags', async () => {
        const body = { key: 'a', type: 'no_face', confidence: 1, offset_time: 1 };
        const waiting = await createStudent(flaggedExam);
        assertAnswer(await room(waiting.token, 'POST', 'flags', body), 409, {
          error: 'Automated flags are accepted only while the exam is started (the session is registered)',
        });
        const done = await started();
        assert.equal((await room(done.token, 'POST', 'finish')).status, 200);
        assertAnswer(await room(done.token, 'POST', 'flags', body), 409, FINISHED);
        const plain = await started(plainExam);
        assertAnswer(await room(plain.token, 'POST', 'flags', body), 409, FLAGS_OFF);
        assertAnswer(await room(plain.token, 'POST', 'flags/rate', { hz: 1 }), 409, FLAGS_OFF);
        assert.deepEqual(await incidentsOf(plain.id), []);
      });

      it('answers 404 for a token that names no session', async () => {
        assertAnswer(
          await room('f'.repeat(32), 'POST', 'flags', { key: 'a', type: 'no_face', confidence: 1 }),
          404,
          { error: "Couldn't find the exam room" },
        );
      });

      it('counts against the token’s 120 requests a minute', async () => {
        const { token } = await started();
        const body = { key: 'limit', type: 'looking_away', confidence: 0.5, offset_time: 1 };
        // POST start took one of the 120.
        for (const size of [20, 20, 20, 20, 20, 19]) {
          const answers = await Promise.all(
            Array.from({ length: size }, () => room(token, 'POST', 'flags', body)),
          );
          for (const answer of answers)
            assert.ok(answer.status === 200 || answer.status === 201, answer.text);
        }
        const limited = await room(token, 'POST', 'flags', body);
        assert.equal(limited.status, 429, limited.text);
        assert.match(
          String(object(limited.json, 'body').error),
          /^Too many requests: try again in \d+ seconds$/,
        );
      });
    });

    describe('POST /api/room/:token/flags/rate', () => {
      it('stores the rate, and records an incident only when it was lowered', async () => {
        clock.current = start;
        const { id, token } = await started();
        clock.current = start + 90_000;
        // The exam asks for 3 a second: 3 is no lowering.
        assertAnswer(await room(token, 'POST', 'flags/rate', { hz: 3 }), 200, {
          flags_rate: { hz: 3, lowered: false },
        });
        assert.deepEqual(await incidentsOf(id), []);
        assertAnswer(await room(token, 'POST', 'flags/rate', { hz: 1.5 }), 200, {
          flags_rate: { hz: 1.5, lowered: true },
        });
        // Restored: stored, not an incident.
        assertAnswer(await room(token, 'POST', 'flags/rate', { hz: 2 }), 200, {
          flags_rate: { hz: 2, lowered: false },
        });
        assertAnswer(await room(token, 'POST', 'flags/rate', { hz: 0 }), 200, {
          flags_rate: { hz: 0, lowered: true },
        });
        const incidents = await incidentsOf(id);
        assert.deepEqual(
          incidents.map((incident) => [
            incident.comment,
            incident.offset_time,
            incident.type,
            incident.source,
          ]),
          [
            [
              'The candidate’s device was slow: the automated flags analysed the camera 1.5 times a second',
              90,
              null,
              null,
            ],
            [
              'The automated flags stopped on the candidate’s device: the rest of the exam was not analysed',
              90,
              null,
              null,
            ],
          ],
        );
        const row = await server.app.database.db
          .selectFrom('student_sessions')
          .select('flags_rate_hz')
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        assert.equal(Number(row.flags_rate_hz), 0);
        clock.current = start;
      });

      it('compares the first report with the exam’s detection_hz', async () => {
        const { id, token } = await started();
        assertAnswer(await room(token, 'POST', 'flags/rate', { hz: 2 }), 200, {
          flags_rate: { hz: 2, lowered: true },
        });
        assert.equal((await incidentsOf(id)).length, 1);
      });

      it('answers 422 naming hz, and 409 unless the exam is started', async () => {
        const { token } = await started();
        assertAnswer(await room(token, 'POST', 'flags/rate', {}), 422, missing('hz'));
        assertAnswer(
          await room(token, 'POST', 'flags/rate', { hz: 'slow' }),
          422,
          invalid('hz', 'is not a number'),
        );
        assertAnswer(
          await room(token, 'POST', 'flags/rate', { hz: 11 }),
          422,
          invalid('hz', 'must be from 0 to 10'),
        );
        assertAnswer(
          await room(token, 'POST', 'flags/rate', { hz: -1 }),
          422,
          invalid('hz', 'must be from 0 to 10'),
        );
        const waiting = await createStudent(flaggedExam);
        assertAnswer(await room(waiting.token, 'POST', 'flags/rate', { hz: 1 }), 409, {
          error: 'Detection rates are accepted only while the exam is started (the session is registered)',
        });
      });
    });
  });
}
