/**
 * The 100 000-session listing (issue step 2, item 7): a filtered, sorted page of 300 student sessions
 * from an exam with 100 000 sessions must take no more than twice as long as the same page from an
 * exam with 1 000. The yardstick is the small exam, measured in the same run, by the same client, on
 * the same server and database file.
 *
 * For each database (SQLite, the headline, then PostgreSQL):
 *
 * 1. An institute and a teacher through the CLI, then `invigil serve` just long enough to create two
 *    exams through the signed API. The server stops.
 * 2. 1 000 sessions in one exam and 100 000 in the other are written straight into the database
 *    (bench/session-rows.ts), with incidents on a fraction of them.
 * 3. `invigil serve` again, with bench/sql-trace.ts preloaded: a few traced requests per exam count
 *    the SQL statements each request runs, check the answers, and capture the exact list queries,
 *    whose plans are then printed (EXPLAIN QUERY PLAN / EXPLAIN ANALYZE) and timed on their own.
 * 4. `invigil serve` once more, untraced: a warm-up, then the signed requests one after another on
 *    one keep-alive connection, the two exams alternating, each request signed just before it is sent.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import {
  type Benchmark,
  type BenchmarkReport,
  type BenchOptions,
  count,
  ROOT,
  type Target,
} from './benchmark.ts';
import { freePort, INVIGIL, type ServerChild, startServer } from './processes.ts';
import { createPrivateSchema } from './postgres-schema.ts';
import { createExam, createTeacher, serviceEnv } from './service.ts';
import { type ExamFill, type Loaded, loadPostgres, loadSqlite, STATUS_SHARES } from './session-rows.ts';
import { type Credentials, nonceSource, signedParams, v3Headers } from './signed-client.ts';
import type { TracedStatement } from './sql-trace.ts';

const SMALL_EXAM = 1_000;
const BIG_EXAM = 100_000;
const PAGE_LIMIT = 300;
/** The page of the big exam may take at most this many times the small exam's page. */
const RATIO_TARGET = 2;
/** Measured requests per exam and round, after WARM_UP discarded ones per exam. */
const MEASURED = 200;
const WARM_UP = 30;
/** Traced requests per exam (for statement counts and the captured queries). */
const TRACED = 3;
/** How often each captured list statement is run on its own, from the benchmark process. */
const STATEMENT_RUNS = 50;
const LOAD_BATCH = 2_000;

const DAY = 86_400_000;
/** Sessions were created over this many days, ending yesterday… */
const HISTORY_DAYS = 180;
/** …and the filter keeps those of the last FILTER_DAYS days with one of LISTED_STATUSES. */
const FILTER_DAYS = 120;
const LISTED_STATUSES = ['registered', 'email_sent'];

function progress(message: string): void {
  process.stderr.write(`  [session-listing] ${message}\n`);
}

/** A condition of the database the figures are taken in (statistics, vacuuming). */
interface DatabaseState {
  /** Names the figures and targets: `SQLite`, `PostgreSQL vacuumed`. */
  readonly name: string;
  /** What was done to the database before measuring, for the report. */
  readonly description: string;
  /** Brings the database into this state (no server running). */
  enter(): Promise<void>;
}

/** A database the benchmark fills and the service runs on. */
interface BenchDatabase {
  readonly label: string;
  readonly kind: 'sqlite' | 'postgres';
  /** The service's DATABASE_URL. */
  readonly url: string;
  /** Writes the rows (no server running). Returns the counts. */
  load(fills: readonly ExamFill[]): Promise<Loaded>;
  /** The states measured, in order, each entered after the previous one's measurement. */
  readonly states: readonly DatabaseState[];
  /** The plan of one statement with its parameters, one line per step. */
  explain(sql: string, params: readonly unknown[]): Promise<string[]>;
  /** Runs a statement `runs` times; returns each run's milliseconds. */
  time(sql: string, params: readonly unknown[], runs: number): Promise<number[]>;
  close(): Promise<void>;
}

/** What a plan says about scaling: steps that read everything, sort everything, or sort ties only. */
interface PlanFindings {
  readonly fullScans: readonly string[];
  readonly fullSorts: readonly string[];
  readonly partialSorts: readonly string[];
}

/**
 * Reads a plan. A full scan of student_sessions or incidents, or (in the count and page queries)
 * a sort of every matching row, grows with the exam. A partial sort (SQLite's temp b-tree for the
 * last ORDER BY term, PostgreSQL's incremental sort) only orders rows of equal created_at by id,
 * while the rows are read in created_at order and reading stops after the page.
 */
function planFindings(
  kind: BenchDatabase['kind'],
  plan: readonly string[],
  role: StatementRole,
): PlanFindings {
  const list = role === 'count' || role === 'page';
  const match = (pattern: RegExp) => plan.filter((line) => pattern.test(line)).map((line) => line.trim());
  if (kind === 'sqlite') {
    return {
      fullScans: match(/^\s*SCAN (student_sessions|incidents)\b/),
      fullSorts: list ? match(/USE TEMP B-TREE FOR ORDER BY/) : [],
      partialSorts: list ? match(/USE TEMP B-TREE FOR (LAST|RIGHT)/) : [],
    };
  }
  return {
    fullScans: match(/Seq Scan on (student_sessions|incidents)\b/),
    fullSorts: list ? match(/^\s*(->\s+)?Sort\s*(\(|$)/) : [],
    partialSorts: list ? match(/Incremental Sort/) : [],
  };
}

function sqliteDatabase(dataDir: string): BenchDatabase {
  const file = path.join(dataDir, 'invigil.sqlite');
  let reader: DatabaseSync | undefined;
  const open = () => (reader ??= new DatabaseSync(file, { readOnly: true }));
  const bind = (params: readonly unknown[]) => params as SQLInputValue[];
  return {
    label: 'SQLite',
    kind: 'sqlite',
    url: `sqlite:${file}`,
    load: (fills) => Promise.resolve(loadSqlite(file, fills, LOAD_BATCH)),
    states: [
      {
        name: 'SQLite',
        description: 'as written: no ANALYZE, as the service itself never runs one',
        enter: () => Promise.resolve(),
      },
    ],
    explain(sql, params) {
      const rows = open()
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...bind(params));
      const depth = new Map<number, number>();
      return Promise.resolve(
        rows.map((row) => {
          const level = (depth.get(Number(row.parent)) ?? -1) + 1;
          depth.set(Number(row.id), level);
          return `${'  '.repeat(level)}${String(row.detail)}`;
        }),
      );
    },
    time(sql, params, runs) {
      const statement = open().prepare(sql);
      const times: number[] = [];
      for (let run = 0; run < runs; run += 1) {
        const started = performance.now();
        statement.all(...bind(params));
        times.push(performance.now() - started);
      }
      return Promise.resolve(times);
    },
    close() {
      reader?.close();
      return Promise.resolve();
    },
  };
}

async function postgresDatabase(): Promise<BenchDatabase> {
  const { url, client, drop } = await createPrivateSchema();
  const text = (rows: readonly Record<string, unknown>[]) => rows.map((row) => String(row['QUERY PLAN']));
  return {
    label: 'PostgreSQL',
    kind: 'postgres',
    url,
    load: (fills) => loadPostgres(client, fills, LOAD_BATCH),
    // ANALYZE alone is the state right after a bulk load, and the lasting one on a server with
    // autovacuum off (like the development server); VACUUM is what autovacuum, on by default, does
    // soon after: it marks pages all-visible, which index-only scans need to skip the table.
    states: [
      {
        name: 'PostgreSQL analyzed',
        description: 'ANALYZE after the load, no VACUUM (visibility map empty)',
        enter: async () => {
          await client.query('analyze student_sessions');
          await client.query('analyze incidents');
        },
      },
      {
        name: 'PostgreSQL vacuumed',
        description: 'VACUUM (ANALYZE), as autovacuum would do after the load',
        enter: async () => {
          await client.query('vacuum (analyze) student_sessions');
          await client.query('vacuum (analyze) incidents');
        },
      },
    ],
    async explain(sql, params) {
      const result = await client.query<Record<string, unknown>>(`EXPLAIN (ANALYZE, COSTS OFF) ${sql}`, [
        ...params,
      ]);
      return text(result.rows);
    },
    async time(sql, params, runs) {
      const times: number[] = [];
      for (let run = 0; run < runs; run += 1) {
        const started = performance.now();
        await client.query(sql, [...params]);
        times.push(performance.now() - started);
      }
      return times;
    },
    close: drop,
  };
}

type StatementRole = 'count' | 'page' | 'incidents' | 'other';

/** Which part of a list request a statement is. */
function roleOf(sql: string): StatementRole {
  if (/from "incidents"/i.test(sql)) return 'incidents';
  if (/from "student_sessions"/i.test(sql)) {
    if (/count\(\*\)/i.test(sql)) return 'count';
    if (/\blimit\b/i.test(sql)) return 'page';
  }
  return 'other';
}

/** How many statements one request ran, by role. */
interface StatementCount {
  readonly total: number;
  readonly count: number;
  readonly page: number;
  readonly incidents: number;
  readonly other: number;
}

function countStatements(statements: readonly TracedStatement[]): StatementCount {
  const roles = statements.map((statement) => roleOf(statement.sql));
  const of = (role: StatementRole) => roles.filter((found) => found === role).length;
  return {
    total: statements.length,
    count: of('count'),
    page: of('page'),
    incidents: of('incidents'),
    other: of('other'),
  };
}

function describeCount(counted: StatementCount): string {
  return (
    `${counted.total} statements: count ${counted.count}, page ${counted.page}, ` +
    `incidents ${counted.incidents}, other ${counted.other} (signature check, nonce, exam)`
  );
}

/** The two exams of one database and how to ask for their page. */
interface Exams {
  readonly small: number;
  readonly big: number;
  readonly credentials: Credentials;
  readonly filterFrom: string;
}

/** The signed path of the listing for `examId`, freshly signed on every call. */
function listingPath(exams: Exams, examId: number, nextNonce: () => string): () => string {
  const params = {
    exam_id: String(examId),
    filter: JSON.stringify({
      status: { in: LISTED_STATUSES },
      created_at: { gte: exams.filterFrom },
    }),
    sort: JSON.stringify([{ created_at: 'desc' }]),
    limit: String(PAGE_LIMIT),
  };
  return () => {
    const { exam_id: _examId, ...signed } = signedParams(exams.credentials, params, nextNonce());
    const query = Object.entries(signed)
      .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
      .join('&');
    return `/api/v3/exams/${examId}/student_sessions?${query}`;
  };
}

interface Answer {
  readonly status: number;
  readonly ms: number;
  readonly body: string;
  readonly itemCount: string | undefined;
}

/** One GET over `agent`, timed from the first byte sent to the last byte received. */
function timedGet(agent: http.Agent, baseUrl: string, target: string, headers: Record<string, string>) {
  return new Promise<Answer>((resolve, reject) => {
    const started = performance.now();
    const request = http.get(`${baseUrl}${target}`, { agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const ms = performance.now() - started;
        const header = response.headers['x-pagination-item-count'];
        resolve({
          status: response.statusCode ?? 0,
          ms,
          body: Buffer.concat(chunks).toString('utf8'),
          itemCount: typeof header === 'string' ? header : undefined,
        });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

/**
 * Reads a traced answer. Returns how many incidents its page carries, and why it is wrong: empty
 * when it is a full page, filtered and sorted as asked.
 */
function checkPage(answer: Answer, filterFrom: number): { problems: string[]; incidents: number } {
  if (answer.status !== 200) {
    return { problems: [`answered ${answer.status}: ${answer.body.slice(0, 300)}`], incidents: 0 };
  }
  const problems: string[] = [];
  const students = (JSON.parse(answer.body) as { students?: unknown }).students;
  if (!Array.isArray(students)) return { problems: ['the answer has no students array'], incidents: 0 };
  if (students.length !== PAGE_LIMIT) problems.push(`${students.length} students, not ${PAGE_LIMIT}`);
  if (Number(answer.itemCount) < PAGE_LIMIT) problems.push(`X-Pagination-Item-Count ${answer.itemCount}`);
  let previous = Number.POSITIVE_INFINITY;
  let incidents = 0;
  for (const student of students as { status?: unknown; created_at?: unknown; incidents?: unknown }[]) {
    const created = Date.parse(String(student.created_at));
    if (!LISTED_STATUSES.includes(String(student.status))) problems.push(`status ${String(student.status)}`);
    if (!(created >= filterFrom)) problems.push(`created_at ${String(student.created_at)} before the filter`);
    if (created > previous) problems.push('not sorted by created_at descending');
    previous = created;
    if (Array.isArray(student.incidents)) incidents += student.incidents.length;
  }
  return { problems: [...new Set(problems)], incidents };
}

/** Latency figures for one exam, in milliseconds. */
interface Latency {
  readonly requests: number;
  readonly medianMs: number;
  readonly p95Ms: number;
  readonly minMs: number;
  readonly maxMs: number;
}

function quantile(sorted: readonly number[], q: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

function latency(samples: readonly number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (value: number) => Number(value.toFixed(2));
  return {
    requests: sorted.length,
    medianMs: round(quantile(sorted, 0.5)),
    p95Ms: round(quantile(sorted, 0.95)),
    minMs: round(sorted[0] ?? Number.NaN),
    maxMs: round(sorted[sorted.length - 1] ?? Number.NaN),
  };
}

interface Round {
  readonly small: Latency;
  readonly big: Latency;
  readonly ratio: number;
  readonly p95Ratio: number;
}

/** One captured list statement: its plan, what the plan says about scaling, and its own time. */
interface StatementReport {
  readonly role: StatementRole;
  readonly sql: string;
  readonly plan: readonly string[];
  readonly findings: PlanFindings;
  readonly medianMs: number;
}

interface ExamReport {
  readonly sessions: number;
  readonly itemCount: number;
  readonly incidentsOnPage: number;
  readonly bodyBytes: number;
  readonly statements: StatementCount;
  /** The start of each statement that is not part of the listing (signature check, nonce, exam). */
  readonly otherStatements: readonly string[];
  readonly listStatements: readonly StatementReport[];
}

/** Everything measured in one state of one database. */
interface StateResult {
  readonly name: string;
  readonly description: string;
  readonly small: ExamReport;
  readonly big: ExamReport;
  readonly rounds: readonly Round[];
  readonly median: Round;
  readonly problems: readonly string[];
}

interface DatabaseResult {
  readonly label: string;
  readonly loaded: Loaded;
  readonly loadSeconds: number;
  readonly states: readonly StateResult[];
}

function medianRound(rounds: readonly Round[]): Round {
  const sorted = [...rounds].sort((a, b) => a.ratio - b.ratio);
  const middle = sorted[Math.floor((sorted.length - 1) / 2)];
  if (middle === undefined) throw new Error('no rounds were measured');
  return middle;
}

/** Starts `invigil serve` on `env`, registering the child in `children` so it is always stopped. */
async function serve(env: NodeJS.ProcessEnv, port: number, children: ServerChild[]): Promise<ServerChild> {
  const child = await startServer({
    label: 'invigil serve',
    command: INVIGIL,
    args: ['serve'],
    env,
    port,
    readyPath: '/healthz',
  });
  children.push(child);
  return child;
}

async function stop(child: ServerChild, children: ServerChild[]): Promise<void> {
  children.splice(children.indexOf(child), 1);
  const code = await child.stop();
  if (code !== 0 && code !== null) progress(`${child.label} exited with ${code}`);
}

/** Steps 1 and 2: teacher and exams through the service, then the rows straight into the database. */
async function fill(
  database: BenchDatabase,
  env: NodeJS.ProcessEnv,
  port: number,
  children: ServerChild[],
): Promise<{ exams: Exams; loaded: Loaded; loadSeconds: number }> {
  progress(`${database.label}: creating an institute, a teacher and two exams`);
  const credentials = await createTeacher(env);
  const server = await serve(env, port, children);
  const nextNonce = nonceSource();
  const small = await createExam(server.url, credentials, nextNonce, `Listing: ${SMALL_EXAM} sessions`);
  const big = await createExam(server.url, credentials, nextNonce, `Listing: ${BIG_EXAM} sessions`);
  await stop(server, children);

  const to = Math.floor(Date.now() / DAY) * DAY - DAY;
  const from = to - HISTORY_DAYS * DAY;
  progress(`${database.label}: writing ${count(SMALL_EXAM + BIG_EXAM)} sessions and their incidents`);
  const started = performance.now();
  const loaded = await database.load([
    { examId: small, sessions: SMALL_EXAM, firstId: 1, from, to, seed: 1 },
    { examId: big, sessions: BIG_EXAM, firstId: 1 + SMALL_EXAM, from, to, seed: 2 },
  ]);
  const loadSeconds = (performance.now() - started) / 1000;
  const filterFrom = new Date(to - FILTER_DAYS * DAY).toISOString();
  return { exams: { small, big, credentials, filterFrom }, loaded, loadSeconds };
}

/** One traced request: the answer, the statements it ran, and the incidents on its page. */
interface TracedRequest {
  readonly answer: Answer;
  readonly statements: readonly TracedStatement[];
  readonly incidents: number;
}

/** Step 3: traced requests, statement counts, answer checks, plans and statement times. */
async function trace(
  database: BenchDatabase,
  env: NodeJS.ProcessEnv,
  port: number,
  exams: Exams,
  dataDir: string,
  children: ServerChild[],
): Promise<{ small: ExamReport; big: ExamReport; problems: string[] }> {
  const traceFile = path.join(dataDir, 'sql-trace.jsonl');
  fs.writeFileSync(traceFile, '');
  const preload = `--import=${path.join(ROOT, 'bench', 'sql-trace.ts')}`;
  const server = await serve(
    { ...env, BENCH_SQL_TRACE: traceFile, NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} ${preload}`.trim() },
    port,
    children,
  );
  const problems: string[] = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const headers = v3Headers(exams.credentials);
  const nextNonce = nonceSource();
  const filterFrom = Date.parse(exams.filterFrom);
  const traced = new Map<number, TracedRequest[]>();
  try {
    for (const examId of [exams.small, exams.big]) {
      const nextPath = listingPath(exams, examId, nextNonce);
      const runs: TracedRequest[] = [];
      for (let n = 0; n < TRACED; n += 1) {
        const offset = fs.statSync(traceFile).size;
        const answer = await timedGet(agent, server.url, nextPath(), headers);
        const text = fs.readFileSync(traceFile).subarray(offset).toString('utf8');
        const statements = text
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as TracedStatement);
        const checked = checkPage(answer, filterFrom);
        for (const problem of checked.problems) problems.push(`exam ${examId}: ${problem}`);
        runs.push({ answer, statements, incidents: checked.incidents });
      }
      traced.set(examId, runs);
    }
  } finally {
    agent.destroy();
    await stop(server, children);
  }

  const report = async (examId: number, sessions: number): Promise<ExamReport> => {
    const runs = traced.get(examId) ?? [];
    const counts = runs.map((run) => countStatements(run.statements));
    const distinct = new Set(counts.map((counted) => JSON.stringify(counted)));
    if (distinct.size > 1)
      problems.push(`exam ${examId}: statement counts differ between requests: ${[...distinct].join(' / ')}`);
    const last = runs[runs.length - 1];
    if (last === undefined) throw new Error(`no traced request for exam ${examId}`);
    const listStatements: StatementReport[] = [];
    for (const statement of last.statements) {
      const role = roleOf(statement.sql);
      if (role === 'other') continue;
      const plan = await database.explain(statement.sql, statement.params);
      const times = await database.time(statement.sql, statement.params, STATEMENT_RUNS);
      listStatements.push({
        role,
        sql: statement.sql,
        plan,
        findings: planFindings(database.kind, plan, role),
        medianMs: latency(times).medianMs,
      });
    }
    return {
      sessions,
      itemCount: Number(last.answer.itemCount),
      incidentsOnPage: last.incidents,
      bodyBytes: Buffer.byteLength(last.answer.body),
      statements: counts[counts.length - 1] ?? countStatements([]),
      otherStatements: last.statements
        .filter((statement) => roleOf(statement.sql) === 'other')
        .map((statement) => statement.sql.replace(/\s+/g, ' ').slice(0, 60)),
      listStatements,
    };
  };
  return { small: await report(exams.small, SMALL_EXAM), big: await report(exams.big, BIG_EXAM), problems };
}

/** Step 4: the timed requests, the two exams alternating on one connection. */
async function time(
  name: string,
  options: BenchOptions,
  env: NodeJS.ProcessEnv,
  port: number,
  exams: Exams,
  children: ServerChild[],
): Promise<{ rounds: Round[]; problems: string[] }> {
  const serveEnv: NodeJS.ProcessEnv = { ...env };
  if (options.profileDir !== undefined) {
    fs.mkdirSync(options.profileDir, { recursive: true });
    serveEnv.NODE_OPTIONS =
      `${env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${options.profileDir}`.trim();
  }
  const server = await serve(serveEnv, port, children);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const headers = v3Headers(exams.credentials);
  const nextNonce = nonceSource();
  const paths = {
    small: listingPath(exams, exams.small, nextNonce),
    big: listingPath(exams, exams.big, nextNonce),
  };
  const failures = new Map<string, number>();
  const once = async (which: 'small' | 'big'): Promise<number> => {
    const target = paths[which]();
    const answer = await timedGet(agent, server.url, target, headers);
    if (answer.status !== 200) {
      const key = `${which} exam answered ${answer.status}`;
      failures.set(key, (failures.get(key) ?? 0) + 1);
    }
    return answer.ms;
  };
  // Alternating (small, big, big, small, …) spreads whatever else the shared host does evenly
  // over both exams, which sequential blocks would not.
  const pass = async (requests: number) => {
    const samples = { small: [] as number[], big: [] as number[] };
    for (let n = 0; n < requests; n += 1) {
      const order: ('small' | 'big')[] = n % 2 === 0 ? ['small', 'big'] : ['big', 'small'];
      for (const which of order) samples[which].push(await once(which));
    }
    return samples;
  };
  const rounds: Round[] = [];
  try {
    progress(`${name}: warm-up, ${WARM_UP} requests per exam`);
    await pass(WARM_UP);
    for (let round = 1; round <= options.rounds; round += 1) {
      const label = options.rounds === 1 ? '' : ` (round ${round} of ${options.rounds})`;
      progress(`${name}: measuring ${MEASURED} requests per exam, one connection${label}`);
      const samples = await pass(MEASURED);
      const small = latency(samples.small);
      const big = latency(samples.big);
      rounds.push({ small, big, ratio: big.medianMs / small.medianMs, p95Ratio: big.p95Ms / small.p95Ms });
    }
  } finally {
    agent.destroy();
    await stop(server, children);
  }
  const problems = [...failures].map(([key, times]) => `${name}: ${key} ${times} times`);
  return { rounds, problems };
}

async function measureDatabase(
  database: BenchDatabase,
  options: BenchOptions,
  dataDir: string,
): Promise<DatabaseResult> {
  const children: ServerChild[] = [];
  try {
    const port = await freePort();
    const env = serviceEnv(database.url, dataDir, port);
    const { exams, loaded, loadSeconds } = await fill(database, env, port, children);
    const states: StateResult[] = [];
    for (const state of database.states) {
      progress(`${state.name}: ${state.description}`);
      await state.enter();
      progress(`${state.name}: traced requests, plans`);
      const traced = await trace(database, env, port, exams, dataDir, children);
      const timed = await time(state.name, options, env, port, exams, children);
      states.push({
        name: state.name,
        description: state.description,
        small: traced.small,
        big: traced.big,
        rounds: timed.rounds,
        median: medianRound(timed.rounds),
        problems: [...traced.problems.map((problem) => `${state.name}: ${problem}`), ...timed.problems],
      });
    }
    return { label: database.label, loaded, loadSeconds, states };
  } finally {
    for (const child of children.reverse()) {
      const code = await child.stop();
      if (code !== 0 && code !== null) progress(`${child.label} exited with ${code}`);
    }
  }
}

/** A plan line for the terminal: an IN list of 300 ids is cut short (the JSON keeps it whole). */
function shorten(line: string, width = 150): string {
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}

function describeLatency(label: string, figures: Latency, exam: ExamReport): string {
  return (
    `${label.padEnd(22)} median ${figures.medianMs.toFixed(2).padStart(7)} ms   ` +
    `p95 ${figures.p95Ms.toFixed(2).padStart(7)} ms   ` +
    `(${count(exam.itemCount)} match; page ${count(exam.bodyBytes / 1024)} KiB, ` +
    `${exam.incidentsOnPage} incidents)`
  );
}

function describeState(result: StateResult, rounds: number): string[] {
  const lines: string[] = [`${result.name} (${result.description}):`];
  if (rounds > 1) {
    result.rounds.forEach((round, index) => {
      lines.push(
        `  round ${index + 1}: 1 000 median ${round.small.medianMs} ms, p95 ${round.small.p95Ms} ms; ` +
          `100 000 median ${round.big.medianMs} ms, p95 ${round.big.p95Ms} ms; ratio ${round.ratio.toFixed(2)}`,
      );
    });
    lines.push('  the median round:');
  }
  const { median } = result;
  lines.push(
    `  ${describeLatency(`${count(SMALL_EXAM)} sessions`, median.small, result.small)}`,
    `  ${describeLatency(`${count(BIG_EXAM)} sessions`, median.big, result.big)}`,
    `  ${'ratio 100 000 ÷ 1 000'.padEnd(22)} median ${median.ratio.toFixed(2).padStart(7)}      ` +
      `p95 ${median.p95Ratio.toFixed(2).padStart(7)}`,
    `  statements per request, 1 000: ${describeCount(result.small.statements)}`,
    `                        100 000: ${describeCount(result.big.statements)}`,
    `  the other statements: ${result.big.otherStatements.join(' | ')}`,
  );
  for (const [label, exam] of [
    ['1 000', result.small],
    ['100 000', result.big],
  ] as const) {
    lines.push(`  plans, ${label}-session exam (ms: the statement alone, median of ${STATEMENT_RUNS} runs):`);
    for (const statement of exam.listStatements) {
      lines.push(`    ${statement.role} (${statement.medianMs.toFixed(2)} ms):`);
      for (const step of statement.plan) lines.push(`      ${shorten(step)}`);
    }
  }
  const { fullScans, fullSorts, partialSorts } = bigFindings(result);
  for (const line of [...fullScans, ...fullSorts]) lines.push(`  GROWS WITH THE EXAM: ${line}`);
  for (const line of partialSorts) {
    lines.push(
      `  partial sort (orders rows of equal created_at by id; reading stops after the page): ${line}`,
    );
  }
  return lines;
}

/** The plan findings of the 100 000-session exam's list statements, labelled by statement. */
function bigFindings(result: StateResult): PlanFindings {
  const all = (pick: (findings: PlanFindings) => readonly string[]) =>
    result.big.listStatements.flatMap((statement) =>
      pick(statement.findings).map((line) => `${statement.role}: ${shorten(line, 110)}`),
    );
  return {
    fullScans: all((findings) => findings.fullScans),
    fullSorts: all((findings) => findings.fullSorts),
    partialSorts: all((findings) => findings.partialSorts),
  };
}

/** The statements a list request runs are constant: one count, one page, one incidents query. */
function listStatementsConstant(result: StateResult): boolean {
  const ok = (counted: StatementCount) =>
    counted.count === 1 && counted.page === 1 && counted.incidents === 1;
  return (
    ok(result.small.statements) &&
    ok(result.big.statements) &&
    result.small.statements.total === result.big.statements.total
  );
}

function targetsOf(result: StateResult): Target[] {
  const findings = bigFindings(result);
  const growing = findings.fullScans.length + findings.fullSorts.length;
  const listed = result.big.statements.count + result.big.statements.page + result.big.statements.incidents;
  return [
    {
      name: `${result.name}: ratio ≤ ${RATIO_TARGET}`,
      met: result.median.ratio <= RATIO_TARGET,
      measured: Number(result.median.ratio.toFixed(2)),
      limit: RATIO_TARGET,
    },
    {
      name: `${result.name}: plans scale`,
      met: growing === 0,
      measured: growing,
      limit: 0,
    },
    {
      name: `${result.name}: 3 list statements`,
      met: listStatementsConstant(result),
      measured: listed,
      limit: 3,
    },
  ];
}

async function run(options: BenchOptions): Promise<BenchmarkReport> {
  const lines: string[] = [
    `filter status in ${JSON.stringify(LISTED_STATUSES)}, created_at in the last ${FILTER_DAYS} of ${HISTORY_DAYS} ` +
      `days; sort created_at desc; limit ${PAGE_LIMIT}`,
    `statuses: ${STATUS_SHARES.map(([status, share]) => `${status} ${Math.round(share * 100)} %`).join(', ')}`,
    `${MEASURED} requests per exam and round after ${WARM_UP} warm-up, one keep-alive connection, exams alternating`,
  ];
  const targets: Target[] = [];
  const problems: string[] = [];
  const results: DatabaseResult[] = [];
  const makers: (readonly [string, (dataDir: string) => Promise<BenchDatabase>])[] = [
    ['SQLite', (dataDir) => Promise.resolve(sqliteDatabase(dataDir))],
    ['PostgreSQL', () => postgresDatabase()],
  ];
  for (const [label, make] of makers) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-bench-listing-'));
    let database: BenchDatabase | undefined;
    try {
      database = await make(dataDir);
      const result = await measureDatabase(database, options, dataDir);
      results.push(result);
      lines.push(
        '',
        `${result.label}: ${count(result.loaded.sessions)} sessions and ${count(result.loaded.incidents)} ` +
          `incidents written in ${result.loadSeconds.toFixed(1)} s`,
      );
      for (const state of result.states) {
        lines.push(...describeState(state, options.rounds));
        targets.push(...targetsOf(state));
        problems.push(...state.problems);
      }
    } catch (error) {
      // SQLite is the headline and runs first; a PostgreSQL failure (server down) is reported, and the
      // SQLite figures still stand.
      if (label === 'SQLite') throw error;
      const message = error instanceof Error ? error.message : String(error);
      problems.push(`${label} could not be measured: ${message}`);
      targets.push({ name: `${label}: measured`, met: false, measured: 0, limit: 1 });
    } finally {
      await database?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  if (options.profileDir !== undefined) {
    lines.push('(profiled run: the CPU profiler slows Invigil; not a figure to quote)');
  }
  return {
    lines,
    figures: {
      smallExam: SMALL_EXAM,
      bigExam: BIG_EXAM,
      pageLimit: PAGE_LIMIT,
      measuredPerExam: MEASURED,
      profiled: options.profileDir !== undefined,
      databases: results,
    },
    targets,
    problems,
  };
}

export const sessionListing: Benchmark = {
  name: 'session-listing',
  title: `Filtered, sorted page of ${PAGE_LIMIT} sessions: exam of 100 000 vs exam of 1 000, SQLite and PostgreSQL`,
  run,
};
