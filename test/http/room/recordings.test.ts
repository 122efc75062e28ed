import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { HOLD_BYTES } from '../../../src/domain/room/recordings.ts';
import { createS3Client } from '../../../src/storage/s3.ts';
import { addCandidate } from '../../helpers/candidates.ts';
import type { ApiClient } from '../../helpers/client.ts';
import { assertStored } from '../../helpers/files.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { type FilePart, multipartBody, SAMPLE } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';

/**
 * The recording-chunk path (`POST /api/room/:token/recordings`) streams each chunk straight into the
 * storage: these tests hold it to its promises on both databases and (TEST_STORAGE=s3) on S3 — the
 * token and the session's state are judged before the body is read, nothing of a refused, aborted or
 * oversized chunk stays behind, concurrent chunks of many sessions are all durable, and every chunk
 * is stored as `webcam-N.webm` or `screen-N.webm`.
 */

type Json = Record<string, unknown>;

const NO_ROOM = { error: "Couldn't find the exam room" };
const FINISHED = { error: 'The exam is finished: this student session accepts no more changes' };
const MINUTE = 60_000;
const CHUNK_LIMIT = 16 * 1024 * 1024;

/** The first bytes of a WebM stream (EBML header), then media data. */
function webm(size = 2_000): Buffer {
  return Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), crypto.randomBytes(size)]);
}

function assertAnswer(answer: HttpAnswer, status: number, body: Json): void {
  assert.equal(answer.status, status, answer.text);
  assert.deepEqual(answer.json, body);
}

function filePart(bytes: Buffer, fileName = 'chunk.webm'): FilePart {
  return { field: 'file', fileName, contentType: 'video/webm', bytes };
}

/** Sends raw bytes and resolves with what the server answered, without waiting for the body to be sent. */
function rawExchange(
  port: number,
  head: string,
  body: Buffer,
): Promise<{ text: string; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (data: Buffer) => {
      text += data.toString('latin1');
      if (/\r\n\r\n[\s\S]*\}$/.test(text)) resolve({ text, socket });
    });
    socket.on('error', reject);
    socket.write(head);
    socket.write(body);
  });
}

for (const dialect of DIALECTS) {
  describe(`recording chunks streamed to storage [${dialect}]`, () => {
    const start = Math.floor(Date.now() / 1000) * 1000;
    const clock = new TestClock(start);
    let server: TestServer;
    let examId: number;
    let students = 0;
    let ownerClient: ApiClient;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      const institute = await server.institute();
      const owner = await server.user(institute, 'teacher');
      const created = await owner.client.v3('POST', '/exams', {
        name: 'Recorded exam',
        type: 'classroom',
        duration_minutes: 30,
      });
      assert.equal(created.status, 201, created.text);
      examId = object(object(created.json, 'body').exam, 'exam').id as number;
      ownerClient = owner.client;
    });

    after(async () => {
      await server.close();
    });

    /** A new session; started unless `started` is false. Returns its id and token. */
    async function student(started = true): Promise<{ id: number; token: string }> {
      students += 1;
      const { id, token } = await addCandidate(ownerClient, examId, students);
      if (started) {
        const begun = await httpRequest({ url: `${server.baseUrl}/api/room/${token}/start`, method: 'POST' });
        assert.equal(begun.status, 200, begun.text);
      }
      return { id, token };
    }

    function chunk(
      token: string,
      fields: Record<string, string>,
      files: readonly FilePart[],
    ): Promise<HttpAnswer> {
      const { body, contentType } = multipartBody(fields, files);
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}/recordings`,
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
    }

    const send = (token: string, sequence: number, bytes: Buffer, source = 'webcam') =>
      chunk(token, { sequence: String(sequence), source }, [filePart(bytes, `whatever-${sequence}.bin`)]);

    async function rows(sessionId: number): Promise<{ kind: string; sequence: number; file_id: number }[]> {
      return server.app.database.db
        .selectFrom('session_files')
        .select(['kind', 'sequence', 'file_id'])
        .where('student_session_id', '=', sessionId)
        .orderBy('kind')
        .orderBy('sequence')
        .execute();
    }

    async function fileRecords(): Promise<number> {
      const row = await server.app.database.db
        .selectFrom('files')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      return Number(row.count);
    }

    /** Every stored object, temporary files of the local storage included (their names). */
    async function storedObjects(): Promise<string[]> {
      const storage = server.app.config.storage;
      if (storage.kind === 's3') {
        const listed = await createS3Client(storage).send(
          new ListObjectsV2Command({ Bucket: storage.bucket }),
        );
        return (listed.Contents ?? []).map((entry) => entry.Key ?? '');
      }
      const root = path.join(server.app.config.dataDir, 'files');
      return fs.readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((name) => {
        return fs.statSync(path.join(root, name)).isFile();
      });
    }

    /** Files in the multipart spool directory, which this route must never use. */
    function spooled(): string[] {
      const spool = path.join(server.app.config.dataDir, 'tmp', 'uploads');
      return fs.existsSync(spool) ? fs.readdirSync(spool) : [];
    }

    /** Waits (briefly) until `check` holds. */
    async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
      for (let round = 0; round < 100; round += 1) {
        if (await check()) return;
        await delay(50);
      }
      assert.fail(`never: ${what}`);
    }

    it('answers before reading the body, and keeps nothing, for an unknown token or a session not started', async () => {
      clock.current = start;
      const waiting = await student(false);
      const objects = await storedObjects();
      const records = await fileRecords();
      const { body, contentType } = multipartBody({ sequence: '0' }, [filePart(webm(100_000))]);
      const cases: [string, Json][] = [
        [crypto.randomBytes(16).toString('hex'), NO_ROOM],
        [
          waiting.token,
          {
            error: 'Recording chunks are accepted only while the exam is started (the session is registered)',
          },
        ],
      ];
      for (const [token, expected] of cases) {
        // Content-Length announces the whole body, but only its first kilobyte is ever sent: the
        // answer can only come if the server judged the request before reading the body.
        const head =
          `POST /api/room/${token}/recordings HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Content-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`;
        const port = Number(new URL(server.baseUrl).port);
        const { text, socket } = await rawExchange(port, head, body.subarray(0, 1024));
        socket.destroy();
        const [status, ...rest] = text.split('\r\n');
        assert.match(status ?? '', token === waiting.token ? / 409 / : / 404 /);
        assert.match(text, /\r\nconnection: close\r\n/i, 'the connection closes: the body is never read');
        assert.deepEqual(JSON.parse(rest.join('\r\n').split('\r\n\r\n')[1] ?? ''), expected);
      }
      assert.deepEqual(await storedObjects(), objects, 'nothing stored');
      assert.equal(await fileRecords(), records, 'no file record');
      assert.deepEqual(spooled(), [], 'nothing spooled');
    });

    it('leaves no temporary file and no row when the client breaks off a chunk', async () => {
      clock.current = start;
      const { id, token } = await student();
      const objects = await storedObjects();
      const records = await fileRecords();
      const { body, contentType } = multipartBody({ sequence: '0' }, [filePart(webm(3_000_000))]);
      const socket = net.connect(Number(new URL(server.baseUrl).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST /api/room/${token}/recordings HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Content-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      socket.write(body.subarray(0, 1_500_000));
      if (server.app.config.storage.kind === 'local') {
        // The chunk is on its way into the storage's temporary file when the client goes.
        const tmp = path.join(server.app.config.dataDir, 'files', '.tmp');
        await eventually(() => Promise.resolve(fs.readdirSync(tmp).length > 0), 'a temporary file appears');
      } else {
        await delay(300);
      }
      socket.destroy();
      await eventually(
        async () => JSON.stringify(await storedObjects()) === JSON.stringify(objects),
        'the stored objects are as before',
      );
      assert.equal(await fileRecords(), records, 'no file record');
      assert.deepEqual(await rows(id), [], 'no row');
      assert.deepEqual(spooled(), [], 'nothing spooled');
      // The sequence is still free.
      assertAnswer(await send(token, 0, webm()), 201, { next_sequence: 1 });
    });

    it('stores concurrent chunks of many sessions, every one durable and in order', async () => {
      clock.current = start;
      const sessions = await Promise.all(Array.from({ length: 12 }, () => student()));
      const sent = new Map<string, Buffer>();
      await Promise.all(
        sessions.flatMap(({ token }) =>
          (['webcam', 'screen'] as const).map(async (source) => {
            for (let sequence = 0; sequence < 4; sequence += 1) {
              const bytes = webm(20_000 + sequence);
              sent.set(`${token}:${source}:${sequence}`, bytes);
              assertAnswer(await send(token, sequence, bytes, source), 201, { next_sequence: sequence + 1 });
            }
          }),
        ),
      );
      for (const { id, token } of sessions) {
        const stored = await rows(id);
        assert.deepEqual(
          stored.map((row) => `${row.kind}:${row.sequence}`),
          ['recording:0', 'recording:1', 'recording:2', 'recording:3'].concat([
            'screen_recording:0',
            'screen_recording:1',
            'screen_recording:2',
            'screen_recording:3',
          ]),
        );
        for (const row of stored) {
          const source = row.kind === 'recording' ? 'webcam' : 'screen';
          await assertStored(server, row.file_id, sent.get(`${token}:${source}:${row.sequence}`));
        }
      }
      assert.deepEqual(spooled(), [], 'nothing spooled');
    });

    it('keeps one of several copies of a chunk sent at once, answering the others 200', async () => {
      clock.current = start;
      const { id, token } = await student();
      assertAnswer(await send(token, 0, webm()), 201, { next_sequence: 1 });
      const records = await fileRecords();
      const copies = Array.from({ length: 5 }, () => webm(50_000));
      const answers = await Promise.all(copies.map((bytes) => send(token, 1, bytes)));
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 200, 200, 200, 201]);
      for (const answer of answers) assert.deepEqual(answer.json, { next_sequence: 2 });
      const stored = await rows(id);
      assert.deepEqual(
        stored.map((row) => row.sequence),
        [0, 1],
      );
      const kept = copies[answers.findIndex((answer) => answer.status === 201)];
      await assertStored(server, stored[1]?.file_id ?? 0, kept);
      assert.equal(await fileRecords(), records + 1, 'the other copies left no file record');
    });

    it('stores chunks whole on both sides of the size it keeps in memory (one synced write) or streams', async () => {
      clock.current = start;
      const { id, token } = await student();
      const sizes = [100, HOLD_BYTES - 4, HOLD_BYTES + 1, 9 * 1024 * 1024];
      const sent = sizes.map((size) => webm(size));
      for (const [sequence, bytes] of sent.entries()) {
        assertAnswer(await send(token, sequence, bytes), 201, { next_sequence: sequence + 1 });
      }
      const stored = await rows(id);
      assert.deepEqual(
        stored.map((row) => row.sequence),
        [0, 1, 2, 3],
      );
      for (const row of stored) await assertStored(server, row.file_id, sent[row.sequence]);
      assert.deepEqual(spooled(), [], 'nothing spooled');
    });

    it('names every stored chunk <source>-<sequence>, whatever the client called it', async () => {
      clock.current = start;
      const { id, token } = await student();
      assertAnswer(await send(token, 0, webm()), 201, { next_sequence: 1 });
      assertAnswer(await send(token, 1, SAMPLE.binary), 201, { next_sequence: 2 });
      assertAnswer(await send(token, 0, webm(), 'screen'), 201, { next_sequence: 1 });
      const listed = await ownerClient.v3('GET', '/student_sessions/:id/files', { id });
      assert.equal(listed.status, 200, listed.text);
      const files = object(listed.json, 'body').files as Json[];
      assert.deepEqual(
        files.map((file) => [file.kind, file.sequence, file.file_name, file.content_type]),
        [
          ['recording', 0, 'webcam-0.webm', 'video/webm'],
          ['recording', 1, 'webcam-1.webm', 'video/webm'],
          ['screen_recording', 0, 'screen-0.webm', 'video/webm'],
        ],
      );
    });

    it('answers 200 for a resend, 409 for a gap, 413 for an oversized chunk and 415 for a first chunk that is no video, keeping none of them', async () => {
      clock.current = start;
      const { id, token } = await student();
      assertAnswer(await send(token, 0, SAMPLE.pdf), 415, {
        error: 'File type not allowed: application/pdf',
      });
      const first = webm();
      assertAnswer(await send(token, 0, first), 201, { next_sequence: 1 });
      const objects = await storedObjects();
      const records = await fileRecords();
      assertAnswer(await send(token, 0, webm()), 200, { next_sequence: 1 });
      assertAnswer(await send(token, 2, webm()), 409, { error: 'Expected webcam recording chunk 1, not 2' });
      assertAnswer(await send(token, 1, Buffer.alloc(CHUNK_LIMIT + 1, 7)), 413, {
        error: `Recording chunk too large (at most ${CHUNK_LIMIT} bytes)`,
      });
      assertAnswer(await chunk(token, { sequence: '1' }, []), 422, {
        error: "Param is missing or the value is empty: 'file'",
      });
      assert.deepEqual(await storedObjects(), objects, 'nothing more stored');
      assert.equal(await fileRecords(), records, 'no more file records');
      const stored = await rows(id);
      assert.deepEqual(
        stored.map((row) => row.sequence),
        [0],
      );
      await assertStored(server, stored[0]?.file_id ?? 0, first);
      // A chunk at the limit is taken.
      assertAnswer(await send(token, 1, Buffer.alloc(CHUNK_LIMIT, 7)), 201, { next_sequence: 2 });
    });

    it('places a chunk at the time the page made it (age_ms), the file record dated by its arrival', async () => {
      clock.current = start + 5 * MINUTE;
      const { id, token } = await student();
      assertAnswer(
        await chunk(token, { sequence: '0', source: 'webcam', age_ms: '90000' }, [filePart(webm())]),
        201,
        {
          next_sequence: 1,
        },
      );
      assertAnswer(await chunk(token, { sequence: '1', source: 'webcam' }, [filePart(webm())]), 201, {
        next_sequence: 2,
      });
      // An age over a day counts as a day.
      assertAnswer(
        await chunk(token, { sequence: '2', source: 'webcam', age_ms: String(3 * 24 * 60 * MINUTE) }, [
          filePart(webm()),
        ]),
        201,
        { next_sequence: 3 },
      );
      const placed = await server.app.database.db
        .selectFrom('session_files')
        .innerJoin('files', 'files.id', 'session_files.file_id')
        .select([
          'session_files.sequence',
          'session_files.created_at as placed',
          'files.created_at as arrived',
        ])
        .where('student_session_id', '=', id)
        .orderBy('session_files.sequence')
        .execute();
      assert.deepEqual(
        placed.map((row) => [row.sequence, Number(row.placed), Number(row.arrived)]),
        [
          [0, clock.current - 90_000, clock.current],
          [1, clock.current, clock.current],
          [2, clock.current - 24 * 60 * MINUTE, clock.current],
        ],
      );
      for (const age of ['-1', 'soon', '1.5']) {
        const refused = await chunk(token, { sequence: '3', age_ms: age }, [filePart(webm())]);
        assert.equal(refused.status, 422, refused.text);
        assert.match(String(object(refused.json, 'body').error), /^'age_ms':/);
      }
    });

    it('reads the fields whatever their place in the body', async () => {
      clock.current = start;
      const { id, token } = await student();
      const bytes = webm();
      const boundary = `----after-${crypto.randomBytes(6).toString('hex')}`;
      const body = Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.webm"\r\n` +
            'Content-Type: video/webm\r\n\r\n',
        ),
        bytes,
        Buffer.from(
          `\r\n--${boundary}\r\nContent-Disposition: form-data; name="source"\r\n\r\nscreen\r\n` +
            `--${boundary}\r\nContent-Disposition: form-data; name="sequence"\r\n\r\n0\r\n--${boundary}--\r\n`,
        ),
      ]);
      const answer = await httpRequest({
        url: `${server.baseUrl}/api/room/${token}/recordings`,
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
      });
      assertAnswer(answer, 201, { next_sequence: 1 });
      const stored = await rows(id);
      assert.deepEqual(
        stored.map((row) => `${row.kind}:${row.sequence}`),
        ['screen_recording:0'],
      );
      await assertStored(server, stored[0]?.file_id ?? 0, bytes);
      // A repeated field: the last one counts, as for every multipart body.
      const repeated = await httpRequest({
        url: `${server.baseUrl}/api/room/${token}/recordings`,
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="sequence"\r\n\r\n7\r\n` +
              `--${boundary}\r\nContent-Disposition: form-data; name="sequence"\r\n\r\n0\r\n` +
              `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.webm"\r\n\r\n`,
          ),
          bytes,
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ]),
      });
      assertAnswer(repeated, 201, { next_sequence: 1 });
    });

    it('answers 400 for a body that breaks off before its closing boundary, keeping nothing', async () => {
      clock.current = start;
      const { id, token } = await student();
      const { body, contentType } = multipartBody({ sequence: '0' }, [filePart(webm())]);
      const cut = body.subarray(0, body.length - 40);
      const answer = await httpRequest({
        url: `${server.baseUrl}/api/room/${token}/recordings`,
        method: 'POST',
        headers: { 'content-type': contentType },
        body: cut,
      });
      assert.equal(answer.status, 400, answer.text);
      assert.deepEqual(await rows(id), []);
    });

    it('stops taking chunks the moment the time is up, though the session was remembered as started', async () => {
      clock.current = start;
      const { token } = await student();
      assertAnswer(await send(token, 0, webm()), 201, { next_sequence: 1 });
      clock.current = start + 30 * MINUTE;
      assertAnswer(await send(token, 1, webm()), 409, FINISHED);
    });

    it('lets the database refuse a chunk for a session that left exam_started elsewhere', async () => {
      clock.current = start;
      const { id, token } = await student();
      assertAnswer(await send(token, 0, webm()), 201, { next_sequence: 1 });
      // Finished behind the room's back (another process, staff): the remembered state is stale.
      await server.app.database.db
        .updateTable('student_sessions')
        .set({ status: 'exam_finished', end_time: start, updated_at: start })
        .where('id', '=', id)
        .execute();
      const objects = await storedObjects();
      assertAnswer(await send(token, 1, webm()), 409, FINISHED);
      assert.deepEqual(await storedObjects(), objects, 'the refused chunk was not kept');
      assert.deepEqual(
        (await rows(id)).map((row) => row.sequence),
        [0],
      );
    });
  });
}
