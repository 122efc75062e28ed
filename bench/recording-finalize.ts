/**
 * Recording finalisation (issue step 9): a two-hour recording, two streams of 1,800 four-second
 * chunks each, assembled by the `recording.finalize` job's code into one seekable WebM per stream.
 * Reported: wall time as a ratio to copying the same bytes through the same storage in the same run,
 * the peak resident set size of the process that assembles the recording (the child process the
 * job starts per stream, target < 150 MB), the worker's own peak beside it, and playback in Chromium.
 *
 * 1. A temporary DATA_DIR on SQLite (`createCore`, local storage); an institute, a teacher, an exam
 *    and one finished session through the services.
 * 2. The chunks are synthesised from the real Chromium recordings in test/fixtures/recordings: the
 *    fixture's clusters are repeated with their Cluster timecodes moved on, so the stream is one
 *    continuous MediaRecorder stream of two hours (camera: VP8 + Opus, screen: VP8), cut into 4 s
 *    chunks at the bytes where each 4 s starts (so chunks end inside blocks, as the room's do) and
 *    stored as the session's `recording` / `screen_recording` files with arrival times 4 s apart.
 *    One reload is simulated half way: the stream starts again with its EBML header, 30 s later.
 * 3. A child process copies every chunk's bytes into one new stored object per stream (read from
 *    the storage, written with Storage.put): the baseline. Another child runs
 *    services.recordings.finalize on the session (the worker's part), which starts one assembling
 *    child per stream (finalize-child.ts). Each reports its wall time and VmHWM; the assembling
 *    children's VmHWM comes from the service's 'recording finalised' log lines. Both bench children
 *    are started with the Node flags bin/invigil uses.
 * 4. The service listens (createApp) and headless Chromium plays the finalised webcam file from its
 *    expiring address (byte ranges): time to the first frame (< 1 s) and seek latency (< 300 ms).
 *
 * BENCH_RECORDING_CHUNKS sets the chunks per stream (default 1800). Figures: docs/performance.md.
 */
import { instituteOfSession } from '../src/domain/data-keys/data-keys.repository.ts';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { type Benchmark, type BenchmarkReport, ROOT, type Target } from './benchmark.ts';
import { freePort, NODE } from './processes.ts';

const RSS_LIMIT_BYTES = 150 * 1000 * 1000;
/** Chunks per stream: 1 800 (two hours), or BENCH_RECORDING_CHUNKS (an even number, at least 10). */
const CHUNKS_PER_STREAM = chunksPerStream(process.env.BENCH_RECORDING_CHUNKS);

function chunksPerStream(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 1800;
  if (!/^\d+$/.test(raw) || Number(raw) < 10 || Number(raw) % 2 !== 0) {
    throw new Error(`BENCH_RECORDING_CHUNKS must be an even whole number ≥ 10, got "${raw}"`);
  }
  return Number(raw);
}
const CHUNK_MS = 4000;
const RELOAD_GAP_MS = 30_000;
const THIS_FILE = path.join(ROOT, 'bench', 'recording-finalize.ts');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'recordings');

function progress(message: string): void {
  process.stderr.write(`  [recording-finalize] ${message}\n`);
}

/** The fixture recorder's stream: its header bytes and its clusters (timecode, body after the Timecode). */
interface Parsed {
  readonly header: Buffer;
  readonly clusters: { timecode: number; body: Buffer }[];
  /** Milliseconds one pass of the clusters lasts. */
  readonly period: number;
}

const CLUSTER = Buffer.from([0x1f, 0x43, 0xb6, 0x75]);

/** Splits a MediaRecorder stream (unknown-size Segment and Clusters) into its header and clusters. */
function parseFixture(prefix: string): Parsed {
  const names = fs.readdirSync(FIXTURES).filter((name) => name.startsWith(`${prefix}-`));
  names.sort((a, b) => Number(/(\d+)\.webm$/.exec(a)?.[1]) - Number(/(\d+)\.webm$/.exec(b)?.[1]));
  const bytes = Buffer.concat(names.map((name) => fs.readFileSync(path.join(FIXTURES, name))));
  const starts: number[] = [];
  for (let at = bytes.indexOf(CLUSTER); at !== -1; at = bytes.indexOf(CLUSTER, at + 4)) {
    // An unknown-size cluster (8-byte size of all ones) followed by its Timecode.
    if (bytes[at + 4] === 0x01 && bytes[at + 12] === 0xe7) starts.push(at);
  }
  const header = bytes.subarray(0, starts[0]);
  const clusters = starts.map((start, index) => {
    const end = starts[index + 1] ?? bytes.length;
    const sizeLength = (bytes[start + 13] ?? 0x81) & 0x7f;
    const timecode = bytes.readUIntBE(start + 14, sizeLength);
    return { timecode, body: bytes.subarray(start + 14 + sizeLength, end) };
  });
  const last = clusters.at(-1)?.timecode ?? 0;
  // The last cluster holds at most a couple of seconds; a pass lasts until the next would start.
  const period = Math.ceil((last + 2000) / 1000) * 1000;
  return { header, clusters, period };
}

/** A Cluster (unknown size) with a 4-byte Timecode. */
function clusterHead(timecode: number): Buffer {
  const head = Buffer.alloc(4 + 8 + 2 + 4);
  CLUSTER.copy(head, 0);
  head.writeUInt8(0x01, 4);
  head.fill(0xff, 5, 12);
  head.writeUInt8(0xe7, 12);
  head.writeUInt8(0x84, 13);
  head.writeUInt32BE(timecode, 14);
  return head;
}

/**
 * The chunks of one recorder lasting `count` chunks: the fixture's clusters repeated with moved
 * timecodes, cut every CHUNK_MS of media time (inside a cluster's bytes, proportionally). Yields
 * each chunk's bytes.
 */
function* recorderChunks(parsed: Parsed, count: number): Generator<Buffer> {
  let pending: Buffer[] = [parsed.header];
  let pendingBytes = parsed.header.length;
  let emitted = 0;
  for (let pass = 0; emitted < count; pass += 1) {
    for (const cluster of parsed.clusters) {
      const timecode = pass * parsed.period + cluster.timecode;
      const piece = Buffer.concat([clusterHead(timecode), cluster.body]);
      // A chunk boundary inside this cluster: cut in its middle, as MediaRecorder's chunks cut blocks.
      if (timecode >= (emitted + 1) * CHUNK_MS) {
        const middle = Math.floor(piece.length / 2);
        pending.push(piece.subarray(0, middle));
        yield Buffer.concat(pending);
        emitted += 1;
        if (emitted >= count) return;
        pending = [piece.subarray(middle)];
        pendingBytes = piece.length - middle;
        continue;
      }
      pending.push(piece);
      pendingBytes += piece.length;
    }
  }
  if (pendingBytes > 0 && emitted < count) yield Buffer.concat(pending);
}

/** The environment of the service over the benchmark's DATA_DIR. */
function envOf(dataDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: `sqlite://${path.join(dataDir, 'invigil.sqlite')}`,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    INVIGIL_SECRET: 'recording-finalize-benchmark-secret-0123456789',
  };
}

/** Seeds the session and its chunks (this process). Returns the session id and the bytes stored. */
export async function seed(dataDir: string): Promise<{ sessionId: number; bytes: number }> {
  const { createCore } = await import('../src/app.ts');
  const { loadConfig } = await import('../src/config/config.ts');
  const { insertFile } = await import('../src/domain/files/files.repository.ts');
  const core = await createCore(loadConfig(envOf(dataDir)));
  try {
    const { services, database } = core;
    const institute = await services.institutes.create({ name: 'Bench', short_name: 'B' });
    const { user } = await services.users.create(institute.id, {
      email: 'teacher@example.org',
      name: 'Teacher',
      role: 'teacher',
    });
    const actor = { id: user.id, instituteId: institute.id, role: user.role };
    const exam = await services.exams.create(actor, {
      name: 'Two hours',
      type: 'record_review',
      duration_minutes: 150,
    });
    const session = await services.studentSessions.create(actor, exam.id, {
      name: 'Candidate',
      email: 'candidate@example.org',
    });
    const startedAt = Date.now() - 3 * 3600_000;
    const storage = (await import('../src/storage/index.ts')).createStorage(core.config, services.dataKeys);
    const store = await storage;
    let bytes = 0;
    for (const [kind, prefix] of [
      ['recording', 'camera-a'],
      ['screen_recording', 'screen-a'],
    ] as const) {
      const parsed = parseFixture(prefix);
      const half = CHUNKS_PER_STREAM / 2;
      let sequence = 0;
      // Two recorders (a reload half way), RELOAD_GAP_MS apart.
      for (const [recorder, first] of [
        [0, 0],
        [1, half * CHUNK_MS + RELOAD_GAP_MS],
      ] as const) {
        let index = 0;
        for (const chunk of recorderChunks(parsed, half)) {
          const stored =
            store.putBytes === undefined
              ? await store.put(Readable.from([chunk]), { institute: institute.id })
              : await store.putBytes([chunk], institute.id);
          const file = await insertFile(database.db, {
            storageKey: stored.key,
            originalName: `${kind}-${sequence}.webm`,
            contentType: 'video/webm',
            size: stored.size,
            sha256: stored.sha256,
            createdAt: startedAt,
          });
          await database.db
            .insertInto('session_files')
            .values({
              student_session_id: session.id,
              kind,
              file_id: file.id,
              sequence,
              created_at: startedAt + first + (index + 1) * CHUNK_MS + 150,
            })
            .execute();
          bytes += chunk.length;
          sequence += 1;
          index += 1;
        }
        progress(`${kind}: recorder ${recorder + 1} stored (${sequence} chunks)`);
      }
    }
    const endedAt = startedAt + CHUNKS_PER_STREAM * CHUNK_MS + RELOAD_GAP_MS + 2000;
    await database.db
      .updateTable('student_sessions')
      .set({
        status: 'exam_finished',
        start_time: startedAt,
        recording_started_at: startedAt,
        end_time: endedAt,
        recording_ended_at: endedAt,
      })
      .where('id', '=', session.id)
      .execute();
    return { sessionId: session.id, bytes };
  } finally {
    await core.close();
  }
}

/** VmHWM (the kernel's high-water mark) or VmRSS of this process, in bytes. */
function rssOf(field: 'VmHWM' | 'VmRSS'): number {
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1];
  return kb === undefined ? process.memoryUsage().rss : Number(kb) * 1024;
}

/** A child's work: `copy` (the baseline) or `finalize`; prints {ms, peakRss, ...} as JSON. */
async function child(mode: string, dataDir: string, sessionId: number): Promise<void> {
  const { createCore } = await import('../src/app.ts');
  const { loadConfig } = await import('../src/config/config.ts');
  // Info, so the service's 'recording finalised' lines (with the assembler's peak) are logged.
  const core = await createCore(loadConfig({ ...envOf(dataDir), LOG_LEVEL: 'info' }));
  try {
    const idleRss = rssOf('VmHWM');
    const started = performance.now();
    if (mode === 'copy') {
      const store = await (
        await import('../src/storage/index.ts')
      ).createStorage(core.config, core.services.dataKeys);
      const institute = (await instituteOfSession(core.database.db, sessionId)) ?? 0;
      for (const kind of ['recording', 'screen_recording']) {
        const rows = await core.database.db
          .selectFrom('session_files')
          .innerJoin('files', 'files.id', 'session_files.file_id')
          .select('files.storage_key')
          .where('session_files.student_session_id', '=', sessionId)
          .where('session_files.kind', '=', kind)
          .orderBy('session_files.sequence')
          .execute();
        async function* all(): AsyncGenerator<Buffer> {
          for (const row of rows)
            for await (const piece of await store.get(row.storage_key)) yield piece as Buffer;
        }
        const copied = await store.put(Readable.from(all()), { institute });
        await store.delete(copied.key);
      }
    } else {
      const controller = new AbortController();
      await core.services.recordings.finalize(sessionId, {
        jobId: 0,
        attempt: 1,
        signal: controller.signal,
        progress: () => Promise.resolve(),
      });
    }
    const ms = performance.now() - started;
    const recordings = await core.database.db
      .selectFrom('recordings')
      .select(['source', 'status', 'duration_seconds', 'size', 'gaps'])
      .where('student_session_id', '=', sessionId)
      .execute();
    process.stdout.write(`${JSON.stringify({ ms, idleRss, peakRss: rssOf('VmHWM'), recordings })}\n`);
  } finally {
    await core.close();
  }
}

/** What a child reports. */
interface ChildReport {
  readonly ms: number;
  /** The high-water mark once the service is built, before the work. */
  readonly idleRss: number;
  readonly peakRss: number;
  readonly recordings: unknown[];
  /** The assembling child processes' peaks (VmHWM), one per stream, from the service's log. */
  readonly assemblerPeakRss: number[];
}

/** The `assemblerPeakRss` of each 'recording finalised' line the service logged (pino JSON on stderr). */
function assemblerPeaks(stderr: string): number[] {
  const peaks: number[] = [];
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: { msg?: string; assemblerPeakRss?: number };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if (entry.msg === 'recording finalised' && typeof entry.assemblerPeakRss === 'number')
      peaks.push(entry.assemblerPeakRss);
  }
  return peaks;
}

/**
 * The V8 flags bin/invigil starts a process with (`BENCH_NODE_FLAGS`, space-separated, replaces
 * them, for comparing).
 */
function invigilNodeFlags(): string[] {
  const override = process.env.BENCH_NODE_FLAGS;
  if (override !== undefined) return override.split(/\s+/).filter((flag) => flag !== '');
  const script = fs.readFileSync(path.join(ROOT, 'bin', 'invigil'), 'utf8');
  const line = /exec "\$node" (.*?) "\$root\/src\/main\.ts"/.exec(script)?.[1] ?? '';
  return line.split(/\s+/).filter((flag) => flag.startsWith('--'));
}

/** Runs `mode` in a child started like `invigil worker` (same Node flags). Returns its report. */
function runChild(mode: string, dataDir: string, sessionId: number): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    execFile(
      NODE,
      [...invigilNodeFlags(), THIS_FILE, mode, dataDir, String(sessionId)],
      { env: envOf(dataDir), maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null) {
          reject(new Error(`${mode} child failed: ${stderr}`));
          return;
        }
        const report = JSON.parse(stdout) as Omit<ChildReport, 'assemblerPeakRss'>;
        resolve({ ...report, assemblerPeakRss: assemblerPeaks(stderr) });
      },
    );
  });
}

const MB = 1000 * 1000;
/** In Chromium, the first frame must show within this (ms) and a seek must land within this (ms). */
const FIRST_FRAME_LIMIT_MS = 1000;
const SEEK_LIMIT_MS = 300;

/** What Chromium measured on the finalised webcam recording. */
interface Playback {
  readonly firstFrameMs: number;
  /** Each seek's latency (ms), to the times in SEEK_TO. */
  readonly seeksMs: number[];
  readonly duration: number;
}

/** Where the seeks go (s): the first segment, across the reload, the gap, near the end. */
const SEEK_TO = [1800, 5400, 3610, 7000, 60];

/**
 * Serves the data over HTTP (`createApp`, its expiring `/files` address with byte ranges) and plays
 * the finalised webcam recording in headless Chromium: time from `src` to the first frame
 * (`loadeddata`), then the latency of each seek (`currentTime` to `seeked`). Returns the figures.
 */
async function playInChromium(dataDir: string, sessionId: number): Promise<Playback> {
  const { createApp } = await import('../src/app.ts');
  const { loadConfig } = await import('../src/config/config.ts');
  const { launchChromium } = await import('../test/helpers/browser.ts');
  const port = await freePort();
  const app = await createApp(
    loadConfig({
      ...envOf(dataDir),
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
    }),
  );
  await app.server.listen({ port, host: '127.0.0.1' });
  const browser = await launchChromium();
  try {
    const row = await app.database.db
      .selectFrom('recordings')
      .select('file_id')
      .where('student_session_id', '=', sessionId)
      .where('source', '=', 'webcam')
      .executeTakeFirstOrThrow();
    if (row.file_id === null) throw new Error('the webcam recording has no file');
    const { url } = await app.services.files.address(row.file_id, 600);
    const page = await browser.browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/healthz`);
    // Browser code as text: this file is compiled without the DOM's types.
    const measured: unknown = await page.evaluate(`(async () => {
      const video = document.createElement('video');
      video.muted = true;
      video.preload = 'auto';
      document.body.append(video);
      const once = (event) => new Promise((resolve, reject) => {
        video.addEventListener(event, () => resolve(), { once: true });
        video.addEventListener('error', () => reject(new Error('video error ' + video.error?.code)), { once: true });
      });
      const started = performance.now();
      const loaded = once('loadeddata');
      video.src = ${JSON.stringify(url)};
      await loaded;
      const firstFrameMs = performance.now() - started;
      const seeksMs = [];
      for (const time of ${JSON.stringify(SEEK_TO)}) {
        const at = performance.now();
        const seeked = once('seeked');
        video.currentTime = time;
        await seeked;
        seeksMs.push(performance.now() - at);
      }
      return { firstFrameMs, seeksMs, duration: video.duration };
    })()`);
    return measured as Playback;
  } finally {
    await browser.close();
    await app.close();
  }
}

export const recordingFinalize: Benchmark = {
  name: 'recording-finalize',
  title: 'a 2-hour recording (2 streams × 1,800 chunks) finalised: time vs copying the bytes, peak RSS',
  async run(): Promise<BenchmarkReport> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-bench-recording-'));
    try {
      const { sessionId, bytes } = await seed(dataDir);
      progress(`seeded ${(bytes / MB).toFixed(0)} MB of chunks`);
      const copy = await runChild('copy', dataDir, sessionId);
      progress(`copy: ${(copy.ms / 1000).toFixed(1)} s`);
      const finalize = await runChild('finalize', dataDir, sessionId);
      progress(`finalize: ${(finalize.ms / 1000).toFixed(1)} s`);
      const ratio = finalize.ms / copy.ms;
      if (finalize.assemblerPeakRss.length !== 2)
        throw new Error(`expected 2 assembler reports, got ${finalize.assemblerPeakRss.length}`);
      const assemblerPeak = Math.max(...finalize.assemblerPeakRss);
      const playback = await playInChromium(dataDir, sessionId);
      const worstSeek = Math.max(...playback.seeksMs);
      progress(
        `chromium: first frame ${playback.firstFrameMs.toFixed(0)} ms, worst seek ${worstSeek.toFixed(0)} ms`,
      );
      const targets: Target[] = [
        {
          name: 'first frame',
          met: playback.firstFrameMs < FIRST_FRAME_LIMIT_MS,
          measured: Math.round(playback.firstFrameMs),
          limit: FIRST_FRAME_LIMIT_MS,
        },
        {
          name: 'seek',
          met: worstSeek < SEEK_LIMIT_MS,
          measured: Math.round(worstSeek),
          limit: SEEK_LIMIT_MS,
        },
        {
          name: 'peak RSS of the assembling process',
          met: assemblerPeak < RSS_LIMIT_BYTES,
          measured: assemblerPeak,
          limit: RSS_LIMIT_BYTES,
        },
      ];
      return {
        lines: [
          `chunks: 2 × ${CHUNKS_PER_STREAM} (${(bytes / MB).toFixed(0)} MB), one reload with a ${RELOAD_GAP_MS / 1000} s gap per stream`,
          `node flags as bin/invigil: ${invigilNodeFlags().join(' ')}`,
          `copy of the same bytes: ${(copy.ms / 1000).toFixed(1)} s, peak RSS ${(copy.peakRss / MB).toFixed(0)} MB (idle ${(copy.idleRss / MB).toFixed(0)} MB)`,
          `finalise: ${(finalize.ms / 1000).toFixed(1)} s = ${ratio.toFixed(2)} × the copy`,
          `assembling child processes (one per stream, --max-semi-space-size=1 --max-old-space-size=100): peak RSS ${finalize.assemblerPeakRss.map((peak) => (peak / MB).toFixed(0)).join(' / ')} MB (webcam / screen)`,
          `worker process (database work, starts the children): peak RSS ${(finalize.peakRss / MB).toFixed(0)} MB (idle ${(finalize.idleRss / MB).toFixed(0)} MB, so +${((finalize.peakRss - finalize.idleRss) / MB).toFixed(0)} MB during the finalisation)`,
          `recordings: ${JSON.stringify(finalize.recordings)}`,
          `chromium over the expiring address (byte ranges): duration ${playback.duration.toFixed(1)} s, ` +
            `first frame ${playback.firstFrameMs.toFixed(0)} ms, seeks to ${SEEK_TO.join(', ')} s: ` +
            `${playback.seeksMs.map((ms) => ms.toFixed(0)).join(', ')} ms`,
        ],
        figures: {
          bytes,
          copyMs: copy.ms,
          finalizeMs: finalize.ms,
          ratio,
          assemblerPeakRss: finalize.assemblerPeakRss,
          workerPeakRss: finalize.peakRss,
          workerIdleRss: finalize.idleRss,
          copyPeakRss: copy.peakRss,
          recordings: finalize.recordings,
          playback,
        },
        targets,
        problems: [],
      };
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

if (process.argv[1] === THIS_FILE && process.argv[2] !== undefined) {
  const [, , mode = '', dataDir = '', sessionId = '0'] = process.argv;
  await child(mode, dataDir, Number(sessionId));
}
