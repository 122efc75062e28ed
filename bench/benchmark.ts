import os from 'node:os';
import path from 'node:path';

/** The repository root (bench/ sits directly under it). */
export const ROOT = path.resolve(import.meta.dirname, '..');

/** Settings shared by every benchmark, read once from the environment. */
export interface BenchOptions {
  /** Seconds of measured load per target (`BENCH_DURATION`, default 10). */
  readonly durationSeconds: number;
  /** Concurrent connections (`BENCH_CONNECTIONS`, default 50). */
  readonly connections: number;
  /** Seconds of discarded load before a server's first measurement. */
  readonly warmupSeconds: number;
  /**
   * How many times to measure the yardstick and the subject in turn (`BENCH_ROUNDS`, default 1).
   * On a noisy host the median of three rounds says more than one round.
   */
  readonly rounds: number;
  /** When set (`BENCH_PROFILE=<dir>`), server children write V8 CPU profiles there. */
  readonly profileDir: string | undefined;
}

/** A speed goal: the figure measured, the limit, and whether the run met it. */
export interface Target {
  readonly name: string;
  readonly met: boolean;
  readonly measured: number;
  readonly limit: number;
}

/** What a benchmark hands back: figures for people (lines) and machines (figures). */
export interface BenchmarkReport {
  /** Human-readable lines, printed as they are. */
  readonly lines: readonly string[];
  /** Everything measured, for bench/results/<name>.json. */
  readonly figures: Readonly<Record<string, unknown>>;
  readonly targets: readonly Target[];
  /** Anything that makes the figures suspect (failed responses, connection errors). */
  readonly problems: readonly string[];
}

/** One module in bench/: a name (also its result file's name), a title, and the run. */
export interface Benchmark {
  readonly name: string;
  readonly title: string;
  /** Runs the benchmark; throws only when it could not run at all. */
  run(options: BenchOptions): Promise<BenchmarkReport>;
}

function whole(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min)
    throw new Error(`${name} must be a whole number ≥ ${min}, got "${raw}"`);
  return Number(raw);
}

/** Reads BENCH_DURATION, BENCH_CONNECTIONS, BENCH_ROUNDS and BENCH_PROFILE. Throws on a malformed value. */
export function readOptions(env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const durationSeconds = whole(env, 'BENCH_DURATION', 10, 1);
  const profile = env.BENCH_PROFILE;
  return {
    durationSeconds,
    connections: whole(env, 'BENCH_CONNECTIONS', 50, 1),
    warmupSeconds: Math.min(3, durationSeconds),
    rounds: whole(env, 'BENCH_ROUNDS', 1, 1),
    profileDir: profile === undefined || profile === '' ? undefined : path.resolve(profile),
  };
}

/** The 1-, 5- and 15-minute load averages, two decimals. */
export function loadAverage(): number[] {
  return os.loadavg().map((value) => Number(value.toFixed(2)));
}

/** The machine the figures came from. */
export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly platform: string;
  readonly node: string;
  /** 1-, 5- and 15-minute load averages when the run started: how busy the shared host was. */
  readonly loadAverage: readonly number[];
}

/** Describes this machine, its load average included (the host is shared). */
export function describeMachine(): Machine {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    loadAverage: loadAverage(),
  };
}

/** `1234.5` → `1,235` (whole numbers with separators, for tables). */
export function count(value: number): string {
  return Math.round(value).toLocaleString('en-GB');
}
