/**
 * `invigil serve --processes N` (INVIGIL_PROCESSES): several serving processes on one port, with the
 * real binary. Recording chunks from several candidates are taken by both processes, each stored
 * once and in order with the bytes sent; only the first process runs the background worker; and
 * SIGTERM stops the whole set gracefully, exit 0.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.ts';
import { serveProcessCount } from '../../src/serve-processes.ts';
import { runCli } from '../helpers/cli.ts';
import { type HttpAnswer, httpRequest } from '../helpers/http.ts';
import { multipartBody } from '../helpers/multipart.ts';
import {
  freePort,
  type InvigilProcess,
  launchInvigil,
  waitUntil,
  waitUntilServing,
} from '../helpers/processes.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';

const CANDIDATES = 4;
const CHUNKS = 6;
const SOURCES = ['webcam', 'screen'] as const;
type Source = (typeof SOURCES)[number];
const KINDS: Record<Source, string> = { webcam: 'recording', screen: 'screen_recording' };

/** A chunk of `size` bytes: a WebM header (so a first chunk passes the type check), then random bytes. */
function chunkBytes(size: number): Buffer {
  const bytes = crypto.randomBytes(size);
  bytes.set([0x1a, 0x45, 0xdf, 0xa3], 0);
  return bytes;
}

function sha256(bytes: Buffer): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

/** The JSON log lines of `output` with message `msg`. */
function logged(output: string, msg: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === msg);
}

function sendChunk(
  baseUrl: string,
  token: string,
  source: Source,
  sequence: number,
  bytes: Buffer,
): Promise<HttpAnswer> {
  const { body, contentType } = multipartBody({ sequence: String(sequence), source }, [
    { field: 'file', fileName: `${source}.webm`, contentType: 'video/webm', bytes },
  ]);
  return httpRequest({
    url: `${baseUrl}/api/room/${token}/recordings`,
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
  });
}

describe('serve --processes', () => {
  it('serves from one process unless INVIGIL_PROCESSES or --processes says otherwise, the flag winning', () => {
    assert.equal(loadConfig({}, '/srv').processes, 1);
    assert.equal(loadConfig({ INVIGIL_PROCESSES: '4' }, '/srv').processes, 4);
    assert.equal(serveProcessCount(['--no-worker'], 1), 1);
    assert.equal(serveProcessCount(['--processes', '3'], 1), 3);
    assert.equal(serveProcessCount(['--processes=2', '--no-worker'], 4), 2);
    assert.throws(() => serveProcessCount(['--processes', '65'], 1), /from 1 to 64/);
    assert.throws(() => serveProcessCount(['--processes'], 1), /from 1 to 64/);
  });

  it('refuses a malformed count: --processes 0 is a usage error, INVIGIL_PROCESSES=many a configuration error', async () => {
    const usage = await runCli(['serve', '--processes', '0'], { DATABASE_URL: 'sqlite::memory:' });
    assert.equal(usage.code, 2, usage.stderr);
    assert.match(usage.stderr, /--processes must be a whole number from 1 to 64/);
    const config = await runCli(['serve'], { DATABASE_URL: 'sqlite::memory:', INVIGIL_PROCESSES: 'many' });
    assert.equal(config.code, 78, config.stderr);
    assert.match(config.stderr, /INVIGIL_PROCESSES must be a whole number/);
  });
});

for (const dialect of DIALECTS) {
  describe(`serve --processes 2 [${dialect}]`, () => {
    let server: TestServer;
    let env: NodeJS.ProcessEnv;
    const tokens: string[] = [];
    let running: InvigilProcess | undefined;

    before(async () => {
      server = await startTestServer(dialect);
      env = {
        ...process.env,
        DATABASE_URL: server.database.url,
        DATA_DIR: server.database.dataDir,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'debug',
      };
      const institute = await server.institute();
      const owner = await server.user(institute, 'teacher');
      const actor = { id: owner.id, instituteId: institute, role: 'teacher' as const };
      const { services } = server.app;
      const exam = await services.exams.create(actor, {
        name: 'Processes exam',
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
        tokens.push(session.token);
      }
    });

    after(async () => {
      await running?.stop();
      await server?.close();
    });

    it('stores every chunk taken by either process once and in order, runs one worker, and stops gracefully', async () => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      running = launchInvigil(['serve', '--processes', '2'], { ...env, PORT: String(port) });
      const launched = running;
      await waitUntilServing(launched, url);
      await waitUntil(
        'both serving processes',
        () => Promise.resolve(logged(launched.output(), 'invigil serving').length === 2),
        60_000,
      );
      const serving = logged(launched.output(), 'invigil serving');
      assert.deepEqual(serving.map((line) => [line.process, line.worker]).sort(), [
        [1, true],
        [2, false],
      ]);
      // The service's line (with the job kinds), not the queue's own debug line of the same name.
      const workers = logged(launched.output(), 'job worker started').filter((line) => 'kinds' in line);
      assert.equal(workers.length, 1);

      // Every recording sends its chunks one after another, all recordings at once (so on several
      // connections, which the processes take in turn).
      const sent = new Map<string, string[]>();
      await Promise.all(
        tokens.flatMap((token) =>
          SOURCES.map(async (source) => {
            const hashes: string[] = [];
            for (let sequence = 0; sequence < CHUNKS; sequence += 1) {
              const bytes = chunkBytes(20_000 + crypto.randomInt(60_000));
              const answer = await sendChunk(url, token, source, sequence, bytes);
              assert.equal(answer.status, 201, answer.text);
              assert.deepEqual(answer.json, { next_sequence: sequence + 1 });
              hashes.push(sha256(bytes));
            }
            sent.set(`${token}:${source}`, hashes);
          }),
        ),
      );

      // Both processes answered chunk requests (each request's log line names its process's pid).
      await waitUntil(
        'the request log lines',
        () =>
          Promise.resolve(
            logged(launched.output(), 'request').filter((line) => String(line.path).endsWith('/recordings'))
              .length >=
              CANDIDATES * SOURCES.length * CHUNKS,
          ),
        30_000,
      );
      const pids = new Set(
        logged(launched.output(), 'request')
          .filter((line) => String(line.path).endsWith('/recordings'))
          .map((line) => line.pid),
      );
      assert.equal(pids.size, 2, `chunk requests answered by ${[...pids].join(', ')}`);

      const { db } = server.app.database;
      for (const token of tokens) {
        for (const source of SOURCES) {
          const rows = await db
            .selectFrom('session_files')
            .innerJoin('student_sessions', 'student_sessions.id', 'session_files.student_session_id')
            .innerJoin('files', 'files.id', 'session_files.file_id')
            .select(['session_files.sequence', 'files.sha256'])
            .where('student_sessions.token', '=', token)
            .where('session_files.kind', '=', KINDS[source])
            .orderBy('session_files.sequence')
            .execute();
          assert.deepEqual(
            rows.map((row) => row.sequence),
            Array.from({ length: CHUNKS }, (_, index) => index),
          );
          assert.deepEqual(
            rows.map((row) => row.sha256),
            sent.get(`${token}:${source}`),
          );
        }
      }

      // A resend of a stored chunk, to whichever process: answered 200 with the sequence expected next.
      const resent = await sendChunk(url, tokens[0] ?? '', 'webcam', 0, chunkBytes(10_000));
      assert.equal(resent.status, 200, resent.text);
      assert.deepEqual(resent.json, { next_sequence: CHUNKS });

      const ended = await launched.stop();
      assert.deepEqual(ended, { code: 0, signal: null }, launched.output());
      assert.equal(logged(launched.output(), 'stopped').length, 2, launched.output());
      assert.equal(logged(launched.output(), 'all serving processes stopped').length, 1);
      running = undefined;
    });
  });
}
