/**
 * `npm run bench [-- name ...]`: runs the benchmarks in bench/ one after another, prints each one's
 * figures and whether its targets were met, and writes bench/results/<name>.json.
 *
 * A missed target is reported (MISSED), never a failure: the machine is shared and noisy, so speed
 * is judged by a person reading ratios, not by an exit code. The exit code is non-zero only when a
 * benchmark could not run.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  type Benchmark,
  type BenchmarkReport,
  describeMachine,
  loadAverage,
  ROOT,
  readOptions,
} from './benchmark.ts';
import { consoleTyping } from './console-typing.ts';
import { flagsAccuracy } from './flags-accuracy.ts';
import { flagsCost } from './flags-cost.ts';
import { liveCapacity } from './live-capacity.ts';
import { pageWeight } from './page-weight.ts';
import { recordingCost } from './recording-cost.ts';
import { recordingFinalize } from './recording-finalize.ts';
import { reportRender } from './report-render.ts';
import { roomCapacity } from './room-capacity.ts';
import { sessionListing } from './session-listing.ts';
import { signedGet } from './signed-get.ts';
import { zipMemory } from './zip-memory.ts';

/** Every benchmark, in the order they run. Later steps append theirs here. */
const BENCHMARKS: readonly Benchmark[] = [
  signedGet,
  sessionListing,
  zipMemory,
  roomCapacity,
  recordingFinalize,
  liveCapacity,
  flagsCost,
  flagsAccuracy,
  consoleTyping,
  reportRender,
  pageWeight,
  recordingCost,
];

const RESULTS_DIR = path.join(ROOT, 'bench', 'results');

function selected(names: readonly string[]): Benchmark[] {
  if (names.length === 0) return [...BENCHMARKS];
  return names.map((name) => {
    const found = BENCHMARKS.find((benchmark) => benchmark.name === name);
    if (found === undefined) {
      throw new Error(`unknown benchmark "${name}"; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
    }
    return found;
  });
}

function printReport(benchmark: Benchmark, report: BenchmarkReport): void {
  const out: string[] = ['', `${benchmark.name}: ${benchmark.title}`];
  for (const line of report.lines) out.push(`  ${line}`);
  for (const target of report.targets) {
    out.push(
      `  target ${target.name.padEnd(14)} ${target.met ? 'met   ' : 'MISSED'}  (measured ${target.measured})`,
    );
  }
  for (const problem of report.problems) out.push(`  !!! ${problem}`);
  if (report.problems.length > 0) out.push('  !!! FIGURES ARE SUSPECT: some requests failed (see above)');
  process.stdout.write(`${out.join('\n')}\n`);
}

async function main(): Promise<number> {
  const options = readOptions();
  const benchmarks = selected(process.argv.slice(2));
  const machine = describeMachine();
  process.stdout.write(
    `Invigil benchmarks: ${options.durationSeconds} s, ${options.connections} connections, ` +
      `${options.rounds} round${options.rounds === 1 ? '' : 's'}; ` +
      `${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}, load average ${JSON.stringify(machine.loadAverage)}\n`,
  );
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const summary: string[] = [];
  let crashed = 0;
  for (const benchmark of benchmarks) {
    process.stderr.write(`\n${benchmark.name}: running\n`);
    const startedAt = new Date();
    const loadBefore = loadAverage();
    let report: BenchmarkReport;
    try {
      report = await benchmark.run(options);
    } catch (error) {
      crashed += 1;
      process.stderr.write(
        `\n${benchmark.name} CRASHED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      summary.push(`${benchmark.name.padEnd(14)} CRASHED`);
      continue;
    }
    const loadAfter = loadAverage();
    printReport(benchmark, report);
    process.stdout.write(
      `  load average before ${JSON.stringify(loadBefore)}, after ${JSON.stringify(loadAfter)} ` +
        '(a run keeps about 2 busy by itself; well above that, other work shared the CPUs)\n',
    );
    const file = path.join(RESULTS_DIR, `${benchmark.name}.json`);
    const record = {
      name: benchmark.name,
      title: benchmark.title,
      startedAt: startedAt.toISOString(),
      options,
      machine,
      loadAverage: { before: loadBefore, after: loadAfter },
      ...report.figures,
      targets: report.targets,
      problems: report.problems,
    };
    fs.writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
    const verdicts = report.targets.map((target) => `${target.name} ${target.met ? 'met' : 'MISSED'}`);
    const flag = report.problems.length > 0 ? '  (REQUESTS FAILED: figures suspect)' : '';
    summary.push(
      `${benchmark.name.padEnd(14)} ${verdicts.join(', ')}${flag}  → ${path.relative(ROOT, file)}`,
    );
  }
  process.stdout.write(`\nSummary\n${summary.map((line) => `  ${line}`).join('\n')}\n`);
  return crashed > 0 ? 1 : 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
