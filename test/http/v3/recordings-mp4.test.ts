import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ALL_FORMATS, BufferSource, Input } from 'mediabunny';
import pino from 'pino';
import { listExamRecordings } from '../../../src/domain/exports/exam-exports.repository.ts';
import { RECORDING_KINDS } from '../../../src/domain/room/room.ts';
import { createWorker } from '../../../src/jobs/worker.ts';
import { fetchAddress } from '../../helpers/files.ts';
import { httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { mp4Chunks } from '../../helpers/mp4-fixtures.ts';
import { multipartBody } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';

/**
 * A Safari candidate (docs/recordings.md): the webcam sends fragmented-MP4 chunks (H.264 + AAC, the
 * init segment in the first chunk of each recorder, made with ffmpeg in Safari's shape), a reload
 * in the middle starts a new init segment; the screen sends WebM. Both are finalised, each to its
 * own format, on the same clock, and the MP4 is served, listed and exported as `.mp4`.
 */

type Json = Record<string, unknown>;

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/recordings');
const SCREEN_A = Array.from({ length: 4 }, (_, index) =>
  fs.readFileSync(path.join(FIXTURES, `screen-a-${index}.webm`)),
);
const RELOAD_AT = 40;

for (const dialect of DIALECTS) {
  describe(`MP4 recording chunks through the room API [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-recordings-mp4-'));
    let server: TestServer;
    let owner: Awaited<ReturnType<TestServer['user']>>;
    let examId: number;
    let session: { id: number; token: string; startedAt: number };
    let first: Buffer[];
    let second: Buffer[];
    let listed: Json[];

    before(async () => {
      first = mp4Chunks(directory, 'first', { seconds: 20 });
      second = mp4Chunks(directory, 'second', { seconds: 12, pattern: 'smptebars' });
      server = await startTestServer(dialect, { clock });
      const home = await server.institute();
      owner = await server.user(home, 'teacher');
      const created = await owner.client.v3('POST', '/exams', {
        name: 'Safari exam',
        type: 'classroom',
        duration_minutes: 30,
      });
      assert.equal(created.status, 201, created.text);
      examId = object(object(created.json, 'body').exam, 'exam').id as number;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Safari Candidate',
        email: 'safari@example.org',
      });
      assert.equal(answer.status, 201, answer.text);
      const record = object(object(answer.json, 'body').student, 'student');
      clock.current += 1000;
      const startedAt = clock.now();
      const begun = await httpRequest({
        url: `${server.baseUrl}/api/room/${record.token as string}/start`,
        method: 'POST',
      });
      assert.equal(begun.status, 200, begun.text);
      session = { id: record.id as number, token: record.token as string, startedAt };
    });

    after(async () => {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    });

    async function send(
      source: 'webcam' | 'screen',
      sequence: number,
      bytes: Buffer,
      atSeconds: number,
      type: string,
    ): Promise<number> {
      clock.current = session.startedAt + Math.round(atSeconds * 1000);
      const { body, contentType } = multipartBody({ sequence: String(sequence), source }, [
        { field: 'file', fileName: `${source}-${sequence}`, contentType: type, bytes },
      ]);
      const answer = await httpRequest({
        url: `${server.baseUrl}/api/room/${session.token}/recordings`,
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
      return answer.status;
    }

    it('accepts every MP4 chunk, the init segment first and the fragments after (201)', async () => {
      for (const [index, bytes] of first.entries()) {
        assert.equal(await send('webcam', index, bytes, 4 * (index + 1) + 0.15, 'video/mp4'), 201);
      }
      for (const [index, bytes] of SCREEN_A.entries()) {
        assert.equal(await send('screen', index, bytes, 4 * (index + 1) + 0.15, 'video/webm'), 201);
      }
      // A reload: a new recorder, a new init segment, the sequence going on.
      for (const [index, bytes] of second.entries()) {
        const sequence = first.length + index;
        assert.equal(
          await send('webcam', sequence, bytes, RELOAD_AT + 4 * (index + 1) + 0.15, 'video/mp4'),
          201,
        );
      }
      const rows = await server.app.database.db
        .selectFrom('session_files')
        .innerJoin('files', 'files.id', 'session_files.file_id')
        .select(['files.original_name', 'files.content_type'])
        .where('session_files.student_session_id', '=', session.id)
        .where('session_files.kind', '=', RECORDING_KINDS.webcam)
        .orderBy('session_files.sequence')
        .execute();
      assert.deepEqual(
        rows.map((row) => [row.original_name, row.content_type]),
        Array.from({ length: first.length + second.length }, (_, index) => [
          `webcam-${index}.mp4`,
          'video/mp4',
        ]),
      );
    });

    it('finalises the MP4 stream into one MP4 and the WebM one into WebM, on the same clock', async () => {
      clock.current = session.startedAt + (RELOAD_AT + 13) * 1000;
      const finished = await httpRequest({
        url: `${server.baseUrl}/api/room/${session.token}/finish`,
        method: 'POST',
      });
      assert.equal(finished.status, 200, finished.text);
      const worker = createWorker({
        db: server.app.database.db,
        dialect,
        clock: server.app.clock,
        logger: pino({ level: 'silent' }),
        handlers: server.app.jobHandlers,
      });
      while (await worker.runOnce());
      const answer = await owner.client.v3('GET', '/student_sessions/:id/recordings', { id: session.id });
      assert.equal(answer.status, 200, answer.text);
      const body = object(answer.json, 'body');
      assert.ok(Array.isArray(body.recordings));
      listed = body.recordings.map((item) => object(item, 'recording'));
      const [webcam, screen] = listed as [Json, Json];
      assert.deepEqual(
        [webcam.source, webcam.status, screen.source, screen.status],
        ['webcam', 'completed', 'screen', 'completed'],
      );
      // 20 s, the reload's gap from 20 s to 40 s, then 12 s.
      assert.ok(Math.abs((webcam.duration_seconds as number) - 52) < 0.6, String(webcam.duration_seconds));
      const gaps = webcam.gaps as { start: number; end: number }[];
      assert.deepEqual(
        gaps.map((gap) => [Math.round(gap.start), Math.round(gap.end)]),
        [[20, 40]],
      );
      const incidents = await server.app.database.db
        .selectFrom('incidents')
        .select('comment')
        .where('student_session_id', '=', session.id)
        .where('kind', '=', 'recording_gap')
        .execute();
      assert.ok(incidents.some((incident) => incident.comment.startsWith('Webcam recording gap: 20 s')));
    });

    it('serves the MP4 as video/mp4 (a file mediabunny reads whole) and the WebM as video/webm', async () => {
      const [webcam, screen] = listed as [Json, Json];
      const mp4 = await fetchAddress(server, webcam.url as string);
      assert.equal(mp4.status, 200);
      assert.equal(mp4.headers['content-type'], 'video/mp4');
      const input = new Input({ source: new BufferSource(new Uint8Array(mp4.bytes)), formats: ALL_FORMATS });
      assert.equal(await input.getMimeType().then((type) => type.split(';')[0]), 'video/mp4');
      assert.ok(Math.abs((await input.computeDuration()) - 52) < 0.6);
      input.dispose();
      const webm = await fetchAddress(server, screen.url as string);
      assert.equal(webm.headers['content-type'], 'video/webm');
    });

    it('exports name the MP4 recording recording-webcam.mp4 and the WebM one recording-screen.webm', async () => {
      const files = await listExamRecordings(server.app.database.db, examId);
      assert.deepEqual(
        files.map((file) => [file.originalName, file.contentType]),
        [
          ['recording-webcam.mp4', 'video/mp4'],
          ['recording-screen.webm', 'video/webm'],
        ],
      );
    });
  });
}
