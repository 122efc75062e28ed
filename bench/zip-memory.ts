/**
 * Zip memory (issue step 4, item 5): a worker zipping an exam's 1 GB of uploads must stay under
 * 200 MB of resident memory. The archive is streamed from storage into storage, so its size must not
 * show in the worker's memory at all.
 *
 * 1. A temporary DATA_DIR on SQLite; a teacher through the CLI; `invigil serve --no-worker`; an exam
 *    and its student sessions through the signed API.
 * 2. The uploads (BENCH_ZIP_MB MiB of random bytes, default 1024: one file of a quarter of that, the
 *    rest in 8 MiB files, spread over the sessions) are stored through the service's own files
 *    service and listed as the sessions' `upload` session files, by this module run as a child
 *    (`node bench/zip-memory.ts seed ...`, which uses createCore), because the candidate room's
 *    upload route does not exist yet.
 * 3. `invigil worker` starts; its resident set size (VmRSS in /proc) is sampled every 100 ms, idle
 *    first, then from the signed `PUT generate_exam_documents_zip` until the status is `success`.
 *    The kernel's own high-water mark (VmHWM) is read before the worker is stopped.
 * 4. The archive is downloaded through the API and opened with yauzl: every entry's size and SHA-256
 *    must be those of the stored upload, as listed by manifest.json.
 */
import { instituteOfSession } from '../src/domain/data-keys/data-keys.repository.ts';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import yauzl from 'yauzl';
import { type Benchmark, type BenchmarkReport, count, ROOT, type Target } from './benchmark.ts';
import { freePort, INVIGIL, NODE, type ServerChild } from './processes.ts';
import { createExam, createTeacher, serveWithoutWorker, serviceEnv } from './service.ts';
import { type Credentials, nonceSource, signedParams, v3Headers } from './signed-client.ts';

/** The worker's peak resident set size must stay below this many bytes (200 MB). */
const RSS_LIMIT_BYTES = 200 * 1000 * 1000;
const MIB = 1024 * 1024;
const SAMPLE_MS = 100;
const SESSIONS = 50;
const PIECE_BYTES = 8 * MIB;
/** How long the idle worker is sampled before the job is requested. */
const IDLE_MS = 2000;
const THIS_FILE = path.join(ROOT, 'bench', 'zip-memory.ts');

function progress(message: string): void {
  process.stderr.write(`  [zip-memory] ${message}\n`);
}

/** Reads BENCH_ZIP_MB (MiB of uploads, default 1024, at least 16). */
function uploadMiB(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.BENCH_ZIP_MB;
  if (raw === undefined || raw === '') return 1024;
  if (!/^\d+$/.test(raw) || Number(raw) < 16)
    throw new Error(`BENCH_ZIP_MB must be a whole number ≥ 16, got "${raw}"`);
  return Number(raw);
}

/** The upload sizes: a quarter of the total in one file, the rest in PIECE_BYTES files. */
function uploadSizes(totalBytes: number): number[] {
  const big = Math.floor(totalBytes / 4);
  const sizes = [big];
  for (let left = totalBytes - big; left > 0; left -= PIECE_BYTES) sizes.push(Math.min(PIECE_BYTES, left));
  return sizes;
}

/** What the seeding child stored: one line per upload. */
interface SeededFile {
  readonly sessionId: number;
  readonly fileId: number;
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
}

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

/**
 * The seeding child (`node bench/zip-memory.ts seed <session ids> <sizes>`, environment of the
 * service): stores each upload through the files service and lists it as an `upload` session file.
 * Prints the stored files as JSON on stdout.
 */
async function seed(sessionIds: readonly number[], sizes: readonly number[]): Promise<void> {
  const { createCore } = await import('../src/app.ts');
  const { loadConfig } = await import('../src/config/config.ts');
  const core = await createCore(loadConfig());
  try {
    const seeded: SeededFile[] = [];
    for (const [index, size] of sizes.entries()) {
      const sessionId = sessionIds[index % sessionIds.length] ?? 0;
      const name = `upload-${index + 1}.pdf`;
      const file = await core.services.files.keepStream(randomStream(size), {
        originalName: name,
        contentType: 'application/pdf',
        instituteId: (await instituteOfSession(core.database.db, sessionId)) ?? 0,
      });
      await core.database.db
        .insertInto('session_files')
        .values({
          student_session_id: sessionId,
          kind: 'upload',
          file_id: file.id,
          sequence: index,
          created_at: Date.now(),
        })
        .execute();
      seeded.push({ sessionId, fileId: file.id, name, size: file.size, sha256: file.sha256 });
    }
    process.stdout.write(JSON.stringify(seeded));
  } finally {
    await core.close();
  }
}

function runSeeder(
  env: NodeJS.ProcessEnv,
  sessionIds: readonly number[],
  sizes: readonly number[],
): Promise<SeededFile[]> {
  return new Promise((resolve, reject) => {
    execFile(
      NODE,
      [THIS_FILE, 'seed', sessionIds.join(','), sizes.join(',')],
      { cwd: ROOT, env, maxBuffer: 64 * MIB },
      (error, stdout, stderr) => {
        if (error !== null) {
          reject(new Error(`seeding failed: ${error.message}\n${stderr}`));
          return;
        }
        resolve(JSON.parse(stdout) as SeededFile[]);
      },
    );
  });
}

/** One signed V3 call with parameters in the query (GET) or a JSON body; answers status and text. */
async function signedCall(
  baseUrl: string,
  credentials: Credentials,
  nextNonce: () => string,
  method: string,
  template: string,
  params: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const signed = signedParams(credentials, params, nextNonce());
  const pathname = template.replace(/:([a-z_]+)/g, (_match, name: string) => params[name] ?? '');
  const query = method === 'GET' ? `?${new URLSearchParams(signed).toString()}` : '';
  const answer = await fetch(`${baseUrl}/api/v3${pathname}${query}`, {
    method,
    headers: { ...v3Headers(credentials), 'content-type': 'application/json' },
    ...(method === 'GET' ? {} : { body: JSON.stringify(signed) }),
  });
  return { status: answer.status, text: await answer.text() };
}

/** VmRSS and VmHWM of a process in bytes, from /proc (Linux); undefined once it has gone. */
function memoryOf(pid: number): { rss: number; hwm: number } | undefined {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const field = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

function stopChild(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  return exited.finally(() => clearTimeout(timer));
}

/** Streams an entry through SHA-256. Returns its size and hash. */
async function digest(stream: Readable): Promise<{ size: number; sha256: string }> {
  const hash = crypto.createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    const bytes = chunk as Buffer;
    size += bytes.length;
    hash.update(bytes);
  }
  return { size, sha256: hash.digest('hex') };
}

/**
 * Opens the archive and checks it: exactly the seeded files plus manifest.json, each entry's bytes
 * those of its upload, and the manifest agreeing. Returns the problems found (none when whole).
 */
async function checkArchive(file: string, seeded: readonly SeededFile[]): Promise<string[]> {
  const problems: string[] = [];
  const zip = await yauzl.openPromise(file, { lazyEntries: true, validateEntrySizes: true });
  const entries = new Map<string, { size: number; sha256: string }>();
  let manifestText = '';
  try {
    for await (const entry of zip.eachEntry()) {
      const stream = await zip.openReadStreamPromise(entry);
      if (entry.fileName === 'manifest.json') {
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        manifestText = Buffer.concat(chunks).toString('utf8');
        continue;
      }
      entries.set(entry.fileName, await digest(stream));
    }
  } finally {
    zip.close();
  }
  const manifest = JSON.parse(manifestText) as {
    files: Array<{
      path: string;
      original_name: string;
      size: number;
      sha256: string;
      student_session_id: number;
    }>;
  };
  if (manifest.files.length !== seeded.length || entries.size !== seeded.length) {
    problems.push(
      `archive: ${entries.size} files, manifest ${manifest.files.length}, uploads ${seeded.length}`,
    );
  }
  for (const upload of seeded) {
    const listed = manifest.files.find(
      (file) => file.original_name === upload.name && file.student_session_id === upload.sessionId,
    );
    const entry = listed === undefined ? undefined : entries.get(listed.path);
    if (listed === undefined || entry === undefined) {
      problems.push(`archive: ${upload.name} of session ${upload.sessionId} is missing`);
      continue;
    }
    if (listed.size !== upload.size || listed.sha256 !== upload.sha256)
      problems.push(`manifest: ${listed.path} differs from its upload`);
    if (entry.size !== upload.size || entry.sha256 !== upload.sha256)
      problems.push(`archive: ${listed.path} differs from its upload`);
  }
  return problems;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB (${(bytes / MIB).toFixed(1)} MiB)`;
}

async function run(): Promise<BenchmarkReport> {
  if (process.platform !== 'linux') throw new Error('zip-memory samples /proc/<pid>/status: Linux only');
  const totalBytes = uploadMiB() * MIB;
  const sizes = uploadSizes(totalBytes);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-bench-zip-'));
  const databaseUrl = `sqlite:${path.join(dataDir, 'invigil.sqlite')}`;
  const env = serviceEnv(databaseUrl, dataDir, await freePort());
  const nextNonce = nonceSource();
  let worker: ChildProcess | undefined;
  let server: ServerChild | undefined;
  try {
    progress(`setting up in ${dataDir}`);
    const credentials = await createTeacher(env);
    server = await serveWithoutWorker(env);
    const baseUrl = server.url;
    const examId = await createExam(baseUrl, credentials, nextNonce, 'Zip memory exam');
    const sessionIds: number[] = [];
    for (let index = 0; index < SESSIONS; index += 1) {
      const answer = await signedCall(
        baseUrl,
        credentials,
        nextNonce,
        'POST',
        '/exams/:exam_id/student_sessions',
        {
          exam_id: String(examId),
          name: `Student ${index + 1}`,
          email: `student${index + 1}@example.org`,
        },
      );
      if (answer.status !== 201)
        throw new Error(`creating a session answered ${answer.status}: ${answer.text}`);
      sessionIds.push((JSON.parse(answer.text) as { student: { id: number } }).student.id);
    }
    progress(`storing ${sizes.length} uploads, ${mb(totalBytes)} of random bytes`);
    const seedStarted = performance.now();
    const seeded = await runSeeder(env, sessionIds, sizes);
    progress(`stored in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

    const spawned = spawn(INVIGIL, ['worker'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    worker = spawned;
    let workerLog = '';
    spawned.stderr?.on('data', (chunk: Buffer) => {
      workerLog = (workerLog + chunk.toString('utf8')).slice(-8000);
    });
    const pid = spawned.pid;
    if (pid === undefined) throw new Error('invigil worker did not start');
    const samples: Array<{ at: number; rss: number }> = [];
    const started = performance.now();
    const sampler = setInterval(() => {
      const memory = memoryOf(pid);
      if (memory !== undefined) samples.push({ at: performance.now() - started, rss: memory.rss });
    }, SAMPLE_MS);
    try {
      await delay(IDLE_MS);
      const idle = samples.map((sample) => sample.rss);
      if (idle.length === 0) throw new Error(`invigil worker exited at once:\n${workerLog}`);
      const idleRss = idle[idle.length - 1] ?? 0;

      const requested = performance.now();
      const generated = await signedCall(
        baseUrl,
        credentials,
        nextNonce,
        'PUT',
        '/exams/:id/generate_exam_documents_zip',
        {
          id: String(examId),
        },
      );
      if (generated.status !== 202)
        throw new Error(`generate answered ${generated.status}: ${generated.text}`);
      let runningAt: number | undefined;
      let status = '';
      while (status !== 'success') {
        if (spawned.exitCode !== null)
          throw new Error(`invigil worker exited (${spawned.exitCode}):\n${workerLog}`);
        if (performance.now() - requested > 30 * 60_000) throw new Error('the zip job took over 30 minutes');
        await delay(SAMPLE_MS);
        const answer = await signedCall(
          baseUrl,
          credentials,
          nextNonce,
          'GET',
          '/exams/:id/status_exam_documents_zip',
          {
            id: String(examId),
          },
        );
        status = (JSON.parse(answer.text) as { zip_job_status: string }).zip_job_status;
        if (status === 'failure' || status === 'not_found')
          throw new Error(`the zip job ended in ${status}:\n${workerLog}`);
        if (status === 'running' && runningAt === undefined) runningAt = performance.now();
      }
      const finished = performance.now();
      const peakHwm = memoryOf(pid)?.hwm ?? 0;
      clearInterval(sampler);
      const jobSamples = samples.filter((sample) => sample.at >= requested - started);
      const peakSampled = Math.max(...jobSamples.map((sample) => sample.rss));
      const seconds = (finished - (runningAt ?? requested)) / 1000;
      const uploaded = seeded.reduce((sum, file) => sum + file.size, 0);

      progress('downloading and checking the archive');
      const archiveFile = path.join(dataDir, 'downloaded.zip');
      const pathname = `/api/v3/exams/${examId}/download_exam_documents_zip`;
      const signed = signedParams(credentials, { id: String(examId) }, nextNonce());
      const download = await fetch(`${baseUrl}${pathname}?${new URLSearchParams(signed).toString()}`, {
        headers: v3Headers(credentials),
      });
      if (download.status !== 200 || download.body === null)
        throw new Error(`download answered ${download.status}`);
      await pipeline(Readable.fromWeb(download.body), fs.createWriteStream(archiveFile));
      const archiveBytes = fs.statSync(archiveFile).size;
      const problems = await checkArchive(archiveFile, seeded);
      const workerExit = await stopChild(spawned);
      if (workerExit !== 0) problems.push(`invigil worker exited with ${workerExit}`);

      const peak = Math.max(peakHwm, peakSampled);
      const targets: Target[] = [
        {
          name: 'peak RSS < 200 MB',
          met: peak < RSS_LIMIT_BYTES,
          measured: Number((peak / 1e6).toFixed(1)),
          limit: RSS_LIMIT_BYTES / 1e6,
        },
      ];
      return {
        lines: [
          `uploads            ${count(seeded.length)} files in ${SESSIONS} sessions, ${mb(uploaded)} (largest ${mb(Math.max(...sizes))})`,
          `archive            ${mb(archiveBytes)}, checked entry by entry against the uploads`,
          `idle worker RSS    ${mb(idleRss)}`,
          `peak RSS (sampled) ${mb(peakSampled)} over ${jobSamples.length} samples every ${SAMPLE_MS} ms`,
          `peak RSS (VmHWM)   ${mb(peakHwm)} (the kernel's high-water mark of the whole worker process)`,
          `zip job            ${seconds.toFixed(1)} s from running to success: ${(uploaded / MIB / seconds).toFixed(0)} MiB/s`,
        ],
        figures: {
          uploadBytes: uploaded,
          uploadFiles: seeded.length,
          sessions: SESSIONS,
          largestUploadBytes: Math.max(...sizes),
          archiveBytes,
          idleRssBytes: idleRss,
          peakSampledRssBytes: peakSampled,
          peakHwmBytes: peakHwm,
          jobSeconds: seconds,
          throughputMiBPerSecond: uploaded / MIB / seconds,
          samples: jobSamples.map((sample) => [Math.round(sample.at), sample.rss]),
        },
        targets,
        problems,
      };
    } finally {
      clearInterval(sampler);
    }
  } finally {
    if (worker !== undefined) await stopChild(worker);
    if (server !== undefined) await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export const zipMemory: Benchmark = {
  name: 'zip-memory',
  title: 'Peak RSS of `invigil worker` zipping an exam of 1 GB of uploads (SQLite, local disk)',
  run,
};

if (import.meta.main && process.argv[2] === 'seed') {
  const sessionIds = (process.argv[3] ?? '').split(',').map(Number);
  const sizes = (process.argv[4] ?? '').split(',').map(Number);
  await seed(sessionIds, sizes);
}
