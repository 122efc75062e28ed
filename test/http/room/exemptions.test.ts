import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';

// Exemptions from checks and assistive technology in the room (issue 26, docs/accommodations.md):
// an exempt check is not required for the start, and the flags assistive technology (or an
// exemption) sets off are kept as informational, out of the suspicion score.

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const NO_CAMERA = { exemptions: [{ check: 'webcam', reason: 'no camera' }] };

for (const dialect of DIALECTS) {
  describe(`room exemptions and assistive technology [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let owner: TestUser;
    let webCamExam: number;
    let screenExam: number;
    let flaggedExam: number;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      const institute = await server.institute();
      owner = await server.user(institute, 'teacher');
      webCamExam = await createExam({
        name: 'Webcam exam',
        type: 'record_review',
        web_cam: true,
        duration_minutes: 30,
      });
      screenExam = await createExam({
        name: 'Webcam and screen exam',
        type: 'record_review',
        web_cam: true,
        duration_minutes: 30,
        screen_share: true,
      });
      flaggedExam = await createExam({
        name: 'Flagged exam',
        type: 'classroom',
        duration_minutes: 60,
        automated_flags: true,
      });
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
    /** A student of `examId` created through V3 with these accommodations (none: undefined). */
    async function createStudent(
      examId: number,
      accommodations?: Json,
    ): Promise<{ id: number; token: string }> {
      students += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: `Candidate ${students}`,
        email: `exempt${students}@example.org`,
        // Signed parameters are scalars: the object goes as its JSON text, which V3 reads alike.
        ...(accommodations === undefined ? {} : { accommodations: JSON.stringify(accommodations) }),
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

    async function record(sessionId: number): Promise<Json> {
      const answer = await owner.client.v3('GET', '/student_sessions/:id', { id: sessionId });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').student, 'student');
    }

    /** The session's suspicion score in its exam's review queue. */
    async function reviewScore(sessionId: number): Promise<number | undefined> {
      const answer = await owner.client.v3('GET', '/exams/:exam_id/review_queue', { exam_id: flaggedExam });
      assert.equal(answer.status, 200, answer.text);
      const entries = object(answer.json, 'body').review_queue as Json[];
      return entries.find((entry) => entry.id === sessionId)?.suspicion_score as number | undefined;
    }

    describe('exemptions from checks', () => {
      it('starts an exempt-webcam student of a webcam exam without a webcam check', async () => {
        const { id, token } = await createStudent(webCamExam, NO_CAMERA);
        // The microphone is still recorded, and so is the connection measured.
        const checks = await room(token, 'PUT', 'checks', {
          microphone_check: 'succeeded',
          bandwidth_check: 'succeeded',
          bandwidth_speed: 12,
        });
        assert.equal(checks.status, 200, checks.text);
        const started = await room(token, 'POST', 'start');
        assert.equal(started.status, 200, started.text);
        const session = object(object(started.json, 'body').session, 'session');
        assert.equal(session.status, 'exam_started');
        assert.equal((await record(id)).webcam_check, 'not_started');
      });

      it('refuses the same start without the exemption', async () => {
        const { token } = await createStudent(webCamExam);
        await room(token, 'PUT', 'checks', {
          microphone_check: 'succeeded',
          bandwidth_check: 'succeeded',
          bandwidth_speed: 12,
        });
        const refused = await room(token, 'POST', 'start');
        assert.equal(refused.status, 409, refused.text);
        assert.deepEqual(refused.json, {
          error: 'The requirement checks have not all succeeded: webcam_check',
        });
      });

      it('keeps `skipped` set on an exempt check, which staff read in the record', async () => {
        const { id, token } = await createStudent(webCamExam, NO_CAMERA);
        const answer = await room(token, 'PUT', 'checks', {
          webcam_check: 'skipped',
          microphone_check: 'succeeded',
          bandwidth_check: 'succeeded',
          bandwidth_speed: 12,
        });
        assert.equal(answer.status, 200, answer.text);
        const stored = await record(id);
        assert.equal(stored.webcam_check, 'skipped');
        // Every check the student still needs passed: the setup is done.
        assert.equal(stored.status, 'after_check_req');
        assert.equal((await room(token, 'POST', 'start')).status, 200);
      });

      it('needs no check at all when the camera and microphone are both exempt (nothing is recorded)', async () => {
        const { token } = await createStudent(webCamExam, {
          exemptions: [
            { check: 'webcam', reason: 'no camera' },
            { check: 'microphone', reason: 'no microphone' },
          ],
        });
        const started = await room(token, 'POST', 'start');
        assert.equal(started.status, 200, started.text);
      });

      it('still asks for the checks the student is not exempt from', async () => {
        const { token } = await createStudent(screenExam, NO_CAMERA);
        await room(token, 'PUT', 'checks', { microphone_check: 'succeeded' });
        const refused = await room(token, 'POST', 'start');
        assert.equal(refused.status, 409, refused.text);
        assert.deepEqual(refused.json, {
          error: 'The requirement checks have not all succeeded: screenshare_check, bandwidth_check',
        });
      });

      it('starts a student exempt from both photos without either (the server never required them)', async () => {
        const { id, token } = await createStudent(webCamExam, {
          exemptions: [
            { check: 'id_photo', reason: 'blind' },
            { check: 'face_photo', reason: 'blind' },
          ],
        });
        await room(token, 'PUT', 'checks', {
          webcam_check: 'succeeded',
          microphone_check: 'succeeded',
          bandwidth_check: 'succeeded',
          bandwidth_speed: 12,
        });
        const started = await room(token, 'POST', 'start');
        assert.equal(started.status, 200, started.text);
        const stored = await record(id);
        assert.equal(stored.status, 'exam_started');
      });
    });

    describe('assistive technology and exempt flags', () => {
      async function started(accommodations?: Json): Promise<{ id: number; token: string }> {
        const student = await createStudent(flaggedExam, accommodations);
        const answer = await room(student.token, 'POST', 'start');
        assert.equal(answer.status, 200, answer.text);
        return student;
      }

      async function flag(token: string, key: string, type: string): Promise<void> {
        const answer = await room(token, 'POST', 'flags', {
          key,
          type,
          confidence: 1,
          offset_time: 10,
          end_offset_time: 70,
        });
        assert.equal(answer.status, 201, answer.text);
      }

      function informationalOf(incidents: Json[]): Record<string, boolean | undefined> {
        return Object.fromEntries(
          incidents
            .filter((incident) => incident.source === 'automatic')
            .map((incident) => [
              incident.type as string,
              incident.informational === undefined ? undefined : Boolean(incident.informational),
            ]),
        );
      }

      it('records looking away, speech and a virtual camera as informational, out of the score', async () => {
        const { id, token } = await started({ assistive_technology: true });
        await flag(token, 'away-1', 'looking_away');
        await flag(token, 'speech-1', 'speech');
        await flag(token, 'camera-1', 'virtual_camera');
        await flag(token, 'tab-1', 'tab_switch');
        await room(token, 'POST', 'finish');
        const incidents = (await record(id)).incidents as Json[];
        const marks = informationalOf(incidents);
        // The V3 record carries `informational` once the API shows it (helper "api").
        if (Object.values(marks).some((value) => value !== undefined)) {
          assert.deepEqual(marks, {
            looking_away: true,
            speech: true,
            virtual_camera: true,
            tab_switch: false,
          });
        }
        // Only the tab switch counts: 8 × 1 × (1 + 60/60) = 16.
        assert.equal(await reviewScore(id), 16);
      });

      it('raises the same flags for a student without the accommodation', async () => {
        const { id, token } = await started();
        await flag(token, 'away-1', 'looking_away');
        await flag(token, 'speech-1', 'speech');
        await flag(token, 'camera-1', 'virtual_camera');
        await flag(token, 'tab-1', 'tab_switch');
        await room(token, 'POST', 'finish');
        // 2 × (5 + 10 + 20 + 8) = 86.
        assert.equal(await reviewScore(id), 86);
      });

      it('keeps the flags of an exempt check informational: full screen left without full screen', async () => {
        const { id, token } = await started({ exemptions: [{ check: 'fullscreen', reason: 'magnifier' }] });
        await flag(token, 'full-1', 'fullscreen_exit');
        await flag(token, 'tab-1', 'tab_switch');
        await room(token, 'POST', 'finish');
        assert.equal(await reviewScore(id), 16);
      });
    });
  });
}
