/**
 * The worker's time-up sweep (docs/jobs.md): a started session whose deadline passes while nobody
 * opens its room is finished anyway, within a minute, with `end_reason: "time_up"`, its recording
 * finalisation queued and the `student_session.finished` webhook delivered to the institute.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { RECORDING_FINALIZE_JOB } from '../../src/domain/recordings/recording.ts';
import { startTimeUpSweep, TIME_UP_INTERVAL_MS } from '../../src/jobs/time-up.ts';
import { createWorker } from '../../src/jobs/worker.ts';
import { oldOwnedExam, oldSession } from '../db/old-rows.ts';
import { addCandidate } from '../helpers/candidates.ts';
import { INVIGIL_BIN } from '../helpers/cli.ts';
import { type HttpAnswer, httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { multipartBody } from '../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { openJobsDatabase, waitFor } from './support.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const MINUTE = 60_000;
const silent = pino({ level: 'silent' });

/** A webhook receiver on 127.0.0.1 that answers 200 and keeps the bodies it was sent. */
async function startReceiver(): Promise<{ url: string; bodies: Json[]; close: () => Promise<void> }> {
  const bodies: Json[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      bodies.push(object(JSON.parse(body), 'webhook body'));
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    bodies,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

for (const dialect of DIALECTS) {
  describe(`sessions past their deadline are finished by the worker [${dialect}]`, () => {
    const start = Math.floor(Date.now() / 1000) * 1000;
    const clock = new TestClock(start);
    let server: TestServer;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let teacher: TestUser;
    let students = 0;

    before(async () => {
      receiver = await startReceiver();
      server = await startTestServer(dialect, { clock, env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
      const instituteId = await server.institute();
      const administrator = await server.user(instituteId, 'administrator');
      teacher = await server.user(instituteId, 'teacher');
      const patched = await administrator.client.v3('PATCH', '/institutes/:id', {
        id: instituteId,
        callback_url: receiver.url,
        exam_finalized_emails_enabled: false,
      });
      assert.equal(patched.status, 200, patched.text);
      const secret = await administrator.client.v3('POST', '/institutes/:id/webhook_secret', {
        id: instituteId,
      });
      assert.equal(secret.status, 200, secret.text);
    });

    after(async () => {
      await server.close();
      await receiver.close();
    });

    async function createExam(): Promise<number> {
      const answer = await teacher.client.v3('POST', '/exams', {
        name: 'Unattended exam',
        type: 'classroom',
        duration_minutes: 30,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam').id as number;
    }

    /** A new session of the exam, started in the room at the clock's time unless `started` is false. */
    async function student(examId: number, started = true): Promise<{ id: number; token: string }> {
      students += 1;
      const { id, token } = await addCandidate(teacher.client, examId, students);
      if (started) {
        const begun = await room(token, 'start');
        assert.equal(begun.status, 200, begun.text);
      }
      return { id, token };
    }

    function room(token: string, action: string, body?: Buffer, type?: string): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}/${action}`,
        method: 'POST',
        ...(body === undefined ? {} : { body, headers: { 'content-type': type ?? '' } }),
      });
    }

    /** Sends one webcam chunk (a WebM header and random bytes), so there is a recording to finalise. */
    async function recordChunk(token: string): Promise<void> {
      const bytes = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), crypto.randomBytes(2000)]);
      const { body, contentType } = multipartBody({ sequence: '0', source: 'webcam' }, [
        { field: 'file', fileName: 'chunk.webm', contentType: 'video/webm', bytes },
      ]);
      const answer = await room(token, 'recordings', body, contentType);
      assert.ok(answer.status < 300, answer.text);
    }

    function sessionRow(id: number) {
      return server.app.database.db
        .selectFrom('student_sessions')
        .select(['status', 'end_reason', 'end_time', 'recording_ended_at'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    }

    function jobsOf(kind: string) {
      return server.app.database.db
        .selectFrom('jobs')
        .select(['id', 'payload', 'status'])
        .where('kind', '=', kind)
        .orderBy('id')
        .execute();
    }

    it('finishes a started session nobody reopens within a minute of its deadline, queues its finalisation and sends the webhook', async () => {
      clock.current = start;
      const examId = await createExam();
      const unattended = await student(examId);
      await recordChunk(unattended.token);
      const waiting = await student(examId, false);
      clock.current = start + 20 * MINUTE;
      const later = await student(examId);
      const deadline = start + 30 * MINUTE;

      // Before the deadline nothing is finished.
      clock.current = deadline - 1;
      assert.deepEqual(await server.app.services.room.finishTimedOut(), { checked: 0, finished: 0 });
      assert.equal((await sessionRow(unattended.id)).status, 'exam_started');

      // The worker's sweep runs on its timer: a few seconds after the deadline the session is over,
      // though its room was never opened again.
      assert.ok(TIME_UP_INTERVAL_MS <= MINUTE);
      clock.current = deadline + 5_000;
      const stop = startTimeUpSweep({ room: server.app.services.room, logger: silent, intervalMs: 20 });
      try {
        const until = Date.now() + 10_000;
        while ((await sessionRow(unattended.id)).status !== 'exam_finished' && Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } finally {
        await stop();
      }
      const finished = await sessionRow(unattended.id);
      assert.deepEqual(
        {
          ...finished,
          end_time: Number(finished.end_time),
          recording_ended_at: Number(finished.recording_ended_at),
        },
        { status: 'exam_finished', end_reason: 'time_up', end_time: deadline, recording_ended_at: deadline },
      );
      assert.equal((await sessionRow(later.id)).status, 'exam_started');
      assert.equal((await sessionRow(waiting.id)).status, 'registered');

      const finalisations = await jobsOf(RECORDING_FINALIZE_JOB);
      assert.deepEqual(
        finalisations.map((job) => object(JSON.parse(job.payload), 'payload').studentSessionId),
        [unattended.id],
      );

      // The webhook goes out through the queue like any other.
      const webhooks = server.app.jobHandlers.filter((handler) => handler.kind === 'webhook.deliver');
      const worker = createWorker({
        db: server.app.database.db,
        dialect,
        clock,
        logger: silent,
        handlers: webhooks,
      });
      while (await worker.runOnce());
      assert.deepEqual(
        receiver.bodies.map((body) => [body.type, body.data]),
        [
          [
            'student_session.finished',
            {
              student_session_id: unattended.id,
              exam_id: examId,
              token: unattended.token,
              end_reason: 'time_up',
              ended_at: new Date(deadline).toISOString(),
              accommodations: {
                extra_time_minutes: 0,
                extra_time_percent: 0,
                breaks: null,
                exemptions: [],
                assistive_technology: false,
                note: null,
              },
              breaks_taken: 0,
            },
          ],
        ],
      );

      // Done once: the next sweep finds nothing, and the later session ends at its own deadline.
      assert.deepEqual(await server.app.services.room.finishTimedOut(), { checked: 0, finished: 0 });
      clock.current = start + 50 * MINUTE + 1;
      assert.deepEqual(await server.app.services.room.finishTimedOut(), { checked: 1, finished: 1 });
      const laterRow = await sessionRow(later.id);
      assert.equal(laterRow.end_reason, 'time_up');
      assert.equal(Number(laterRow.end_time), start + 50 * MINUTE);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`invigil worker finishes sessions past their deadline [${dialect}]`, () => {
    it('finishes a session whose time ran out before the worker started, as soon as it starts', async () => {
      const jobs = await openJobsDatabase(dialect);
      const { db } = jobs.database;
      const now = Date.now();
      const { exam } = await oldOwnedExam(db, {
        name: 'Left running',
        type: 'classroom',
        duration_minutes: 30,
        use_duration: true,
      });
      const session = await oldSession(db, exam.id, {
        status: 'exam_started',
        token: crypto.randomBytes(16).toString('hex'),
        start_time: now - 31 * MINUTE,
      });
      const child = spawn(INVIGIL_BIN, ['worker'], {
        env: {
          ...process.env,
          LOG_LEVEL: 'warn',
          DATABASE_URL: jobs.target.url,
          DATA_DIR: jobs.target.dataDir,
        },
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.resume();
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      try {
        await waitFor('the worker to finish the session', async () => {
          const row = await db
            .selectFrom('student_sessions')
            .select('status')
            .where('id', '=', session.id)
            .executeTakeFirstOrThrow();
          return row.status === 'exam_finished';
        });
        const row = await db
          .selectFrom('student_sessions')
          .select(['end_reason', 'end_time'])
          .where('id', '=', session.id)
          .executeTakeFirstOrThrow();
        assert.equal(row.end_reason, 'time_up');
        assert.equal(Number(row.end_time), now - MINUTE);
      } finally {
        child.kill('SIGTERM');
        assert.equal(await exited, 0, stderr);
        await jobs.close();
      }
    });
  });
}
