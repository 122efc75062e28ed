/**
 * "A job interrupted by `kill -9` completes after restart" (issue step 4, item 5), with real
 * processes: `./bin/invigil worker` is killed with SIGKILL while it writes an exam's 200 MB archive,
 * and another `./bin/invigil worker` then finishes the export once the dead worker's lease has run
 * out. The killed worker runs with JOB_LEASE_MS=1500, so the job is free again 1.5 s after the kill
 * instead of the default minute.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import type { StoredFile } from '../../src/domain/files/file.ts';
import { fillPath, V3_ACCEPT } from '../helpers/client.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';
import { assertMatchesManifest, digestZip, manifestOf } from '../helpers/zip-archive.ts';
import { INVIGIL_BIN } from '../helpers/cli.ts';

/** The killed worker's lease: the job is free for another worker this long after the kill. */
const DOOMED_LEASE_MS = 1500;
const SESSIONS = 20;
const FILES_PER_SESSION = 2;
const FILE_BYTES = 5 * 1024 * 1024;
const MIB = 1024 * 1024;

/** `size` random bytes, produced a MiB at a time. */
function randomStream(size: number): Readable {
  let left = size;
  return new Readable({
    read() {
      if (left === 0) {
        this.push(null);
        return;
      }
      const chunk = crypto.randomBytes(Math.min(MIB, left));
      left -= chunk.length;
      this.push(chunk);
    },
  });
}

interface Process {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

function launch(command: string, args: string[], env: NodeJS.ProcessEnv): Process {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, output: () => text };
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

for (const dialect of DIALECTS) {
  describe(`exam zip job killed with SIGKILL [${dialect}]`, () => {
    let server: TestServer;
    let owner: Awaited<ReturnType<TestServer['user']>>;
    let env: NodeJS.ProcessEnv;
    let examId: number;
    const handedIn: Array<{ file: StoredFile; folder: string }> = [];
    const running: Process[] = [];

    before(async () => {
      server = await startTestServer(dialect);
      env = {
        ...process.env,
        DATABASE_URL: server.database.url,
        DATA_DIR: server.database.dataDir,
        LOG_LEVEL: 'warn',
      };
      const institute = await server.institute();
      owner = await server.user(institute, 'teacher');
      const actor = { id: owner.id, instituteId: institute, role: 'teacher' as const };
      const { services, database } = server.app;
      examId = (
        await services.exams.create(actor, { name: 'Big exam', type: 'classroom', duration_minutes: 60 })
      ).id;
      for (let index = 0; index < SESSIONS; index += 1) {
        const email = `student${index}@example.org`;
        const session = await services.studentSessions.create(actor, examId, { name: 'Student', email });
        for (let part = 0; part < FILES_PER_SESSION; part += 1) {
          const file = await services.files.keepStream(randomStream(FILE_BYTES), {
            instituteId: institute,
            originalName: `scan-${part}.pdf`,
            contentType: 'application/pdf',
          });
          await database.db
            .insertInto('session_files')
            .values({
              student_session_id: session.id,
              kind: 'upload',
              file_id: file.id,
              sequence: part,
              created_at: 0,
            })
            .execute();
          handedIn.push({ file, folder: `${session.id}-${email}` });
        }
      }
    });

    after(async () => {
      for (const each of running) each.child.kill('SIGKILL');
      await Promise.all(running.map((each) => each.exited));
      await server.close();
    });

    async function status(): Promise<string> {
      const answer = await owner.client.v3('GET', '/exams/:id/status_exam_documents_zip', { id: examId });
      assert.equal(answer.status, 200, answer.text);
      return (answer.json as { zip_job_status: string }).zip_job_status;
    }

    async function job() {
      const found = await server.app.services.jobs.latest('exam_zip', `exam:${examId}`);
      assert.ok(found !== undefined);
      return found;
    }

    /** Streams the signed download to a file. Returns its path. */
    async function download(): Promise<string> {
      const { path: urlPath, route } = fillPath('/exams/:id/download_exam_documents_zip', { id: examId });
      const signed = owner.client.sign({ id: examId }, route, 'v3');
      const query = new URLSearchParams();
      for (const [key, value] of Object.entries(signed)) query.set(key, String(value));
      const answer = await fetch(`${server.baseUrl}/api/v3${urlPath}?${query.toString()}`, {
        headers: { accept: V3_ACCEPT, authorization: `Token token=${owner.client.credentials.apiToken}` },
      });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('content-type'), 'application/zip');
      assert.ok(answer.body !== null);
      const target = path.join(server.database.dataDir, 'downloaded.zip');
      await pipeline(Readable.fromWeb(answer.body), fs.createWriteStream(target));
      return target;
    }

    it('finishes the export in a second `invigil worker` after the first was killed writing it', async () => {
      const generated = await owner.client.v3('PUT', '/exams/:id/generate_exam_documents_zip', {
        id: examId,
      });
      assert.equal(generated.status, 202, generated.text);
      assert.equal(await status(), 'queued');

      const doomed = launch(INVIGIL_BIN, ['worker'], { ...env, JOB_LEASE_MS: String(DOOMED_LEASE_MS) });
      running.push(doomed);
      await waitFor('the export to be running', async () => (await status()) === 'running', 30_000);
      assert.ok(doomed.child.kill('SIGKILL'));
      assert.equal((await doomed.exited).signal, 'SIGKILL', doomed.output());

      // Killed half way: the job is still held by the dead worker, nothing is recorded yet.
      const orphaned = await job();
      assert.equal(orphaned.status, 'running', 'the kill landed before the job finished');
      assert.equal(orphaned.attempts, 1);
      assert.equal(orphaned.lockedUntil, orphaned.updatedAt + DOOMED_LEASE_MS, 'leased for JOB_LEASE_MS');
      assert.equal(await status(), 'running');

      const recovering = launch(INVIGIL_BIN, ['worker'], env);
      running.push(recovering);
      await waitFor(
        'the restarted worker to finish the export',
        async () => {
          if (recovering.child.exitCode !== null) throw new Error(`worker exited: ${recovering.output()}`);
          // The handler marks the export a success before the worker records the job's outcome.
          return (await status()) === 'success' && (await job()).status === 'succeeded';
        },
        90_000,
      );
      const finished = await job();
      assert.equal(finished.status, 'succeeded');
      assert.equal(finished.attempts, 2, 'the second attempt, by the restarted worker, built it');
      assert.equal(finished.progress, `${handedIn.length}/${handedIn.length} files`);

      recovering.child.kill('SIGTERM');
      assert.deepEqual(await recovering.exited, { code: 0, signal: null }, recovering.output());

      // The archive is whole: every file, each with the size and SHA-256 of the stored file.
      const entries = await digestZip(await download());
      const manifest = manifestOf(entries);
      assert.equal(manifest.exam_id, examId);
      const listed = assertMatchesManifest(entries, manifest);
      assert.equal(listed.size, handedIn.length);
      for (const { file, folder } of handedIn) {
        const stored = await server.app.services.files.find(file.id);
        assert.ok(stored !== undefined);
        const entry = listed.get(`${folder}/${file.originalName}`);
        assert.ok(entry !== undefined, `${folder}/${file.originalName} is in the archive`);
        assert.equal(entry.size, stored.size);
        assert.equal(entry.sha256, stored.sha256);
      }
    });
  });
}
