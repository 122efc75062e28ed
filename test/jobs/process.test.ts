import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../src/domain/clock.ts';
import type { JobQueue } from '../../src/domain/ports/jobs.ts';
import { httpRequest } from '../helpers/http.ts';
import { DIALECTS } from '../helpers/server.ts';
import { type JobsDatabase, openJobsDatabase, queueOn, waitFor } from './support.ts';
import { INVIGIL_BIN } from '../helpers/cli.ts';
import { freePort } from '../helpers/processes.ts';

interface Running {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number | null>;
  stderr(): string;
}

function start(args: string[], env: Record<string, string>): Running {
  const child = spawn(INVIGIL_BIN, args, { env: { ...process.env, LOG_LEVEL: 'info', ...env } });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stderr: () => stderr };
}

/** The JSON log lines with this message. */
function logged(stderr: string, message: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === message);
}

async function waitForHealth(url: string, running: Running): Promise<void> {
  await waitFor('the server to answer /healthz', async () => {
    if (running.child.exitCode !== null) throw new Error(`server exited: ${running.stderr()}`);
    try {
      return (await httpRequest({ url: `${url}/healthz` })).status === 200;
    } catch {
      return false;
    }
  });
}

/** A port nobody listens on now (a random one could be a client connection's, as ephemeral ports are). */
async function randomPort(): Promise<string> {
  return String(await freePort());
}

for (const dialect of DIALECTS) {
  describe(`invigil worker and serve processes [${dialect}]`, () => {
    let jobs: JobsDatabase;
    let queue: JobQueue;
    let env: Record<string, string>;

    before(async () => {
      jobs = await openJobsDatabase(dialect);
      queue = queueOn(jobs.database, systemClock);
      env = { DATABASE_URL: jobs.target.url, DATA_DIR: jobs.target.dataDir };
    });
    after(async () => {
      await jobs.close();
    });

    it('`worker` claims queued jobs and exits 0 on SIGTERM', async () => {
      const { id } = await queue.enqueue(jobs.database.db, { kind: 'no-such-kind', payload: { n: 1 } });
      const worker = start(['worker'], env);
      try {
        // This build registers no kinds yet, so the worker's visible effect is failing an unknown one.
        await waitFor(
          'the worker to settle the job',
          async () => (await queue.find(id))?.status === 'failed',
        );
        assert.match((await queue.find(id))?.lastError ?? '', /^no handler for job kind "no-such-kind"/);
      } finally {
        worker.child.kill('SIGTERM');
      }
      assert.equal(await worker.exited, 0, worker.stderr());
      assert.equal(logged(worker.stderr(), 'stopped').length, 1, worker.stderr());
    });

    it('`worker` exits 0 on SIGINT too', async () => {
      const worker = start(['worker'], env);
      await waitFor(
        'the worker to start',
        () => logged(worker.stderr(), 'invigil worker running').length === 1,
      );
      worker.child.kill('SIGINT');
      assert.equal(await worker.exited, 0, worker.stderr());
    });

    it('`serve --no-worker` answers HTTP, leaves jobs queued, and exits 0 on SIGTERM', async () => {
      const { id } = await queue.enqueue(jobs.database.db, { kind: 'no-such-kind', payload: { n: 2 } });
      const port = await randomPort();
      const server = start(['serve', '--no-worker'], { ...env, PORT: port });
      try {
        await waitForHealth(`http://127.0.0.1:${port}`, server);
        // The line is written once listening has begun; on a busy host the pipe may bring it a little
        // after the first answer.
        await waitFor('the serving line', () => logged(server.stderr(), 'invigil serving').length > 0);
        const serving = logged(server.stderr(), 'invigil serving');
        assert.equal(serving[0]?.worker, false);
        // Longer than a worker's idle poll: a worker in this process would have claimed it by now.
        await new Promise((resolve) => setTimeout(resolve, 1500));
        assert.equal((await queue.find(id))?.status, 'queued');
        assert.equal(logged(server.stderr(), 'job worker started').length, 0);
      } finally {
        server.child.kill('SIGTERM');
      }
      assert.equal(await server.exited, 0, server.stderr());
    });

    it('`serve` runs the worker in-process, answers a request in flight at SIGTERM, and exits 0 promptly', async () => {
      const { id } = await queue.enqueue(jobs.database.db, { kind: 'no-such-kind', payload: { n: 3 } });
      const port = await randomPort();
      const server = start(['serve'], { ...env, PORT: port });
      const agent = new http.Agent({ keepAlive: true });
      let signalled = 0;
      try {
        await waitForHealth(`http://127.0.0.1:${port}`, server);
        await waitFor(
          'the in-process worker to settle the job',
          async () => (await queue.find(id))?.status === 'failed',
        );

        // A request whose body is still arriving when SIGTERM comes: it must be answered, and its
        // keep-alive connection must not then hold the shutdown until the idle timeout.
        const body = JSON.stringify({ exam: { name: 'x'.repeat(2000) } });
        const headers = {
          accept: 'application/vnd.procwise.v3',
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
        };
        const expected = await httpRequest({
          url: `http://127.0.0.1:${port}/api/v3/exams`,
          method: 'POST',
          headers,
          body,
        });
        let answered: (status: number) => void = () => {};
        const status = new Promise<number>((resolve) => {
          answered = resolve;
        });
        const request = http.request(
          {
            host: '127.0.0.1',
            port,
            path: '/api/v3/exams',
            method: 'POST',
            agent,
            headers,
          },
          (response) => {
            response.resume();
            response.on('end', () => answered(response.statusCode ?? 0));
          },
        );
        request.on('error', () => answered(-1));
        request.write(body.slice(0, 100));
        await new Promise((resolve) => setTimeout(resolve, 200));
        signalled = Date.now();
        server.child.kill('SIGTERM');
        await waitFor(
          'the server to begin shutting down',
          () => logged(server.stderr(), 'shutting down').length === 1,
        );
        request.end(body.slice(100));
        assert.equal(await status, expected.status, 'the in-flight request gets its usual answer');
      } finally {
        if (signalled === 0) server.child.kill('SIGTERM');
      }
      assert.equal(await server.exited, 0, server.stderr());
      agent.destroy();
      const took = Date.now() - signalled;
      assert.ok(took < 5000, `shutdown took ${took} ms`);
    });
  });
}
