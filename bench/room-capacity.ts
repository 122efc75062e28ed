/**
 * Room capacity (issue step 7, item 9; step 18): how many candidates one machine holds while each
 * sends a webcam stream and a screen stream at the default recording profile as 4-second chunks,
 * polls its view and reports events as the room page does, against `invigil serve --processes N`
 * on SQLite and on PostgreSQL, beside a bare node:http upload sink (bench/upload-sink.ts) measured
 * in the same run.
 *
 * For each server the number of candidates N is ramped, coarse then fine. A step passes when the
 * chunk acknowledgements' p99 is at most 1 s, no request failed, every produced chunk was
 * acknowledged, and afterwards every acknowledged chunk is found stored, in order, with the bytes
 * sent. The capacity is the largest N that passed. The load generator (bench/room-load.ts) runs in
 * its own process; see docs/performance.md for the method and the figures.
 */
import crypto from 'node:crypto';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as delay } from 'node:timers/promises';
import {
  type Benchmark,
  type BenchmarkReport,
  type BenchOptions,
  count,
  ROOT,
  type Target,
} from './benchmark.ts';
import { freePort, INVIGIL, NODE, type ServerChild, startServer } from './processes.ts';
import { createPrivateSchema } from './postgres-schema.ts';
import type { LoadPlan, LoadResult } from './room-load.ts';
import { HEADER_BYTES, isSealed, parseHeader, sealedSize } from '../src/storage/sealed.ts';
import { chunkPayload, PAYLOAD_SEEDS, sha256 } from './room-payload.ts';
import { createExam, createTeacher, serviceEnv } from './service.ts';
import { nonceSource } from './signed-client.ts';

/** The room page's rates (web/room/exam/recording.svelte.ts and web/room/state/room.svelte.ts): chunk length, poll interval. */
const CHUNK_MS = 4_000;
const POLL_MS = 20_000;
/** The page reports focus and full-screen changes as they happen; one a minute per candidate. */
const EVENT_MS = 60_000;
/**
 * One 4-second chunk of each stream at the room's default recording profile (`standard`, step 18):
 * webcam with sound at 120 kbit/s, screen at 60 kbit/s, the profile's nominal rates (docs/performance.md,
 * "Recording cost", for what the `recording-cost` benchmark measured them to be). Until step 18 these
 * were 150 000 and 250 000 bytes (300 and 500 kbit/s).
 */
const WEBCAM_BYTES = 60_000;
const SCREEN_BYTES = 30_000;

/** A step produces chunks this long (three per recorder), then waits at most GRACE_MS for the last. */
const STEP_MS = 12_000;
const GRACE_MS = 8_000;
const P99_LIMIT_MS = 1_000;
/**
 * Coarse steps double from here while they pass (up to MAX_CANDIDATES) or halve while they fail; then
 * FINE_STEPS halvings of the gap between the last pass and the first failure.
 */
const FIRST_STEP = 1_000;
const MAX_CANDIDATES = 8_000;
const FINE_STEPS = 3;
/**
 * Before the ramp, one step of FIRST_STEP candidates that does not count (BENCH_ROOM_WARMUP=0 leaves
 * it out): the first step after a server starts pays for its cold start (each serving process
 * reading every candidate's session and recordings for the first time, code not yet optimised) and
 * failed at sizes the same server held a minute later; a failed first step then capped the whole
 * ramp below it. A real exam's server has been up while its candidates arrived over minutes.
 */
const WARMUP = process.env.BENCH_ROOM_WARMUP !== '0';
/** Fine steps are rounded to this many candidates. */
const ROUNDING = 50;
/** The targets of the issue. */
const CANDIDATES_TARGET = 2_000;
const RATIO_TARGET = 0.6;

/**
 * For investigating one server: BENCH_ROOM_SUBJECTS (`sink,sqlite,postgres`, the default) picks the
 * servers, BENCH_ROOM_STEPS (`1000,1500`) replaces the ramp by fixed steps.
 */
const SUBJECTS = (process.env.BENCH_ROOM_SUBJECTS ?? 'sink,sqlite,postgres').split(',');
const FIXED_STEPS = (process.env.BENCH_ROOM_STEPS ?? '')
  .split(',')
  .filter((each) => each !== '')
  .map(Number);
/** A server that used less CPU than this in a second between steps has worked off its backlog. */
const SETTLED_CPU_MS = 100;
/** The V8 heap flags `bin/invigil` starts Invigil with; the sink gets the same. */
const SERVICE_NODE_FLAGS = ['--max-semi-space-size=16', '--initial-old-space-size=128'];
/** Load generator processes (BENCH_LOADERS, default 1); candidates are dealt between them. */
const LOADERS = Math.max(1, Number(process.env.BENCH_LOADERS ?? '1') || 1);
/**
 * Serving processes Invigil runs with (`invigil serve --processes N`; BENCH_INVIGIL_PROCESSES,
 * default one per core): the deployment the capacity target is judged on. The sink stays one
 * process, the yardstick it always was.
 */
const INVIGIL_PROCESSES = Math.max(
  1,
  Number(process.env.BENCH_INVIGIL_PROCESSES ?? String(os.availableParallelism())) || 1,
);

function progress(message: string): void {
  process.stderr.write(`  [room-capacity] ${message}\n`);
}

/** One ramp step's figures. */
interface Step {
  readonly candidates: number;
  /** A warm-up step: reported, never counted. */
  readonly warmUp: boolean;
  readonly passed: boolean;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly pollP99Ms: number;
  readonly chunksAcknowledged: number;
  readonly chunksUnsent: number;
  readonly lost: number;
  readonly failures: Record<string, number>;
  /** Acknowledged chunk bytes per second over the producing time. */
  readonly megabytesPerSecond: number;
  readonly timerLagMaxMs: number;
  /** The server process's CPU time (user + system) per acknowledged chunk, ms: noise-robust cost. */
  readonly serverCpuMsPerChunk: number;
  /**
   * The same for the server's main thread alone (the JavaScript): what caps the capacity, since the
   * thread pool's file work and the kernel's run beside it on the other core.
   */
  readonly serverMainCpuMsPerChunk: number;
  readonly problems: string[];
}

/** The fields of a /proc stat line after the command name (field 3 of the line is index 0). */
function statFields(file: string): string[] {
  return fs.readFileSync(file, 'utf8').split(') ')[1]?.split(' ') ?? [];
}

/** The processes whose parent is `pid` (a supervisor's serving processes), from /proc. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // ppid is field 4 of the line, 1 after the command name.
      if (Number(statFields(`/proc/${name}/stat`)[1]) === pid) children.push(Number(name));
    } catch {
      // ended meanwhile
    }
  }
  return children;
}

/**
 * CPU time (user + system, ms) a server has used so far, from /proc (Linux): its process and the
 * processes it forked (`serve --processes`); with `mainThread`, their main threads' only (the
 * JavaScript: each process's event loop).
 */
function cpuMs(pid: number, mainThread = false): number {
  let total = 0;
  for (const each of [pid, ...childrenOf(pid)]) {
    try {
      const fields = statFields(mainThread ? `/proc/${each}/task/${each}/stat` : `/proc/${each}/stat`);
      // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command name.
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      if (each === pid) return Number.NaN;
    }
  }
  return total;
}

/** A server under test: where it listens, and how to check what it stored. */
interface Subject {
  readonly label: string;
  readonly url: string;
  readonly pid: number;
  readonly checkAnswers: boolean;
  /** Per token, the [webcam, screen] sequences a candidate continues from (what is stored). */
  nextSequences(tokens: readonly string[]): Promise<[number, number][]>;
  /**
   * Checks every chunk acknowledged in a step is stored, in order, with the bytes sent. Returns how
   * many acknowledged chunks are missing, and descriptions of anything else wrong.
   */
  verify(tokens: readonly string[], result: LoadResult): Promise<{ lost: number; problems: string[] }>;
  stop(): Promise<void>;
}

function percentile(sorted: readonly number[], share: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] ?? 0;
}

const EXPECTED_SHA = {
  recording: sha256(chunkPayload(WEBCAM_BYTES, PAYLOAD_SEEDS.webcam)),
  screen_recording: sha256(chunkPayload(SCREEN_BYTES, PAYLOAD_SEEDS.screen)),
} as const;

/** Runs the load generators for one step. Returns their results merged. */
async function runLoad(
  url: string,
  tokens: readonly string[],
  next: readonly [number, number][],
  checkAnswers: boolean,
  workDir: string,
): Promise<LoadResult> {
  const slices = Array.from({ length: LOADERS }, (_, loader) =>
    tokens.map((token, index) => ({ token, index })).filter(({ index }) => index % LOADERS === loader),
  );
  const results = await Promise.all(
    slices.map(async (slice, loader) => {
      const planFile = path.join(workDir, `plan-${loader}.json`);
      const resultFile = path.join(workDir, `result-${loader}.json`);
      const plan: LoadPlan = {
        url,
        tokens: slice.map(({ token }) => token),
        nextSequences: slice.map(({ index }) => next[index] ?? [0, 0]),
        durationMs: STEP_MS,
        graceMs: GRACE_MS,
        chunkMs: CHUNK_MS,
        pollMs: POLL_MS,
        eventMs: EVENT_MS,
        webcamBytes: WEBCAM_BYTES,
        screenBytes: SCREEN_BYTES,
        checkAnswers,
      };
      fs.writeFileSync(planFile, JSON.stringify(plan));
      const child = spawn(NODE, [path.join(ROOT, 'bench', 'room-load.ts'), planFile, resultFile], {
        cwd: ROOT,
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      if (code !== 0) throw new Error(`the load generator exited with ${code}`);
      return { slice, result: JSON.parse(fs.readFileSync(resultFile, 'utf8')) as LoadResult };
    }),
  );
  // Merged back into the order of `tokens`.
  const merged: LoadResult = {
    chunkLatencies: [],
    pollLatencies: [],
    eventLatencies: [],
    chunksProduced: 0,
    chunksAcknowledged: 0,
    chunksUnsent: 0,
    bytesAcknowledged: 0,
    failures: {},
    acknowledged: tokens.map(() => [[], []]),
    timerLagMaxMs: 0,
    elapsedMs: 0,
  };
  for (const { slice, result } of results) {
    merged.chunkLatencies.push(...result.chunkLatencies);
    merged.pollLatencies.push(...result.pollLatencies);
    merged.eventLatencies.push(...result.eventLatencies);
    Object.assign(merged, {
      chunksProduced: merged.chunksProduced + result.chunksProduced,
      chunksAcknowledged: merged.chunksAcknowledged + result.chunksAcknowledged,
      chunksUnsent: merged.chunksUnsent + result.chunksUnsent,
      bytesAcknowledged: merged.bytesAcknowledged + result.bytesAcknowledged,
      timerLagMaxMs: Math.max(merged.timerLagMaxMs, result.timerLagMaxMs),
      elapsedMs: Math.max(merged.elapsedMs, result.elapsedMs),
    });
    for (const [what, times] of Object.entries(result.failures)) {
      merged.failures[what] = (merged.failures[what] ?? 0) + times;
    }
    slice.forEach(({ index }, position) => {
      const acknowledged = result.acknowledged[position];
      if (acknowledged !== undefined) merged.acknowledged[index] = acknowledged;
    });
  }
  return merged;
}

/** Runs one step of `candidates` against a subject. Returns its figures. */
async function step(
  subject: Subject,
  tokens: readonly string[],
  workDir: string,
  warmUp = false,
): Promise<Step> {
  // A server still working off an earlier step's backlog would move the sequences under the step
  // (chunks whose senders gave up are stored and recorded later; the recorders would then resend
  // them, answered 200). So the step waits until the stored sequences stayed the same for a second
  // and the server was idle in it (its CPU time grew by less than SETTLED_CPU_MS).
  let next = await subject.nextSequences(tokens);
  for (let round = 0; round < 60; round += 1) {
    const cpuAtStart = cpuMs(subject.pid);
    await delay(1_000);
    const again = await subject.nextSequences(tokens);
    const idle = cpuMs(subject.pid) - cpuAtStart < SETTLED_CPU_MS;
    if (idle && JSON.stringify(again) === JSON.stringify(next)) break;
    next = again;
  }
  const cpuBefore = cpuMs(subject.pid);
  const mainCpuBefore = cpuMs(subject.pid, true);
  const result = await runLoad(subject.url, tokens, next, subject.checkAnswers, workDir);
  const cpuUsed = cpuMs(subject.pid) - cpuBefore;
  const mainCpuUsed = cpuMs(subject.pid, true) - mainCpuBefore;
  const { lost, problems } = await subject.verify(tokens, result);
  const sorted = [...result.chunkLatencies].sort((a, b) => a - b);
  const polls = [...result.pollLatencies].sort((a, b) => a - b);
  const failed = Object.values(result.failures).reduce((sum, times) => sum + times, 0);
  const p99Ms = Math.round(percentile(sorted, 0.99));
  const figures: Step = {
    candidates: tokens.length,
    warmUp,
    passed:
      p99Ms <= P99_LIMIT_MS &&
      failed === 0 &&
      result.chunksUnsent === 0 &&
      lost === 0 &&
      problems.length === 0,
    p50Ms: Math.round(percentile(sorted, 0.5)),
    p99Ms,
    maxMs: Math.round(sorted[sorted.length - 1] ?? 0),
    pollP99Ms: Math.round(percentile(polls, 0.99)),
    chunksAcknowledged: result.chunksAcknowledged,
    chunksUnsent: result.chunksUnsent,
    lost,
    failures: result.failures,
    megabytesPerSecond: Number((result.bytesAcknowledged / 1e6 / (STEP_MS / 1000)).toFixed(1)),
    timerLagMaxMs: Math.round(result.timerLagMaxMs),
    serverCpuMsPerChunk: Number((cpuUsed / Math.max(1, result.chunksAcknowledged)).toFixed(2)),
    serverMainCpuMsPerChunk: Number((mainCpuUsed / Math.max(1, result.chunksAcknowledged)).toFixed(2)),
    problems,
  };
  progress(
    `${subject.label}: ${count(tokens.length)} candidates${warmUp ? ' (warm-up, not counted)' : ''} → ${figures.passed ? 'pass' : 'FAIL'}: ` +
      `p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, max ${figures.maxMs} ms, ` +
      `${figures.megabytesPerSecond} MB/s, ${figures.chunksAcknowledged} chunks, ${figures.chunksUnsent} unsent, ` +
      `server CPU ${figures.serverCpuMsPerChunk} ms/chunk (main thread ${figures.serverMainCpuMsPerChunk}), load generator lag ${figures.timerLagMaxMs} ms, ` +
      `${lost} lost, failures ${JSON.stringify(result.failures)}${problems.length > 0 ? `, ${problems.join('; ')}` : ''}`,
  );
  return figures;
}

/** Coarse doubling, then halving the gap between the last pass and the first failure. */
async function ramp(
  subject: Subject,
  tokens: readonly string[],
  workDir: string,
): Promise<{ capacity: number; steps: Step[] }> {
  const steps: Step[] = [];
  if (FIXED_STEPS.length > 0) {
    let best = 0;
    for (const candidates of FIXED_STEPS) {
      const result = await step(subject, tokens.slice(0, candidates), workDir);
      steps.push(result);
      if (result.passed) best = Math.max(best, candidates);
      await delay(2_000);
    }
    return { capacity: best, steps };
  }
  if (WARMUP) {
    steps.push(await step(subject, tokens.slice(0, FIRST_STEP), workDir, true));
    await delay(2_000);
  }
  let passed = 0;
  let failed = Math.min(tokens.length, MAX_CANDIDATES) + 1;
  // Coarse: doubling from FIRST_STEP while steps pass, or halving while they fail.
  for (let candidates = FIRST_STEP; candidates >= ROUNDING && candidates < failed;) {
    const result = await step(subject, tokens.slice(0, candidates), workDir);
    steps.push(result);
    await delay(2_000);
    if (result.passed) {
      passed = candidates;
      if (failed <= tokens.length) break;
      candidates *= 2;
    } else {
      failed = candidates;
      if (passed > 0) break;
      candidates = Math.round(candidates / 2 / ROUNDING) * ROUNDING;
    }
  }
  for (let fine = 0; fine < FINE_STEPS && failed <= tokens.length; fine += 1) {
    const candidates = Math.round((passed + failed) / 2 / ROUNDING) * ROUNDING;
    if (candidates <= passed || candidates >= failed) break;
    const result = await step(subject, tokens.slice(0, candidates), workDir);
    steps.push(result);
    if (result.passed) passed = candidates;
    else failed = candidates;
    await delay(2_000);
  }
  return { capacity: passed, steps };
}

/** Counts of stored chunks per session and kind, the way both databases answer them. */
interface StoredRow {
  token: string;
  kind: string;
  chunks: number;
  highest: number;
}

/** A database the service runs on, seen from the benchmark (sessions in, stored chunks out). */
interface BenchDatabase {
  readonly label: string;
  readonly url: string;
  insertSessions(examId: number, tokens: readonly string[], now: number): Promise<void>;
  storedChunks(): Promise<StoredRow[]>;
  /** Stored chunk files with an id above `afterId`. */
  files(afterId: number): Promise<{ id: number; key: string; size: number; sha256: string; kind: string }[]>;
  close(): Promise<void>;
}

const STORED_SQL = `
  select s.token as token, f.kind as kind, count(*) as chunks, max(f.sequence) as highest
  from session_files f join student_sessions s on s.id = f.student_session_id
  group by s.token, f.kind`;
const FILES_SQL = `
  select files.id as id, files.storage_key as key, files.size as size, files.sha256 as sha256, f.kind as kind
  from session_files f join files on files.id = f.file_id where files.id > $1 order by files.id`;
const SESSION_INSERT = `
  insert into student_sessions (exam_id, name, email, status, token, pin_code, start_time,
    recording_started_at, entered_room, created_at, updated_at)
  values ($1, $2, $3, 'exam_started', $4, $5, $6, $6, $7, $6, $6)`;

function sqliteDatabase(file: string): BenchDatabase {
  let db: DatabaseSync | undefined;
  const open = () => {
    db ??= new DatabaseSync(file);
    db.exec('pragma busy_timeout = 10000');
    return db;
  };
  return {
    label: 'SQLite',
    url: `sqlite:${file}`,
    insertSessions(examId, tokens, now) {
      const database = open();
      const insert = database.prepare(SESSION_INSERT.replace(/\$\d/g, (m) => `?${m.slice(1)}`));
      database.exec('begin');
      tokens.forEach((token, index) =>
        insert.run(examId, `Candidate ${index}`, `c${index}@example.org`, token, 100000 + index, now, 1),
      );
      database.exec('commit');
      return Promise.resolve();
    },
    storedChunks() {
      return Promise.resolve(open().prepare(STORED_SQL).all() as unknown as StoredRow[]);
    },
    files(afterId) {
      return Promise.resolve(
        open().prepare(FILES_SQL.replace('$1', '?')).all(afterId) as unknown as {
          id: number;
          key: string;
          size: number;
          sha256: string;
          kind: string;
        }[],
      );
    },
    close() {
      db?.close();
      return Promise.resolve();
    },
  };
}

async function postgresDatabase(): Promise<BenchDatabase> {
  const { url, client, drop } = await createPrivateSchema();
  return {
    label: 'PostgreSQL',
    url,
    async insertSessions(examId, tokens, now) {
      await client.query('begin');
      for (const [index, token] of tokens.entries()) {
        await client.query(SESSION_INSERT, [
          examId,
          `Candidate ${index}`,
          `c${index}@example.org`,
          token,
          100000 + index,
          now,
          true,
        ]);
      }
      await client.query('commit');
    },
    async storedChunks() {
      const rows = await client.query<{ token: string; kind: string; chunks: string; highest: number }>(
        STORED_SQL,
      );
      return rows.rows.map((row) => ({ ...row, chunks: Number(row.chunks), highest: Number(row.highest) }));
    },
    async files(afterId) {
      const rows = await client.query<{
        id: number;
        key: string;
        size: string;
        sha256: string;
        kind: string;
      }>(FILES_SQL, [afterId]);
      return rows.rows.map((row) => ({ ...row, size: Number(row.size) }));
    },
    close: drop,
  };
}

/** Starts `invigil serve` on a database, with an exam and `candidates` started sessions. */
async function invigilSubject(
  options: BenchOptions,
  database: BenchDatabase,
  dataDir: string,
  tokens: readonly string[],
): Promise<Subject> {
  const port = await freePort();
  const env = serviceEnv(database.url, dataDir, port);
  progress(`${database.label}: creating an institute and a teacher`);
  const credentials = await createTeacher(env);
  const serveEnv: NodeJS.ProcessEnv = { ...env };
  if (options.profileDir !== undefined) {
    fs.mkdirSync(options.profileDir, { recursive: true });
    serveEnv.NODE_OPTIONS =
      `${env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${options.profileDir}`.trim();
  }
  progress(`${database.label}: starting invigil serve --processes ${INVIGIL_PROCESSES}`);
  const server: ServerChild = await startServer({
    label: `invigil serve (${database.label})`,
    command: INVIGIL,
    args: ['serve', '--processes', String(INVIGIL_PROCESSES)],
    env: serveEnv,
    port,
    readyPath: '/healthz',
  });
  try {
    const examId = await createExam(server.url, credentials, nonceSource(), 'Capacity exam');
    await database.insertSessions(examId, tokens, Date.now());
    const view = await fetch(`${server.url}/api/room/${tokens[0]}`);
    if (view.status !== 200)
      throw new Error(`GET /api/room/<token> answered ${view.status}: ${await view.text()}`);
    await view.arrayBuffer();
  } catch (error) {
    await server.stop();
    throw error;
  }
  let lastFileId = 0;
  const kinds = ['recording', 'screen_recording'] as const;
  return {
    label: `invigil (${database.label})`,
    url: server.url,
    pid: server.pid,
    checkAnswers: true,
    async nextSequences(asked) {
      const stored = new Map(
        (await database.storedChunks()).map((row) => [`${row.token}:${row.kind}`, row.chunks]),
      );
      return asked.map((token) => [
        stored.get(`${token}:recording`) ?? 0,
        stored.get(`${token}:screen_recording`) ?? 0,
      ]);
    },
    async verify(asked, result) {
      const problems: string[] = [];
      const stored = new Map((await database.storedChunks()).map((row) => [`${row.token}:${row.kind}`, row]));
      let lost = 0;
      for (const [index, token] of asked.entries()) {
        for (const [position, kind] of kinds.entries()) {
          const row = stored.get(`${token}:${kind}`);
          const chunks = row?.chunks ?? 0;
          if (row !== undefined && row.highest !== chunks - 1) problems.push(`${kind} of ${token} has gaps`);
          const acknowledged = result.acknowledged[index]?.[position] ?? [];
          lost += acknowledged.filter((sequence) => sequence >= chunks).length;
        }
      }
      const files = await database.files(lastFileId);
      let unreadable = 0;
      for (const file of files) {
        lastFileId = Math.max(lastFileId, file.id);
        const expected = EXPECTED_SHA[file.kind as keyof typeof EXPECTED_SHA];
        let size = -1;
        let storedSize = file.size;
        try {
          const where = path.join(dataDir, 'files', file.key);
          size = fs.statSync(where).size;
          // Stored encrypted (docs/storage.md, "Encryption at rest"): the sealed size of the bytes sent.
          const head = Buffer.alloc(HEADER_BYTES);
          const handle = fs.openSync(where, 'r');
          fs.readSync(handle, head, 0, HEADER_BYTES, 0);
          fs.closeSync(handle);
          if (isSealed(head)) storedSize = sealedSize(file.size, parseHeader(head).segmentBytes);
        } catch {
          // missing or unreadable: counted below
        }
        if (file.sha256 !== expected || size !== storedSize) unreadable += 1;
      }
      if (unreadable > 0) problems.push(`${unreadable} stored chunks missing on disk or not the bytes sent`);
      return { lost, problems };
    },
    async stop() {
      await server.stop();
    },
  };
}

/** Starts the bare sink. */
async function sinkSubject(dataDir: string): Promise<Subject> {
  const launcher = fs.readFileSync(INVIGIL, 'utf8');
  for (const flag of SERVICE_NODE_FLAGS) {
    if (!launcher.includes(flag))
      throw new Error(`bin/invigil no longer passes ${flag}: update SERVICE_NODE_FLAGS`);
  }
  const port = await freePort();
  const directory = path.join(dataDir, 'sink');
  const server = await startServer({
    label: 'node:http upload sink',
    command: NODE,
    // The V8 heap flags bin/invigil runs the service with, so the two differ in their work only.
    args: [...SERVICE_NODE_FLAGS, path.join(ROOT, 'bench', 'upload-sink.ts')],
    env: {
      ...process.env,
      SINK_PORT: String(port),
      SINK_DIR: directory,
      SINK_VIEW: JSON.stringify({ session: { status: 'exam_started', padding: 'x'.repeat(1500) } }),
    },
    port,
    readyPath: '/',
  });
  const sent = new Map<string, number>();
  return {
    label: 'node:http sink',
    url: server.url,
    pid: server.pid,
    checkAnswers: false,
    nextSequences(asked) {
      return Promise.resolve(asked.map(() => [1, 1]));
    },
    verify(asked, result) {
      const onDisk = new Map<string, number>();
      let wrongSize = 0;
      for (const name of fs.readdirSync(directory)) {
        if (name === '.tmp') continue;
        const token = name.slice(0, name.lastIndexOf('-'));
        onDisk.set(token, (onDisk.get(token) ?? 0) + 1);
        const size = fs.statSync(path.join(directory, name)).size;
        if (
          size < Math.min(WEBCAM_BYTES, SCREEN_BYTES) ||
          size > Math.max(WEBCAM_BYTES, SCREEN_BYTES) + 1_000
        )
          wrongSize += 1;
      }
      let lost = 0;
      for (const [index, token] of asked.entries()) {
        const acknowledged = result.acknowledged[index] ?? [[], []];
        const total = (sent.get(token) ?? 0) + acknowledged[0].length + acknowledged[1].length;
        sent.set(token, total);
        lost += Math.max(0, total - (onDisk.get(token) ?? 0));
      }
      return Promise.resolve({
        lost,
        problems: wrongSize > 0 ? [`${wrongSize} chunk files of the wrong size`] : [],
      });
    },
    async stop() {
      await server.stop();
    },
  };
}

async function run(options: BenchOptions): Promise<BenchmarkReport> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-capacity-'));
  const tokens = Array.from({ length: MAX_CANDIDATES }, () => crypto.randomBytes(16).toString('hex'));
  const ramps: Record<string, { capacity: number; steps: Step[] }> = {};
  const problems: string[] = [];
  try {
    const subjects: [string, () => Promise<{ subject: Subject; close: () => Promise<void> }>][] = [
      [
        'sink',
        async () => {
          const subject = await sinkSubject(workDir);
          return { subject, close: () => subject.stop() };
        },
      ],
      [
        'sqlite',
        async () => {
          const dataDir = path.join(workDir, 'sqlite');
          fs.mkdirSync(dataDir);
          const database = sqliteDatabase(path.join(dataDir, 'invigil.sqlite'));
          const subject = await invigilSubject(options, database, dataDir, tokens);
          return { subject, close: async () => (await subject.stop(), await database.close()) };
        },
      ],
      [
        'postgres',
        async () => {
          const dataDir = path.join(workDir, 'postgres');
          fs.mkdirSync(dataDir);
          const database = await postgresDatabase();
          try {
            const subject = await invigilSubject(options, database, dataDir, tokens);
            return { subject, close: async () => (await subject.stop(), await database.close()) };
          } catch (error) {
            await database.close();
            throw error;
          }
        },
      ],
    ];
    for (const [name, start] of subjects) {
      if (!SUBJECTS.includes(name)) continue;
      const { subject, close } = await start();
      try {
        progress(`${subject.label}: ramping`);
        ramps[subject.label] = await ramp(subject, tokens, workDir);
      } finally {
        await close();
      }
    }
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }

  const sink = ramps['node:http sink']?.capacity ?? 0;
  const lines: string[] = [];
  const targets: Target[] = [];
  lines.push(
    `per candidate: a ${count(WEBCAM_BYTES)}-byte webcam and a ${count(SCREEN_BYTES)}-byte screen chunk every ${CHUNK_MS / 1000} s; ` +
      `Invigil serving from ${INVIGIL_PROCESSES} process${INVIGIL_PROCESSES === 1 ? '' : 'es'}, the sink from one`,
  );
  for (const [label, { capacity, steps }] of Object.entries(ramps)) {
    const best = steps.find((each) => !each.warmUp && each.candidates === capacity);
    lines.push(
      `${label.padEnd(22)} ${count(capacity).padStart(6)} candidates` +
        (label.startsWith('invigil') && sink > 0
          ? `  ratio ${(capacity / sink).toFixed(2)} of the sink`
          : '') +
        (best === undefined
          ? ''
          : `  (p99 ${best.p99Ms} ms, ${best.megabytesPerSecond} MB/s, server CPU per chunk ` +
            `${best.serverCpuMsPerChunk} ms in all, ${best.serverMainCpuMsPerChunk} ms on main threads)`),
    );
    for (const each of steps) {
      lines.push(
        `    ${count(each.candidates).padStart(6)}: ${each.warmUp ? 'warm-up, ' : ''}${each.passed ? 'pass' : 'FAIL'}  p50 ${each.p50Ms} ms  p99 ${each.p99Ms} ms  ` +
          `max ${each.maxMs} ms  ${each.megabytesPerSecond} MB/s  CPU ${each.serverCpuMsPerChunk} ms/chunk (main ${each.serverMainCpuMsPerChunk})  ` +
          `lost ${each.lost}  unsent ${each.chunksUnsent}  ` +
          `failures ${Object.values(each.failures).reduce((a, b) => a + b, 0)}`,
      );
    }
    if (!label.startsWith('invigil')) continue;
    targets.push(
      {
        name: `${label} ≥ ${CANDIDATES_TARGET}`,
        met: capacity >= CANDIDATES_TARGET,
        measured: capacity,
        limit: CANDIDATES_TARGET,
      },
      {
        name: `${label} ≥ ${RATIO_TARGET} of sink`,
        met: sink > 0 && capacity / sink >= RATIO_TARGET,
        measured: sink > 0 ? Number((capacity / sink).toFixed(2)) : 0,
        limit: RATIO_TARGET,
      },
    );
  }
  if (options.profileDir !== undefined)
    lines.push('(profiled run: the CPU profiler slows Invigil; not a figure to quote)');
  return {
    lines,
    figures: {
      ramps,
      sinkCapacity: sink,
      loaders: LOADERS,
      invigilProcesses: INVIGIL_PROCESSES,
      webcamBytes: WEBCAM_BYTES,
      screenBytes: SCREEN_BYTES,
    },
    targets,
    problems,
  };
}

export const roomCapacity: Benchmark = {
  name: 'room-capacity',
  title:
    'Candidates one machine holds: webcam and screen chunks, polls and events, beside a bare upload sink',
  run,
};
