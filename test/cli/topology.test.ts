/**
 * "Several processes, one service" (issue step 7, item 8), with the real binary: two
 * `invigil serve --no-worker` processes on different ports and two `invigil worker` processes, all
 * on one PostgreSQL schema and one data folder, behave as one service. The candidate room's rate
 * limit counts across both API processes, a signed request replayed to the other API process is
 * refused, and every background job runs exactly once.
 *
 * The shared rate limit is exact up to its flush (docs/architecture.md): each process decides from
 * the shared count it read at its last flush plus what it admitted since. The test therefore first
 * lets both processes read the same shared count S, then sends requests alternately: together they
 * admit at least 120 - S more (nothing is refused before 120 are admitted) and at most 2 x (120 - S)
 * (each admits at most 120 - S on its own count), where two per-process limits would admit 240 - S.
 */
import { SESSION_RETENTION_JOB } from '../../src/domain/retention/retention.ts';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { ROOM_RATE_FLUSH_MS, ROOM_RATE_LIMIT } from '../../src/http/room/rate-limit.ts';
import { ApiClient } from '../helpers/client.ts';
import { type HttpAnswer, httpRequest } from '../helpers/http.ts';
import { nextNonce } from '../helpers/signing.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/server.ts';
import { startSmtpServer, type TestSmtpServer } from '../mail/support.ts';
import {
  createAdministrator,
  freePort,
  type InvigilProcess,
  launchInvigil,
  waitUntil,
  waitUntilServing,
} from '../helpers/processes.ts';

const STUDENTS = 24;
const ZIP_EXAMS = 4;
const MAX = ROOM_RATE_LIMIT.max;

describe('two `serve --no-worker` and two `worker` processes on one PostgreSQL schema', () => {
  let database: TestDatabase;
  let smtp: TestSmtpServer;
  let shared: Database;
  const processes: InvigilProcess[] = [];
  let apiA: string;
  let apiB: string;
  let clientA: ApiClient;
  let clientB: ApiClient;
  let workers: InvigilProcess[];

  before(async () => {
    database = await createTestDatabase('postgres');
    smtp = await startSmtpServer();
    const base = {
      DATABASE_URL: database.url,
      DATA_DIR: database.dataDir,
      SMTP_URL: smtp.url,
      HOST: '127.0.0.1',
      // Several processes share one key (README): set it rather than race to generate it.
      INVIGIL_SECRET: crypto.randomBytes(32).toString('hex'),
      LOG_LEVEL: 'warn',
    };
    const admin = await createAdministrator(base);
    const [portA, portB] = [await freePort(), await freePort()];
    apiA = `http://127.0.0.1:${portA}`;
    apiB = `http://127.0.0.1:${portB}`;
    const serveA = launchInvigil(['serve', '--no-worker'], { ...process.env, ...base, PORT: String(portA) });
    const serveB = launchInvigil(['serve', '--no-worker'], { ...process.env, ...base, PORT: String(portB) });
    // The workers log each attempt they start (debug), so the test can see who ran what.
    workers = [1, 2].map(() => launchInvigil(['worker'], { ...process.env, ...base, LOG_LEVEL: 'debug' }));
    processes.push(serveA, serveB, ...workers);
    await Promise.all([waitUntilServing(serveA, apiA), waitUntilServing(serveB, apiB)]);
    clientA = new ApiClient(apiA, admin.credentials);
    clientB = new ApiClient(apiB, admin.credentials);
    shared = openDatabase({ kind: 'postgres', url: database.url });
  });

  after(async () => {
    const ended = await Promise.all(processes.map((each) => each.stop()));
    await shared?.destroy();
    await smtp?.close();
    await database?.drop();
    fs.rmSync(database.dataDir, { recursive: true, force: true });
    for (const [index, end] of ended.entries()) {
      assert.deepEqual(end, { code: 0, signal: null }, processes[index]?.output());
    }
  });

  async function createExam(client: ApiClient, name: string): Promise<number> {
    const answer = await client.v3('POST', '/exams', { name, type: 'classroom', duration_minutes: 60 });
    assert.equal(answer.status, 201, answer.text);
    return (answer.json as { exam: { id: number } }).exam.id;
  }

  async function addStudent(client: ApiClient, examId: number, email: string): Promise<string> {
    const answer = await client.v3('POST', '/exams/:exam_id/student_sessions', {
      exam_id: examId,
      name: 'Student',
      email,
    });
    assert.equal(answer.status, 201, answer.text);
    return (answer.json as { student: { token: string } }).student.token;
  }

  /** The count the shared table holds for a room token (0 before the first flush). */
  async function sharedCount(token: string): Promise<number> {
    const row = await shared.db
      .selectFrom('room_rate_limits')
      .select('hits')
      .where('key', '=', `room:${token}`)
      .executeTakeFirst();
    return row?.hits ?? 0;
  }

  /** Waits until both API processes have flushed `count` hits and read the total back. */
  async function settle(token: string, count: number): Promise<void> {
    await waitUntil(
      `the shared count to reach ${count}`,
      async () => (await sharedCount(token)) === count,
      30_000,
    );
    // Each process reads the total at its next flush, one interval later (more under load).
    await new Promise((resolve) => setTimeout(resolve, 4 * ROOM_RATE_FLUSH_MS));
  }

  const view = (base: string, token: string): Promise<HttpAnswer> =>
    httpRequest({ url: `${base}/api/room/${token}` });

  it('counts the room rate limit across both API processes', async (t) => {
    const examId = await createExam(clientA, 'Rate limit exam');
    const token = await addStudent(clientA, examId, 'limited@example.org');
    const apis = [apiA, apiB];

    // 100 requests, split evenly: all admitted (nothing is refused before the limit).
    const first = 100;
    for (let index = 0; index < first; index += 1) {
      const answer = await view(apis[index % 2] ?? apiA, token);
      assert.equal(answer.status, 200, `request ${index + 1}: ${answer.text}`);
    }
    await settle(token, first);

    // Both now know 100 of 120 are used; alternate until both refuse.
    let admitted = first;
    let refusedBy = new Set<string>();
    for (let index = 0; refusedBy.size < 2 && index < 2 * MAX; index += 1) {
      const api = apis[index % 2] ?? apiA;
      const answer = await view(api, token);
      if (answer.status === 200) {
        admitted += 1;
        refusedBy = new Set();
        continue;
      }
      assert.equal(answer.status, 429, answer.text);
      refusedBy.add(api);
    }
    t.diagnostic(`admitted ${admitted} of a limit of ${MAX} (tolerance here: at most ${2 * MAX - first})`);
    assert.ok(admitted >= MAX, `at least the limit was admitted (${admitted})`);
    assert.ok(
      admitted <= MAX + (MAX - first),
      `${admitted} admitted: at most one allowance over the shared count`,
    );

    // Once both processes have shared their counts, both refuse, with the room's 429.
    await settle(token, admitted);
    for (const api of apis) {
      const answer = await view(api, token);
      assert.equal(answer.status, 429, answer.text);
      assert.match(
        String((answer.json as { error: string }).error),
        /^Too many requests: try again in \d+ seconds$/,
      );
      assert.match(String(answer.headers['retry-after']), /^\d+$/);
    }
    // Another candidate has an allowance of its own, on either process.
    const other = await addStudent(clientB, examId, 'other@example.org');
    assert.equal((await view(apiB, other)).status, 200);
    assert.equal((await view(apiA, other)).status, 200);
  });

  it('refuses a signed request replayed to the other API process (403)', async () => {
    const signed = { nonce: nextNonce(), timestamp: Date.now() };
    const params = { name: 'Sent once', type: 'classroom', duration_minutes: 60 };
    const original = await clientA.v3('POST', '/exams', params, signed);
    assert.equal(original.status, 201, original.text);
    const replayed = await clientB.v3('POST', '/exams', params, signed);
    assert.equal(replayed.status, 403, replayed.text);
    assert.deepEqual(replayed.json, { error: 'You are not authorized to access this page.' });
  });

  it('runs every job exactly once between the two workers (mail deliveries, zip exports)', async (t) => {
    const examId = await createExam(clientA, 'Mail exam');
    const emails = Array.from({ length: STUDENTS }, (_, index) => `student${index}@example.org`);
    for (const [index, email] of emails.entries()) {
      await addStudent(index % 2 === 0 ? clientA : clientB, examId, email);
    }
    const zipExams: number[] = [];
    for (let index = 0; index < ZIP_EXAMS; index += 1) {
      zipExams.push(await createExam(index % 2 === 0 ? clientB : clientA, `Zip exam ${index}`));
    }
    const sent = await clientB.v3('POST', '/exams/:id/send_emails', { id: examId });
    assert.equal(sent.status, 200, sent.text);
    for (const [index, id] of zipExams.entries()) {
      const client = index % 2 === 0 ? clientA : clientB;
      const queued = await client.v3('PUT', '/exams/:id/generate_exam_documents_zip', { id });
      assert.equal(queued.status, 202, queued.text);
    }

    // The jobs this test queued: each worker's maintenance queues a session.retention job of its own.
    const jobs = () =>
      shared.db
        .selectFrom('jobs')
        .select(['id', 'status', 'attempts'])
        .where('kind', '!=', SESSION_RETENTION_JOB)
        .execute();
    await waitUntil(
      'every job to finish',
      async () => {
        for (const each of processes) assert.ok(each.alive(), each.output());
        return (await jobs()).every((job) => job.status === 'succeeded' || job.status === 'failed');
      },
      90_000,
    );
    const finished = await jobs();
    assert.equal(finished.length, STUDENTS + ZIP_EXAMS);
    for (const job of finished)
      assert.deepEqual({ status: job.status, attempts: job.attempts }, { status: 'succeeded', attempts: 1 });

    // Each job was started by exactly one of the two workers, once.
    const started = new Map<number, number>();
    for (const [index, worker] of workers.entries()) {
      let mine = 0;
      for (const line of worker.output().split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; jobId?: number; kind?: string };
        if (entry.msg !== 'job attempt started' || entry.jobId === undefined) continue;
        if (entry.kind === SESSION_RETENTION_JOB) continue;
        started.set(entry.jobId, (started.get(entry.jobId) ?? 0) + 1);
        mine += 1;
      }
      t.diagnostic(`worker ${index + 1} started ${mine} of ${finished.length} jobs`);
    }
    assert.deepEqual(
      [...started.entries()].sort((a, b) => a[0] - b[0]),
      finished.map((job) => [job.id, 1]).sort((a, b) => Number(a[0]) - Number(b[0])),
    );

    // Every student got one email.
    assert.deepEqual(smtp.messages.map((message) => message.envelopeTo.join(',')).sort(), [...emails].sort());
    for (const id of zipExams) {
      const status = await clientA.v3('GET', '/exams/:id/status_exam_documents_zip', { id });
      assert.equal((status.json as { zip_job_status: string }).zip_job_status, 'success', status.text);
    }
  });
});
