/**
 * A recording chunk acknowledged 201 survives `kill -9` of the process that took it, with the real
 * binary: `invigil serve --no-worker` takes chunks from many candidates at once (held and written in
 * one synced write, or streamed when larger; rows written in grouped commits) and is killed with
 * SIGKILL while chunks are in flight. Every chunk it had acknowledged is then found recorded, in its
 * place, with the bytes sent; and after a restart each recording continues where it stopped. Local
 * disk storage only: that is where the process's own writes decide durability (on S3 the storage
 * answers for what it acknowledged).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { HOLD_BYTES } from '../../../src/domain/room/recordings.ts';
import { assertStored, S3_STORAGE } from '../../helpers/files.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { multipartBody } from '../../helpers/multipart.ts';
import {
  freePort,
  type InvigilProcess,
  launchInvigil,
  waitUntil,
  waitUntilServing,
} from '../../helpers/processes.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';

const CANDIDATES = 8;
const SOURCES = ['webcam', 'screen'] as const;
type Source = (typeof SOURCES)[number];
const KINDS: Record<Source, string> = { webcam: 'recording', screen: 'screen_recording' };
/** The process is killed once this many chunks are acknowledged (or after KILL_AFTER_MS). */
const KILL_AT_ACKNOWLEDGED = 120;
const KILL_AFTER_MS = 20_000;

/** A chunk of `size` bytes: a WebM header (so a first chunk passes the type check), then random bytes. */
function chunkBytes(size: number): Buffer {
  const bytes = crypto.randomBytes(size);
  bytes.set([0x1a, 0x45, 0xdf, 0xa3], 0);
  return bytes;
}

/** Chunk sizes as recorders make them, now and then one too large to be held (streamed instead). */
function chunkSize(sequence: number): number {
  if (sequence % 7 === 3) return HOLD_BYTES + 200_000;
  return 20_000 + crypto.randomInt(300_000);
}

function sha256(bytes: Buffer): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

interface Recording {
  readonly token: string;
  readonly source: Source;
  /** The chunks answered 201, by sequence, with the SHA-256 of the bytes sent. */
  readonly acknowledged: Map<number, string>;
  /** The sequence to send next. */
  next: number;
}

function sendChunk(baseUrl: string, recording: Recording, bytes: Buffer): Promise<HttpAnswer> {
  const { body, contentType } = multipartBody(
    { sequence: String(recording.next), source: recording.source },
    [{ field: 'file', fileName: `${recording.source}.webm`, contentType: 'video/webm', bytes }],
  );
  return httpRequest({
    url: `${baseUrl}/api/room/${recording.token}/recordings`,
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
  });
}

if (!S3_STORAGE) {
  for (const dialect of DIALECTS) {
    describe(`recording chunks acknowledged before kill -9 [${dialect}]`, () => {
      let server: TestServer;
      let env: NodeJS.ProcessEnv;
      const recordings: Recording[] = [];
      const running: InvigilProcess[] = [];

      before(async () => {
        server = await startTestServer(dialect);
        env = {
          ...process.env,
          DATABASE_URL: server.database.url,
          DATA_DIR: server.database.dataDir,
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
        };
        const institute = await server.institute();
        const owner = await server.user(institute, 'teacher');
        const actor = { id: owner.id, instituteId: institute, role: 'teacher' as const };
        const { services } = server.app;
        const exam = await services.exams.create(actor, {
          name: 'Crash exam',
          type: 'classroom',
          duration_minutes: 120,
        });
        for (let index = 0; index < CANDIDATES; index += 1) {
          const session = await services.studentSessions.create(actor, exam.id, {
            name: `Candidate ${index}`,
            email: `candidate${index}@example.org`,
          });
          const started = await httpRequest({
            url: `${server.baseUrl}/api/room/${session.token}/start`,
            method: 'POST',
          });
          assert.equal(started.status, 200, started.text);
          for (const source of SOURCES) {
            recordings.push({ token: session.token, source, acknowledged: new Map(), next: 0 });
          }
        }
      });

      after(async () => {
        await Promise.all(running.map((each) => each.stop()));
        await server?.close();
      });

      /** Starts `serve --no-worker` on the test database and waits until it serves. Returns its address. */
      async function serve(): Promise<{ process: InvigilProcess; url: string }> {
        const port = await freePort();
        const launched = launchInvigil(['serve', '--no-worker'], { ...env, PORT: String(port) });
        running.push(launched);
        const url = `http://127.0.0.1:${port}`;
        await waitUntilServing(launched, url);
        return { process: launched, url };
      }

      it('finds every chunk it acknowledged stored, with the bytes sent, and continues after a restart', async () => {
        const first = await serve();
        let acknowledged = 0;
        let killed = false;
        // Each recording sends its chunks one after another, as a recorder does, until the kill.
        const senders = recordings.map(async (recording) => {
          while (!killed) {
            const bytes = chunkBytes(chunkSize(recording.next));
            let answer: HttpAnswer;
            try {
              answer = await sendChunk(first.url, recording, bytes);
            } catch {
              return; // the connection died with the process
            }
            assert.equal(answer.status, 201, answer.text);
            assert.deepEqual(answer.json, { next_sequence: recording.next + 1 });
            recording.acknowledged.set(recording.next, sha256(bytes));
            recording.next += 1;
            acknowledged += 1;
          }
        });
        await waitUntil(
          'chunks to be acknowledged',
          () => Promise.resolve(acknowledged >= KILL_AT_ACKNOWLEDGED),
          KILL_AFTER_MS,
        );
        killed = true;
        assert.ok(first.process.child.kill('SIGKILL'));
        assert.equal((await first.process.exited).signal, 'SIGKILL', first.process.output());
        await Promise.all(senders);

        const { db } = server.app.database;
        for (const recording of recordings) {
          const rows = await db
            .selectFrom('session_files')
            .innerJoin('student_sessions', 'student_sessions.id', 'session_files.student_session_id')
            .innerJoin('files', 'files.id', 'session_files.file_id')
            .select(['session_files.sequence', 'files.id', 'files.sha256'])
            .where('student_sessions.token', '=', recording.token)
            .where('session_files.kind', '=', KINDS[recording.source])
            .orderBy('session_files.sequence')
            .execute();
          // Gapless from 0; a chunk in flight at the kill may be stored without having been answered.
          assert.deepEqual(
            rows.map((row) => row.sequence),
            rows.map((_, index) => index),
          );
          assert.ok(rows.length >= recording.acknowledged.size, `${recording.source} of ${recording.token}`);
          for (const [sequence, hash] of recording.acknowledged) {
            const row = rows[sequence];
            assert.ok(row !== undefined, `acknowledged chunk ${sequence} is recorded`);
            assert.equal(row.sha256, hash, `chunk ${sequence} is recorded with the bytes sent`);
            await assertStored(server, row.id);
          }
        }

        // After a restart each recording goes on: the first chunk it never saw answered is either
        // stored now (201) or found stored already (200, a resend), and the next one follows.
        const second = await serve();
        for (const recording of recordings) {
          const resent = await sendChunk(second.url, recording, chunkBytes(10_000));
          assert.ok(resent.status === 201 || resent.status === 200, resent.text);
          const expected = (resent.json as { next_sequence: number }).next_sequence;
          recording.next = expected;
          const following = await sendChunk(second.url, recording, chunkBytes(10_000));
          assert.equal(following.status, 201, following.text);
          assert.deepEqual(following.json, { next_sequence: expected + 1 });
        }
      });
    });
  }
}
