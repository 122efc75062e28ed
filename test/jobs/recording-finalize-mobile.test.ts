import assert from 'node:assert/strict';
import { MOBILE_FINISH_GRACE_MS } from '../../src/domain/mobile/mobile.ts';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ALL_FORMATS, BufferSource, EncodedPacketSink, Input } from 'mediabunny';
import { listExamRecordings } from '../../src/domain/exports/exam-exports.repository.ts';
import { fetchAddress } from '../helpers/files.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { multipartBody } from '../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { runDueJobs } from '../mail/support.ts';

/**
 * The `recording.finalize` job with the phone as a third stream (docs/recordings.md, "The phone"):
 * a `mobile_cam` session records webcam and screen from the room and the phone's camera from the
 * phone API (`POST /api/mobile/<pairing token>/recordings`, `source: mobile`). The phone starts a
 * few seconds after the exam, is lost for a while and comes back with a new recorder. The job
 * assembles all three onto the session's clock: the phone's video-only VP9 file starts at its
 * wall-clock place, its absence is a gap and a "Phone recording gap" incident, and it is listed,
 * downloaded and exported as the `mobile` recording.
 *
 * The phone's chunks are real MediaRecorder output (test/fixtures/recordings/phone-*.webm: Chromium's
 * fake camera at 240×320 portrait, video only, `video/webm;codecs=vp9`, 150 kbit/s, a key frame every
 * 2 s, `recorder.start(4000)`, two recorders of about 8.4 s and 12.4 s).
 */

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;
type Source = 'webcam' | 'screen' | 'mobile';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/recordings');
const chunksOf = (prefix: string, count: number): Buffer[] =>
  Array.from({ length: count }, (_, index) =>
    fs.readFileSync(path.join(FIXTURES, `${prefix}-${index}.webm`)),
  );

const CAMERA_A = chunksOf('camera-a', 5);
const CAMERA_B = chunksOf('camera-b', 4);
const SCREEN_A = chunksOf('screen-a', 4);
const SCREEN_B = chunksOf('screen-b', 3);
const PHONE_A = chunksOf('phone-a', 3);
const PHONE_B = chunksOf('phone-b', 4);
/** When the room's page reloads (webcam and screen get new recorders), in seconds of exam time. */
const RELOAD_AT = 40;
/** The phone notices the exam started this late: under the 5 s a gap needs. */
const PHONE_STARTS_AT = 3;
/** The phone, lost after its first recorder (about 8 s), comes back with a new one. */
const PHONE_BACK_AT = 39.5;
/** The session ends here: every stream's last frame is within 5 s of it. */
const ENDS_AT = RELOAD_AT + 13;

function mediaOf(bytes: Uint8Array): Input {
  return new Input({ source: new BufferSource(bytes), formats: ALL_FORMATS });
}

async function durationOf(chunks: readonly Buffer[]): Promise<number> {
  return mediaOf(Buffer.concat(chunks)).computeDuration();
}

for (const dialect of DIALECTS) {
  describe(`recording.finalize with the phone's recording [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let owner: TestUser;
    let reviewer: TestUser;
    let examId: number;
    let session: { id: number; token: string; phone: string; startedAt: number };
    let listed: Json[] = [];
    let phoneA: number;
    let phoneB: number;

    /** Posts one chunk as the room (webcam, screen) or the phone (mobile) does, at exam time `at`. */
    async function send(source: Source, sequence: number, bytes: Buffer, at: number): Promise<void> {
      clock.current = session.startedAt + Math.round(at * 1000);
      const { body, contentType } = multipartBody({ sequence: String(sequence), source }, [
        { field: 'file', fileName: `${source}-${sequence}.webm`, contentType: 'video/webm', bytes },
      ]);
      const url =
        source === 'mobile'
          ? `${server.baseUrl}/api/mobile/${session.phone}/recordings`
          : `${server.baseUrl}/api/room/${session.token}/recordings`;
      const answer = await httpRequest({
        url,
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
      assert.equal(answer.status, 201, `${source} ${sequence}: ${answer.text}`);
    }

    /**
     * The chunks of one recorder started `startSeconds` into the exam, numbered from `first`: each
     * arrives 150 ms after its 4 s (the last, shorter one right after the one before).
     */
    function recorder(source: Source, first: number, chunks: readonly Buffer[], startSeconds: number) {
      return chunks.map((bytes, index) => ({
        source,
        sequence: first + index,
        bytes,
        at: startSeconds + Math.min(4 * (index + 1), 4 * (chunks.length - 1) + 0.5) + 0.15,
      }));
    }

    before(async () => {
      server = await startTestServer(dialect, { clock });
      const home = await server.institute();
      owner = await server.user(home, 'teacher');
      reviewer = await server.user(home, 'reviewer');
      // A callback address (never reached: a private address OUTBOUND_ALLOWLIST does not name), so
      // the recording.ready events are queued and can be read from the jobs.
      const admin = await server.user(home, 'administrator');
      const patched = await admin.client.v3('PATCH', '/institutes/:id', {
        id: home,
        callback_url: 'http://10.255.255.1/invigil-hook',
      });
      assert.equal(patched.status, 200, patched.text);
      const created = await owner.client.v3('POST', '/exams', {
        name: 'Exam with a phone',
        type: 'record_review',
        duration_minutes: 30,
        web_cam: true,
        screen_share: true,
        mobile_cam: true,
      });
      assert.equal(created.status, 201, created.text);
      examId = object(object(created.json, 'body').exam, 'exam').id as number;
      const made = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Candidate with a phone',
        email: 'phone@example.org',
        skip_requirements: true,
      });
      assert.equal(made.status, 201, made.text);
      const record = object(object(made.json, 'body').student, 'student');
      const token = record.token as string;
      // The room's view makes the phone's pairing token (its link is the QR code's).
      const view = await httpRequest({ url: `${server.baseUrl}/api/room/${token}` });
      assert.equal(view.status, 200, view.text);
      const pairing = object(object(view.json, 'view').mobile, 'mobile').pairing_url as string;
      const phone = /\/m\/([0-9a-f]{32})$/.exec(pairing)?.[1];
      assert.ok(phone !== undefined, `pairing_url ${pairing}`);
      clock.current += 1000;
      const startedAt = clock.now();
      const begun = await httpRequest({ url: `${server.baseUrl}/api/room/${token}/start`, method: 'POST' });
      assert.equal(begun.status, 200, begun.text);
      session = { id: record.id as number, token, phone, startedAt };

      // The three streams' chunks in the order they arrive, as the server's clock sees them.
      const arrivals = [
        ...recorder('webcam', 0, CAMERA_A, 0),
        ...recorder('screen', 0, SCREEN_A, 0),
        ...recorder('mobile', 0, PHONE_A, PHONE_STARTS_AT),
        ...recorder('mobile', PHONE_A.length, PHONE_B, PHONE_BACK_AT),
        ...recorder('webcam', CAMERA_A.length, CAMERA_B, RELOAD_AT),
        ...recorder('screen', SCREEN_A.length, SCREEN_B, RELOAD_AT),
      ].sort((a, b) => a.at - b.at);
      for (const chunk of arrivals) await send(chunk.source, chunk.sequence, chunk.bytes, chunk.at);

      clock.current = session.startedAt + ENDS_AT * 1000;
      const finished = await httpRequest({
        url: `${server.baseUrl}/api/room/${token}/finish`,
        method: 'POST',
      });
      assert.equal(finished.status, 200, finished.text);
      phoneA = await durationOf(PHONE_A);
      phoneB = await durationOf(PHONE_B);
    });

    after(async () => {
      await server.close();
    });

    async function recordings(): Promise<Json[]> {
      const answer = await reviewer.client.v3('GET', '/student_sessions/:id/recordings', { id: session.id });
      assert.equal(answer.status, 200, answer.text);
      const list = object(answer.json, 'body').recordings;
      assert.ok(Array.isArray(list));
      return list.map((item) => object(item, 'recording'));
    }

    async function download(entry: Json | undefined): Promise<Buffer> {
      assert.equal(typeof entry?.url, 'string');
      const answer = await fetchAddress(server, entry?.url as string);
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.headers['content-type'], 'video/webm');
      return answer.bytes;
    }

    it('queues the phone as a third stream when the session finishes', async () => {
      assert.deepEqual(
        (await recordings()).map((entry) => [entry.source, entry.status]),
        [
          ['webcam', 'queued'],
          ['screen', 'queued'],
          ['mobile', 'queued'],
        ],
      );
    });

    it('completes webcam, screen and phone, each with the session start as video time 0', async () => {
      // A session with a phone is finalised once the phone's last chunk may have come in.
      await runDueJobs(server, dialect, clock);
      assert.ok((await recordings()).every((entry) => entry.status === 'queued'));
      clock.current += MOBILE_FINISH_GRACE_MS;
      assert.ok((await runDueJobs(server, dialect, clock)) >= 1);
      listed = await recordings();
      assert.deepEqual(
        listed.map((entry) => [entry.source, entry.status]),
        [
          ['webcam', 'completed'],
          ['screen', 'completed'],
          ['mobile', 'completed'],
        ],
      );
      for (const entry of listed) assert.equal(entry.started_at, new Date(session.startedAt).toISOString());
      const student = await reviewer.client.v3('GET', '/student_sessions/:id', { id: session.id });
      assert.equal(object(object(student.json, 'body').student, 'student').transcoding_status, 'completed');
    });

    it("places the phone's first frame where it was recorded: a few seconds into the exam", async () => {
      const file = await download(listed[2]);
      const input = mediaOf(file);
      const video = await input.getPrimaryVideoTrack();
      assert.ok(video !== null);
      assert.equal(video.codec, 'vp9');
      // Video only, as the phone records it: no audio track was invented.
      assert.deepEqual(
        (await input.getTracks()).map((track) => track.type),
        ['video'],
      );
      const sink = new EncodedPacketSink(video);
      const first = await sink.getFirstPacket();
      assert.ok(first !== null);
      assert.ok(
        Math.abs(first.timestamp - PHONE_STARTS_AT) < 1,
        `the phone's first frame at ${first.timestamp} s, recorded at ${PHONE_STARTS_AT} s`,
      );
      // Its second recorder plays at its own exam time too, and the file ends where it ended.
      const back = await sink.getKeyPacket(PHONE_BACK_AT + 2);
      assert.ok(back !== null && back.timestamp >= PHONE_BACK_AT - 0.5, `key frame at ${back?.timestamp}`);
      const measured = await input.computeDuration();
      const expected = PHONE_BACK_AT + phoneB;
      assert.ok(Math.abs(measured - expected) < 1, `phone lasts ${measured} s, wall clock ${expected} s`);
      assert.ok(Math.abs((listed[2]?.duration_seconds as number) - expected) < 1);
    });

    it('keeps the three on one timeline: a moment is at the same time in each file', async () => {
      // Webcam and screen reloaded at RELOAD_AT: their second recorders begin there, as in the phone's
      // file its second recorder begins at PHONE_BACK_AT, each on the session's clock.
      for (const [entry, at] of [
        [listed[0], RELOAD_AT],
        [listed[1], RELOAD_AT],
        [listed[2], PHONE_BACK_AT],
      ] as const) {
        const video = await mediaOf(await download(entry)).getPrimaryVideoTrack();
        assert.ok(video !== null);
        const key = await new EncodedPacketSink(video).getKeyPacket(at + 0.5);
        assert.ok(
          key !== null && Math.abs(key.timestamp - at) < 1,
          `${String(entry?.source)}: key frame at ${key?.timestamp}, expected ${at}`,
        );
      }
    });

    it('reports the phone being away as a gap and a "Phone recording gap" incident', async () => {
      const phone = listed[2];
      assert.ok(phone !== undefined);
      const gaps = (phone.gaps as Json[]).map((gap) => ({
        start: gap.start as number,
        end: gap.end as number,
      }));
      // Not before its start (3 s is under the 5 s threshold), not after its end: only while lost.
      assert.equal(gaps.length, 1, JSON.stringify(gaps));
      const { start, end } = gaps[0] ?? { start: -1, end: -1 };
      assert.ok(Math.abs(start - (PHONE_STARTS_AT + phoneA)) < 1, `gap from ${start}`);
      assert.ok(Math.abs(end - PHONE_BACK_AT) < 1, `gap to ${end}`);
      const incidents = await server.app.database.db
        .selectFrom('incidents')
        .select(['comment', 'offset_time'])
        .where('student_session_id', '=', session.id)
        .where('kind', '=', 'recording_gap')
        .orderBy('id')
        .execute();
      const phoneIncidents = incidents.filter((incident) => incident.comment.startsWith('Phone '));
      assert.equal(phoneIncidents.length, 1, JSON.stringify(incidents));
      assert.match(
        phoneIncidents[0]?.comment ?? '',
        /^Phone recording gap: 2\d s without recording from 00:00:1\d to 00:00:3\d$/,
      );
      assert.equal(phoneIncidents[0]?.offset_time, Math.floor(start));
      // The webcam and screen keep their own (the reload), named for their streams.
      assert.deepEqual(incidents.map((incident) => incident.comment.split(' ')[0]).sort(), [
        'Phone',
        'Screen',
        'Webcam',
      ]);
    });

    it('stores it as session-<id>-mobile.webm, removes its chunks and announces recording.ready', async () => {
      const db = server.app.database.db;
      const names = await db
        .selectFrom('recordings')
        .innerJoin('files', 'files.id', 'recordings.file_id')
        .select(['recordings.source', 'files.original_name'])
        .where('recordings.student_session_id', '=', session.id)
        .execute();
      assert.deepEqual(
        names.find((row) => row.source === 'mobile')?.original_name,
        `session-${session.id}-mobile.webm`,
      );
      const chunks = await db
        .selectFrom('session_files')
        .select('kind')
        .where('student_session_id', '=', session.id)
        .execute();
      assert.deepEqual(chunks, []);
      const events = await db
        .selectFrom('jobs')
        .select('payload')
        .where('kind', '=', 'webhook.deliver')
        .execute();
      const sources = events
        .map((row) => object(JSON.parse(row.payload), 'payload'))
        .filter((payload) => payload.type === 'recording.ready')
        .map((payload) => object(object(JSON.parse(payload.body as string), 'body').data, 'data'))
        .filter((data) => data.student_session_id === session.id)
        .map((data) => data.source)
        .sort();
      assert.deepEqual(sources, ['mobile', 'screen', 'webcam']);
    });

    it("puts the phone's recording in the exam's archive as recording-mobile.webm", async () => {
      const archived = await listExamRecordings(server.app.database.db, examId);
      assert.deepEqual(
        archived.filter((file) => file.sessionId === session.id).map((file) => file.originalName),
        ['recording-webcam.webm', 'recording-screen.webm', 'recording-mobile.webm'],
      );
    });
  });
}
