/**
 * "A database outage never kills the process" (issue step 7, item 1), with the real binary: an
 * `invigil serve` (API and worker) runs on a PostgreSQL cluster of this test's own, which is stopped
 * while signed V3 writes keep arriving (once with `pg_ctl stop -m fast`, which tells every session,
 * once with `-m immediate`, which just ends them) and started again. The process must stay up,
 * answer 503 with Retry-After while the database is away (never 500, never a dropped connection),
 * keep every write it acknowledged, and serve again without a restart; its worker pauses and then
 * runs a job that was queued before the outage.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApiClient } from '../helpers/client.ts';
import { type HttpAnswer, httpRequest } from '../helpers/http.ts';
import { startSmtpServer, type TestSmtpServer } from '../mail/support.ts';
import { createPgCluster, type PgCluster } from '../helpers/pg-cluster.ts';
import {
  createAdministrator,
  freePort,
  healthStatus,
  type InvigilProcess,
  launchInvigil,
  waitUntil,
  waitUntilServing,
} from '../helpers/processes.ts';

/** Concurrent writers; each sends its next request as soon as the last one was answered. */
const WRITERS = 6;
/** Answers of each kind a phase waits for before moving on (before, during, after the outage). */
const PHASE_ANSWERS = 15;

interface Acknowledged {
  readonly kind: 'exam' | 'student';
  readonly id: number;
  readonly label: string;
}

interface LoadResult {
  readonly acknowledged: Acknowledged[];
  /** Answers other than 2xx and a well-formed 503 (should stay empty). */
  readonly unexpected: string[];
  /** Requests that got no HTTP answer at all (should stay empty). */
  readonly dropped: string[];
  ok: number;
  unavailable: number;
}

const PAUSED = 'database unavailable: job worker paused until it is back';
const RESUMED = 'database reachable again: job worker resumed';

/** A well-formed outage answer: 503, Retry-After in seconds, the V3 JSON body. */
function isOutageAnswer(answer: HttpAnswer): boolean {
  return (
    answer.status === 503 &&
    /^\d+$/.test(String(answer.headers['retry-after'])) &&
    answer.text === '{"error":"Service unavailable"}'
  );
}

describe('PostgreSQL stopped and started under write load (`invigil serve`)', () => {
  let cluster: PgCluster;
  let smtp: TestSmtpServer;
  let dataDir: string;
  let serve: InvigilProcess;
  let baseUrl: string;
  let client: ApiClient;
  let examId: number;
  let mailExamId: number;
  const result: LoadResult = { acknowledged: [], unexpected: [], dropped: [], ok: 0, unavailable: 0 };
  let sequence = 0;

  before(async () => {
    cluster = await createPgCluster();
    smtp = await startSmtpServer();
    // The exam email queued before the second outage is refused for now (451) until the database is away.
    smtp.mode = 'tempfail';
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-outage-'));
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const env = {
      DATABASE_URL: cluster.url,
      DATA_DIR: dataDir,
      SMTP_URL: smtp.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      // A job whose outcome could not be written during the outage comes back after this lease.
      JOB_LEASE_MS: '3000',
    };
    const admin = await createAdministrator(env);
    client = new ApiClient(baseUrl, admin.credentials);
    serve = launchInvigil(['serve'], { ...process.env, ...env });
    await waitUntilServing(serve, baseUrl);

    const createExam = async (name: string) => {
      const exam = await client.v3('POST', '/exams', { name, type: 'classroom', duration_minutes: 60 });
      assert.equal(exam.status, 201, exam.text);
      return (exam.json as { exam: { id: number } }).exam.id;
    };
    // The writers add students to one exam; the email goes to the one student of another.
    examId = await createExam('Outage exam');
    mailExamId = await createExam('Mail exam');
    const student = await client.v3('POST', '/exams/:exam_id/student_sessions', {
      exam_id: mailExamId,
      name: 'Queued Before',
      email: 'queued-before@example.org',
    });
    assert.equal(student.status, 201, student.text);
  });

  after(async () => {
    await serve?.stop();
    await cluster?.destroy();
    await smtp?.close();
    if (dataDir !== undefined) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** How many of the process's log lines so far carry `msg`. */
  function logged(msg: string): number {
    return serve
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{') && (JSON.parse(line) as { msg?: unknown }).msg === msg).length;
  }

  /** One write: a new exam or a new student of the outage exam, alternately. */
  async function write(): Promise<void> {
    sequence += 1;
    const label = `w${sequence}-${crypto.randomBytes(3).toString('hex')}`;
    const kind = sequence % 2 === 0 ? 'exam' : 'student';
    let answer: HttpAnswer;
    try {
      answer =
        kind === 'exam'
          ? await client.v3('POST', '/exams', { name: label, type: 'classroom', duration_minutes: 60 })
          : await client.v3('POST', '/exams/:exam_id/student_sessions', {
              exam_id: examId,
              name: label,
              email: `${label}@example.org`,
            });
    } catch (error) {
      result.dropped.push(`${kind} ${label}: ${String(error)}`);
      return;
    }
    if (answer.status === 201) {
      const body = answer.json as { exam?: { id: number }; student?: { id: number } };
      const id = kind === 'exam' ? body.exam?.id : body.student?.id;
      assert.ok(typeof id === 'number', answer.text);
      result.acknowledged.push({ kind, id, label });
      result.ok += 1;
    } else if (isOutageAnswer(answer)) {
      result.unavailable += 1;
      // A client honouring Retry-After would wait seconds; a short pause keeps the load on.
      await new Promise((resolve) => setTimeout(resolve, 20));
    } else {
      result.unexpected.push(`${answer.status} ${JSON.stringify(answer.headers)} ${answer.text}`);
    }
  }

  /** Runs the writers until `stop` resolves. Resolves when every writer has had its last answer. */
  async function load(stop: Promise<void>): Promise<void> {
    let running = true;
    void stop.then(() => {
      running = false;
    });
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (running) await write();
      }),
    );
  }

  /** `check`, failing at once when the process has died or a request got no answer. */
  function whileUp(check: () => boolean): () => Promise<boolean> {
    return () => {
      if (!serve.alive()) throw new Error(`invigil serve exited:\n${serve.output().slice(-4000)}`);
      if (result.dropped.length > 0) throw new Error(`requests got no answer: ${result.dropped.join('; ')}`);
      return Promise.resolve(check());
    };
  }

  /**
   * Puts the write load on, stops the database, checks the answers while it is down, starts it
   * again and checks service resumed. `beforeStop` runs just before the stop, `whileDown` once the
   * worker has paused.
   */
  async function outage(
    mode: 'fast' | 'immediate',
    steps: { beforeStop?: () => Promise<void>; whileDown?: () => void } = {},
  ): Promise<void> {
    let finish = () => {};
    const loading = load(new Promise<void>((resolve) => (finish = resolve)));
    try {
      const okBefore = result.ok;
      await waitUntil(
        'writes to succeed before the outage',
        whileUp(() => result.ok >= okBefore + PHASE_ANSWERS),
        30_000,
      );

      await steps.beforeStop?.();
      const pausedBefore = logged(PAUSED);
      await cluster.stop(mode);
      const unavailableBefore = result.unavailable;
      await waitUntil(
        'writes to be answered 503 while the database is stopped',
        whileUp(() => result.unavailable >= unavailableBefore + PHASE_ANSWERS),
        30_000,
      );
      // Everything else answers the outage alike: health, V2 (empty body), the candidate room.
      const health = await httpRequest({ url: `${baseUrl}/healthz` });
      assert.equal(health.status, 503);
      assert.match(String(health.headers['retry-after']), /^\d+$/);
      const v2 = await client.v2('GET', '/exams');
      assert.equal(v2.status, 503);
      assert.equal(v2.text, '');
      assert.match(String(v2.headers['retry-after']), /^\d+$/);
      const room = await httpRequest({
        url: `${baseUrl}/api/room/${crypto.randomBytes(16).toString('hex')}`,
      });
      assert.ok(isOutageAnswer(room), `${room.status} ${room.text}`);
      // The worker notices at its next look for jobs (its idle poll is a second) and pauses.
      await waitUntil(
        'the worker to pause',
        whileUp(() => logged(PAUSED) > pausedBefore),
        30_000,
      );
      assert.ok(serve.alive(), serve.output());
      steps.whileDown?.();

      const resumedBefore = logged(RESUMED);
      await cluster.start();
      const okDuring = result.ok;
      await waitUntil(
        'writes to succeed again',
        whileUp(() => result.ok >= okDuring + PHASE_ANSWERS),
        60_000,
      );
      assert.equal(await healthStatus(baseUrl), 200);
      await waitUntil(
        'the worker to resume',
        whileUp(() => logged(RESUMED) > resumedBefore),
        30_000,
      );
    } finally {
      finish();
      await loading;
    }
    assert.deepEqual(result.dropped, [], 'every request got an HTTP answer');
    assert.deepEqual(result.unexpected, [], 'every answer was 201 or a 503 with Retry-After');
    assert.ok(serve.alive(), `invigil serve exited:\n${serve.output()}`);
  }

  it('answers 503 with Retry-After while `pg_ctl stop -m fast` has the database down, then serves again', async () => {
    await outage('fast');
  });

  let deliveredBeforeOutage = -1;

  it('does the same when the database stops with `-m immediate` (sessions cut without a word)', async () => {
    await outage('immediate', {
      // A job queued before the outage: the exam email, which the mail server refuses (451) until
      // the database is down and the worker paused, so it can only be delivered after the outage.
      beforeStop: async () => {
        const sent = await client.v3('POST', '/exams/:id/send_emails', { id: mailExamId });
        assert.equal(sent.status, 200, sent.text);
      },
      whileDown: () => {
        deliveredBeforeOutage = smtp.messages.length;
        smtp.mode = 'accept';
      },
    });
  });

  it('still holds every write it acknowledged', async () => {
    assert.ok(result.acknowledged.length >= 4 * PHASE_ANSWERS);
    for (let index = 0; index < result.acknowledged.length; index += 20) {
      await Promise.all(
        result.acknowledged.slice(index, index + 20).map(async ({ kind, id, label }) => {
          if (kind === 'exam') {
            const answer = await client.v3('GET', '/exams/:id', { id });
            assert.equal(answer.status, 200, `exam ${label}: ${answer.text}`);
            assert.equal((answer.json as { exam: { name: string } }).exam.name, label);
          } else {
            const answer = await client.v3('GET', '/student_sessions/:id', { id });
            assert.equal(answer.status, 200, `student ${label}: ${answer.text}`);
            assert.equal(
              (answer.json as { student: { email: string } }).student.email,
              `${label}@example.org`,
            );
          }
        }),
      );
    }
  });

  it('paused its worker during the outages and ran a job queued before them once the database was back', async () => {
    assert.equal(deliveredBeforeOutage, 0, 'the email was not delivered before the outage');
    await waitUntil(
      'the queued exam email to be delivered',
      whileUp(() => smtp.messages.length > 0),
      60_000,
    );
    assert.deepEqual(
      smtp.messages.map((message) => message.envelopeTo),
      [['queued-before@example.org']],
    );
    assert.equal(logged(PAUSED), 2, 'one pause per outage, logged once');
    assert.equal(logged(RESUMED), 2, 'one resumption per outage');
  });

  it('was never restarted: the same process stops gracefully with exit 0', async () => {
    assert.ok(serve.alive());
    assert.deepEqual(await serve.stop(), { code: 0, signal: null }, serve.output());
  });
});
