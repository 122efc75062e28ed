import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ALL_FORMATS, BufferSource, EncodedPacketSink, Input } from 'mediabunny';
import pino from 'pino';
import { createWorker } from '../../../src/jobs/worker.ts';
import { createStorage } from '../../../src/storage/index.ts';
import { queueRecordingFinalisation } from '../../../src/domain/recordings/recordings.service.ts';
import { notFound } from '../../helpers/answers.ts';
import { fetchAddress, onS3 } from '../../helpers/files.ts';
import { httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { multipartBody } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';

/**
 * Finalised recordings (docs/recordings.md) from real WebM chunks recorded by Chromium's
 * MediaRecorder (test/fixtures/recordings: two recorders per stream, as a page reload makes them, a
 * key frame every 2 s, 4-second chunks): the job assembles each stream into one seekable file on the
 * exam's clock, damaged chunks cost only their own seconds, and the address serves byte ranges.
 */

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/recordings');
const fixture = (name: string): Buffer => fs.readFileSync(path.join(FIXTURES, `${name}.webm`));
/** One recorder's chunks, in order. */
const chunksOf = (prefix: string, count: number): Buffer[] =>
  Array.from({ length: count }, (_, index) => fixture(`${prefix}-${index}`));

const CAMERA_A = chunksOf('camera-a', 5);
const CAMERA_B = chunksOf('camera-b', 4);
const SCREEN_A = chunksOf('screen-a', 4);
const SCREEN_B = chunksOf('screen-b', 3);
/** When the reload's second recorder starts, in seconds after the exam's start. */
const RELOAD_AT = 40;

const RECORDING_FIELDS = ['source', 'status', 'started_at', 'duration_seconds', 'gaps'];

/** The duration (s) mediabunny reads from a whole file. */
async function durationOf(bytes: Uint8Array): Promise<number> {
  const input = new Input({ source: new BufferSource(bytes), formats: ALL_FORMATS });
  return input.computeDuration();
}

/** The duration of one recorder's chunks joined (as that recorder's own stream). */
function recorderDuration(chunks: readonly Buffer[]): Promise<number> {
  return durationOf(Buffer.concat(chunks));
}

/** Whether a WebM file has Cues (the seek index) listed in its SeekHead. */
function hasCues(bytes: Buffer): boolean {
  const cues = Buffer.from([0x1c, 0x53, 0xbb, 0x6b]);
  const first = bytes.indexOf(cues);
  // The SeekHead names the Cues near the start, and the Cues element itself follows the clusters.
  return first !== -1 && first < 200 && bytes.indexOf(cues, first + 4) !== -1;
}

for (const dialect of DIALECTS) {
  describe(`GET /api/v3/student_sessions/:id/recordings [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let owner: TestUser;
    let reviewer: TestUser;
    let outsideAdmin: TestUser;
    let examId: number;
    let students = 0;
    let durationA: number;
    let durationB: number;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      const home = await server.institute();
      const elsewhere = await server.institute();
      owner = await server.user(home, 'teacher');
      reviewer = await server.user(home, 'reviewer');
      outsideAdmin = await server.user(elsewhere, 'administrator');
      // A callback address (never reached: a private address OUTBOUND_ALLOWLIST does not name), so
      // the recording.ready events are queued and can be read from the jobs.
      const admin = await server.user(home, 'administrator');
      const patched = await admin.client.v3('PATCH', '/institutes/:id', {
        id: home,
        callback_url: 'http://10.255.255.1/invigil-hook',
      });
      assert.equal(patched.status, 200, patched.text);
      const created = await owner.client.v3('POST', '/exams', {
        name: 'Recorded exam',
        type: 'classroom',
        duration_minutes: 30,
      });
      assert.equal(created.status, 201, created.text);
      examId = object(object(created.json, 'body').exam, 'exam').id as number;
      durationA = await recorderDuration(CAMERA_A);
      durationB = await recorderDuration(CAMERA_B);
    });

    after(async () => {
      await server.close();
    });

    /** A started session: its id, token, and the moment it started. */
    async function startedSession(): Promise<{ id: number; token: string; startedAt: number }> {
      students += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: `Candidate ${students}`,
        email: `recorded${students}@example.org`,
      });
      assert.equal(answer.status, 201, answer.text);
      const record = object(object(answer.json, 'body').student, 'student');
      const token = record.token as string;
      clock.current += 1000;
      const startedAt = clock.now();
      const begun = await httpRequest({ url: `${server.baseUrl}/api/room/${token}/start`, method: 'POST' });
      assert.equal(begun.status, 200, begun.text);
      return { id: record.id as number, token, startedAt };
    }

    /** Sends a chunk as the room does, the server's clock at `startedAt + atSeconds`. */
    async function send(
      session: { token: string; startedAt: number },
      source: 'webcam' | 'screen',
      sequence: number,
      bytes: Buffer,
      atSeconds: number,
    ): Promise<void> {
      clock.current = session.startedAt + Math.round(atSeconds * 1000);
      const { body, contentType } = multipartBody({ sequence: String(sequence), source }, [
        { field: 'file', fileName: `${source}-${sequence}.webm`, contentType: 'video/webm', bytes },
      ]);
      const answer = await httpRequest({
        url: `${server.baseUrl}/api/room/${session.token}/recordings`,
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
      assert.equal(answer.status, 201, answer.text);
    }

    /**
     * Sends a recorder's chunks from sequence `first`, the recorder started `startSeconds` into the
     * exam: each arrives 150 ms after its 4 s of recording (the last, a short one, right after).
     */
    async function record(
      session: { token: string; startedAt: number },
      source: 'webcam' | 'screen',
      first: number,
      chunks: readonly (Buffer | undefined)[],
      startSeconds: number,
    ): Promise<void> {
      for (const [index, bytes] of chunks.entries()) {
        if (bytes === undefined) continue;
        const at = startSeconds + Math.min(4 * (index + 1), 4 * (chunks.length - 1) + 0.5) + 0.15;
        await send(session, source, first + index, bytes, at);
      }
    }

    async function finish(session: { token: string; startedAt: number }, atSeconds: number): Promise<void> {
      clock.current = session.startedAt + atSeconds * 1000;
      const answer = await httpRequest({
        url: `${server.baseUrl}/api/room/${session.token}/finish`,
        method: 'POST',
      });
      assert.equal(answer.status, 200, answer.text);
    }

    /** Runs due jobs the way `invigil worker` does. Returns how many ran. */
    async function runJobs(): Promise<number> {
      const worker = createWorker({
        db: server.app.database.db,
        dialect,
        clock: server.app.clock,
        logger: pino({ level: 'silent' }),
        handlers: server.app.jobHandlers,
      });
      let ran = 0;
      while (await worker.runOnce()) ran += 1;
      return ran;
    }

    async function recordings(sessionId: number, user = reviewer): Promise<Json[]> {
      const answer = await user.client.v3('GET', '/student_sessions/:id/recordings', { id: sessionId });
      assert.equal(answer.status, 200, answer.text);
      const body = object(answer.json, 'body');
      assert.deepEqual(Object.keys(body), ['recordings']);
      assert.ok(Array.isArray(body.recordings));
      return body.recordings.map((item) => object(item, 'recording'));
    }

    async function transcodingStatus(sessionId: number): Promise<unknown> {
      const answer = await reviewer.client.v3('GET', '/student_sessions/:id', { id: sessionId });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').student, 'student').transcoding_status;
    }

    async function gapIncidents(
      sessionId: number,
    ): Promise<{ comment: string; offset_time: number | null }[]> {
      return server.app.database.db
        .selectFrom('incidents')
        .select(['comment', 'offset_time'])
        .where('student_session_id', '=', sessionId)
        .where('kind', '=', 'recording_gap')
        .orderBy('id')
        .execute();
    }

    async function chunkRows(sessionId: number): Promise<number> {
      const rows = await server.app.database.db
        .selectFrom('session_files')
        .select('id')
        .where('student_session_id', '=', sessionId)
        .execute();
      return rows.length;
    }

    async function download(entry: Json): Promise<Buffer> {
      assert.equal(typeof entry.url, 'string');
      const answer = await fetchAddress(server, entry.url as string);
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.headers['content-type'], 'video/webm');
      return answer.bytes;
    }

    describe('a session recorded with a reload in the middle', () => {
      let session: { id: number; token: string; startedAt: number };
      let webcam: Json;
      let screen: Json;
      let file: Buffer;

      before(async () => {
        session = await startedSession();
        await record(session, 'webcam', 0, CAMERA_A, 0);
        await record(session, 'screen', 0, SCREEN_A, 0);
        // The page reloads: new recorders, the sequences going on.
        await record(session, 'webcam', CAMERA_A.length, CAMERA_B, RELOAD_AT);
        await record(session, 'screen', SCREEN_A.length, SCREEN_B, RELOAD_AT);
        // Finished a second after the last chunk: no gap at the end.
        await finish(session, RELOAD_AT + 13);
      });

      it('is queued when the session finishes: status queued, no address yet', async () => {
        assert.equal(await transcodingStatus(session.id), 'queued');
        const listed = await recordings(session.id);
        assert.deepEqual(
          listed.map((entry) => [entry.source, entry.status, Object.keys(entry)]),
          [
            ['webcam', 'queued', RECORDING_FIELDS],
            ['screen', 'queued', RECORDING_FIELDS],
          ],
        );
      });

      it('the job completes both streams and transcoding_status reaches completed', async () => {
        assert.ok((await runJobs()) >= 1);
        assert.equal(await transcodingStatus(session.id), 'completed');
        [webcam, screen] = (await recordings(session.id)) as [Json, Json];
        for (const entry of [webcam, screen]) {
          assert.deepEqual(Object.keys(entry), [...RECORDING_FIELDS, 'url', 'expires_at']);
          assert.equal(entry.status, 'completed');
          assert.equal(entry.started_at, new Date(session.startedAt).toISOString());
        }
        assert.equal(webcam.source, 'webcam');
        assert.equal(screen.source, 'screen');
        // recording.ready, queued with each completed stream: its source and duration.
        const events = await server.app.database.db
          .selectFrom('jobs')
          .select('payload')
          .where('kind', '=', 'webhook.deliver')
          .execute();
        const ready = events
          .map((row) => object(JSON.parse(row.payload), 'payload'))
          .filter((payload) => payload.type === 'recording.ready')
          .map((payload) => object(object(JSON.parse(payload.body as string), 'body').data, 'data'))
          .filter((data) => data.student_session_id === session.id);
        assert.deepEqual(ready.map((data) => [data.source, data.duration_seconds, data.token]).sort(), [
          ['screen', screen.duration_seconds, session.token],
          ['webcam', webcam.duration_seconds, session.token],
        ]);
      });

      it('makes one file whose duration is the wall-clock time, within a second', async () => {
        file = await download(webcam);
        const expected = RELOAD_AT + durationB;
        const measured = await durationOf(file);
        assert.ok(Math.abs(measured - expected) < 1, `file lasts ${measured} s, wall clock ${expected} s`);
        assert.ok(
          Math.abs((webcam.duration_seconds as number) - expected) < 1,
          `listed ${String(webcam.duration_seconds)}`,
        );
        const screenFile = await download(screen);
        const screenExpected = RELOAD_AT + (await recorderDuration(SCREEN_B));
        const screenMeasured = await durationOf(screenFile);
        assert.ok(
          Math.abs(screenMeasured - screenExpected) < 1,
          `screen lasts ${screenMeasured} s of ${screenExpected}`,
        );
      });

      it('keeps the gap of the reload, reported and turned into one incident per stream', async () => {
        for (const entry of [webcam, screen]) {
          assert.ok(Array.isArray(entry.gaps));
          assert.equal(entry.gaps.length, 1, JSON.stringify(entry.gaps));
          const gap = object(entry.gaps[0], 'gap');
          assert.ok(Math.abs((gap.end as number) - RELOAD_AT) < 1, `gap ends at ${String(gap.end)}`);
        }
        const webcamGap = object((webcam.gaps as unknown[])[0], 'gap');
        assert.ok(
          Math.abs((webcamGap.start as number) - durationA) < 1,
          `gap starts at ${String(webcamGap.start)}`,
        );
        const incidents = await gapIncidents(session.id);
        assert.equal(incidents.length, 2);
        assert.match(
          incidents[0]?.comment ?? '',
          /^Webcam recording gap: 2\d s without recording from 00:00:1\d to 00:00:40$/,
        );
        assert.match(incidents[1]?.comment ?? '', /^Screen recording gap: /);
        assert.equal(incidents[0]?.offset_time, Math.floor(webcamGap.start as number));
      });

      it('is seekable: Cues are written, and a seek lands in the second segment at exam time', async () => {
        assert.ok(hasCues(file), 'the file has a seek index');
        const input = new Input({ source: new BufferSource(file), formats: ALL_FORMATS });
        const video = await input.getPrimaryVideoTrack();
        assert.ok(video !== null);
        assert.equal(video.codec, 'vp8');
        const sink = new EncodedPacketSink(video);
        const key = await sink.getKeyPacket(RELOAD_AT + 5);
        assert.ok(key !== null);
        assert.ok(
          key.timestamp >= RELOAD_AT && key.timestamp <= RELOAD_AT + 5,
          `key frame at ${key.timestamp}`,
        );
        const inGap = await sink.getPacket(RELOAD_AT - 10);
        assert.ok(
          inGap !== null && inGap.timestamp < durationA + 0.5,
          `in the gap: the frame at ${String(inGap?.timestamp)}`,
        );
      });

      it('removes the chunks once the recordings are stored', async () => {
        assert.equal(await chunkRows(session.id), 0);
      });

      it('a retried job leaves the same recordings and incidents', async () => {
        await queueRecordingFinalisation(
          server.app.database.db,
          { clock, jobs: server.app.services.jobs },
          session.id,
        );
        // No chunks are left, so nothing was queued; queue the job by hand as a retry would run it.
        await server.app.services.jobs.enqueue(server.app.database.db, {
          kind: 'recording.finalize',
          payload: { studentSessionId: session.id },
        });
        assert.ok((await runJobs()) >= 1);
        assert.equal(await transcodingStatus(session.id), 'completed');
        assert.equal((await gapIncidents(session.id)).length, 2);
        const again = await recordings(session.id);
        assert.deepEqual(
          again.map((entry) => [entry.status, entry.duration_seconds]),
          [
            ['completed', webcam.duration_seconds],
            ['completed', screen.duration_seconds],
          ],
        );
      });

      it('answers byte ranges on its address: 206, Accept-Ranges, If-Range, 416', async () => {
        if (onS3(server)) {
          // The presigned address is the bucket's own: S3 (here s3rver) answers the ranges.
          const part = await httpRequest({ url: webcam.url as string, headers: { range: 'bytes=100-1123' } });
          assert.equal(part.status, 206, part.text);
          assert.equal(part.headers['content-range'], `bytes 100-1123/${file.length}`);
          assert.ok(part.bytes.equals(file.subarray(100, 1124)));
          return;
        }
        const url = `${server.baseUrl}${(webcam.url as string).slice(server.app.config.publicUrl.length)}`;
        const whole = await httpRequest({ url });
        assert.equal(whole.status, 200);
        assert.equal(whole.headers['accept-ranges'], 'bytes');
        const etag = whole.headers.etag;
        assert.equal(typeof etag, 'string');
        const size = file.length;

        const part = await httpRequest({ url, headers: { range: 'bytes=100-1123' } });
        assert.equal(part.status, 206);
        assert.equal(part.headers['content-range'], `bytes 100-1123/${size}`);
        assert.equal(part.headers['content-length'], '1024');
        assert.ok(part.bytes.equals(file.subarray(100, 1124)));

        const open = await httpRequest({ url, headers: { range: `bytes=${size - 10}-` } });
        assert.equal(open.status, 206);
        assert.ok(open.bytes.equals(file.subarray(size - 10)));

        const suffix = await httpRequest({ url, headers: { range: 'bytes=-500' } });
        assert.equal(suffix.status, 206);
        assert.equal(suffix.headers['content-range'], `bytes ${size - 500}-${size - 1}/${size}`);
        assert.ok(suffix.bytes.equals(file.subarray(size - 500)));

        const matching = await httpRequest({
          url,
          headers: { range: 'bytes=0-9', 'if-range': etag as string },
        });
        assert.equal(matching.status, 206);
        const stale = await httpRequest({ url, headers: { range: 'bytes=0-9', 'if-range': '"another"' } });
        assert.equal(stale.status, 200);
        assert.equal(stale.bytes.length, size);

        const past = await httpRequest({ url, headers: { range: `bytes=${size}-` } });
        assert.equal(past.status, 416);
        assert.equal(past.headers['content-range'], `bytes */${size}`);
      });

      it('is hidden from staff of another institute (404) like the session', async () => {
        const answer = await outsideAdmin.client.v3('GET', '/student_sessions/:id/recordings', {
          id: session.id,
        });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Student Session', session.id));
      });
    });

    it('a missing chunk costs only its own seconds', async () => {
      const session = await startedSession();
      await record(session, 'webcam', 0, CAMERA_A, 0);
      const [row] = await server.app.database.db
        .selectFrom('session_files')
        .innerJoin('files', 'files.id', 'session_files.file_id')
        .select('files.storage_key')
        .where('session_files.student_session_id', '=', session.id)
        .where('session_files.sequence', '=', 2)
        .execute();
      assert.ok(row !== undefined);
      await (await createStorage(server.app.config)).delete(row.storage_key);
      await finish(session, 20);
      assert.ok((await runJobs()) >= 1);
      assert.equal(await transcodingStatus(session.id), 'completed');
      const [webcam] = await recordings(session.id);
      assert.ok(webcam !== undefined);
      assert.equal(webcam.status, 'completed');
      const measured = await durationOf(await download(webcam));
      assert.ok(Math.abs(measured - durationA) < 1, `lasts ${measured} s of ${durationA}`);
    });

    it('a chunk cut short costs only its own seconds, and end_exam queues the job too', async () => {
      const session = await startedSession();
      const cut = CAMERA_A.map((bytes, index) =>
        index === 1 ? bytes.subarray(0, Math.floor(bytes.length / 3)) : bytes,
      );
      await record(session, 'webcam', 0, cut, 0);
      clock.current = session.startedAt + 20_000;
      const ended = await owner.client.v3('POST', '/student_sessions/:id/end_exam', { id: session.id });
      assert.equal(ended.status, 200, ended.text);
      assert.equal(await transcodingStatus(session.id), 'queued');
      assert.ok((await runJobs()) >= 1);
      assert.equal(await transcodingStatus(session.id), 'completed');
      const [webcam] = await recordings(session.id);
      assert.ok(webcam !== undefined);
      const file = await download(webcam);
      const measured = await durationOf(file);
      assert.ok(Math.abs(measured - durationA) < 1, `lasts ${measured} s of ${durationA}`);
      const input = new Input({ source: new BufferSource(file), formats: ALL_FORMATS });
      const video = await input.getPrimaryVideoTrack();
      assert.ok(video !== null);
      // The frames after the damaged chunk are there: a key frame near the end can be found.
      const key = await new EncodedPacketSink(video).getKeyPacket(durationA - 1);
      assert.ok(key !== null && key.timestamp > 8, `last key frame at ${String(key?.timestamp)}`);
    });

    it('a segment of one chunk, then time up: every recording completes', async () => {
      const session = await startedSession();
      await record(session, 'webcam', 0, CAMERA_A.slice(0, 1), 0);
      await record(session, 'webcam', 1, CAMERA_B, 20);
      await record(session, 'screen', 0, SCREEN_B.slice(0, 1), 0);
      // The exam's 30 minutes run out; the next look at the room finishes the session.
      clock.current = session.startedAt + 31 * 60_000;
      const view = await httpRequest({ url: `${server.baseUrl}/api/room/${session.token}` });
      assert.equal(view.status, 200, view.text);
      assert.equal(await transcodingStatus(session.id), 'queued');
      assert.ok((await runJobs()) >= 1);
      assert.equal(await transcodingStatus(session.id), 'completed');
      const [webcam, screen] = await recordings(session.id);
      assert.ok(webcam !== undefined && screen !== undefined);
      assert.deepEqual([webcam.status, screen.status], ['completed', 'completed']);
      const measured = await durationOf(await download(webcam));
      assert.ok(Math.abs(measured - (20 + durationB)) < 1, `lasts ${measured} s`);
      // The silence up to the deadline is a gap too, after the last frame.
      const gaps = webcam.gaps as Json[];
      assert.equal(gaps.length, 2, JSON.stringify(gaps));
      assert.ok(Math.abs((gaps[1]?.end as number) - 30 * 60) < 1);
    });

    it('a session without chunks lists no recordings and stays not_sent_to_queue', async () => {
      const session = await startedSession();
      await finish(session, 10);
      assert.equal(await transcodingStatus(session.id), 'not_sent_to_queue');
      assert.deepEqual(await recordings(session.id), []);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`KEEP_RECORDING_CHUNKS=true [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;

    before(async () => {
      server = await startTestServer(dialect, { clock, env: { KEEP_RECORDING_CHUNKS: 'true' } });
    });

    after(async () => {
      await server.close();
    });

    it('keeps the chunks after the recording is finalised', async () => {
      const owner = await server.user(await server.institute(), 'teacher');
      const created = await owner.client.v3('POST', '/exams', {
        name: 'Kept',
        type: 'classroom',
        duration_minutes: 30,
      });
      const exam = object(object(created.json, 'body').exam, 'exam').id as number;
      const made = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: exam,
        name: 'Candidate',
        email: 'kept@example.org',
      });
      const student = object(object(made.json, 'body').student, 'student');
      const token = student.token as string;
      const started = await httpRequest({ url: `${server.baseUrl}/api/room/${token}/start`, method: 'POST' });
      assert.equal(started.status, 200, started.text);
      for (const [sequence, bytes] of CAMERA_A.entries()) {
        clock.current += 4000;
        const { body, contentType } = multipartBody({ sequence: String(sequence), source: 'webcam' }, [
          { field: 'file', fileName: 'webcam.webm', contentType: 'video/webm', bytes },
        ]);
        const sent = await httpRequest({
          url: `${server.baseUrl}/api/room/${token}/recordings`,
          method: 'POST',
          headers: { 'content-type': contentType },
          body,
        });
        assert.equal(sent.status, 201, sent.text);
      }
      const finished = await httpRequest({
        url: `${server.baseUrl}/api/room/${token}/finish`,
        method: 'POST',
      });
      assert.equal(finished.status, 200, finished.text);
      const worker = createWorker({
        db: server.app.database.db,
        dialect,
        clock,
        logger: pino({ level: 'silent' }),
        handlers: server.app.jobHandlers,
      });
      while (await worker.runOnce());
      const listed = await owner.client.v3('GET', '/student_sessions/:id/recordings', {
        id: student.id as number,
      });
      const [webcam] = object(listed.json, 'body').recordings as Json[];
      assert.equal(webcam?.status, 'completed');
      const files = await owner.client.v3('GET', '/student_sessions/:id/files', { id: student.id as number });
      assert.equal((object(files.json, 'body').files as unknown[]).length, CAMERA_A.length);
    });
  });
}
