/**
 * Webhooks against a real in-process receiver (node:http on 127.0.0.1, reachable because
 * OUTBOUND_ALLOWLIST names it): the secret endpoint, signed deliveries of the events this build
 * emits, redelivery with the same event id after the receiver was down, and none lost after a
 * worker is killed with SIGKILL in the middle of a delivery (real `invigil worker` processes).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import { createWorker } from '../../../src/jobs/worker.ts';
import { NOT_AUTHORIZED } from '../../helpers/answers.ts';
import { addCandidate } from '../../helpers/candidates.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { launchInvigil, type InvigilProcess, waitUntil } from '../../helpers/processes.ts';
import {
  type DialectName,
  DIALECTS,
  startTestServer,
  TestClock,
  type TestServer,
} from '../../helpers/server.ts';
import { httpRequest } from '../../helpers/http.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const MINUTE = 60_000;

// ---- The receiver ----

interface Received {
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** The status it was answered with (0: held, never answered). */
  readonly status: number;
}

/**
 * A webhook receiver on 127.0.0.1: records every POST and answers `status`, or holds the request
 * unanswered while `hold` is set. `stop()` closes it so connections are refused; `start()` reopens
 * it on the same port.
 */
class Receiver {
  readonly received: Received[] = [];
  status = 200;
  hold = false;
  port = 0;
  private server: http.Server | undefined;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async start(): Promise<void> {
    const server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        const status = this.hold ? 0 : this.status;
        this.received.push({ headers: request.headers, body, status });
        if (status !== 0)
          response.writeHead(status, { 'content-type': 'text/plain' }).end(`answer ${status}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const { server } = this;
    if (server === undefined) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** The HMAC a receiver computes, written here without the code under test. */
function expectedSignature(secret: string, timestamp: string, body: string): string {
  return crypto.createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/** Checks `X-Invigil-Signature` as docs/webhooks.md tells integrators to. Returns the timestamp. */
function assertSigned(delivery: Received, secret: string): number {
  const header = delivery.headers['x-invigil-signature'];
  assert.equal(typeof header, 'string', 'signed');
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header as string);
  assert.ok(match !== null, `signature header ${String(header)}`);
  const [, timestamp = '', mac = ''] = match;
  assert.equal(mac, expectedSignature(secret, timestamp, delivery.body));
  return Number(timestamp);
}

function bodyOf(delivery: Received): Json {
  return object(JSON.parse(delivery.body), 'webhook body');
}

function secretIn(answer: HttpAnswer): Json {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['webhook_secret']);
  return object(body.webhook_secret, 'webhook_secret');
}

interface WebhookJob {
  readonly id: number;
  readonly status: string;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly eventId: string;
  readonly type: string;
  readonly body: Json;
}

/** Every webhook delivery job, oldest first. */
async function webhookJobs(server: TestServer): Promise<WebhookJob[]> {
  const rows = await server.app.database.db
    .selectFrom('jobs')
    .select(['id', 'status', 'attempts', 'last_error', 'payload'])
    .where('kind', '=', 'webhook.deliver')
    .orderBy('id')
    .execute();
  return rows.map((row) => {
    const payload = object(JSON.parse(row.payload), 'payload');
    return {
      id: row.id,
      status: row.status,
      attempts: row.attempts,
      lastError: row.last_error,
      eventId: payload.eventId as string,
      type: payload.type as string,
      body: object(JSON.parse(payload.body as string), 'body'),
    };
  });
}

/** The accommodations of a student who has none, as records and payloads show them. */
const NO_ACCOMMODATIONS_RECORD = {
  extra_time_minutes: 0,
  extra_time_percent: 0,
  breaks: null,
  exemptions: [],
  assistive_technology: false,
  note: null,
};

for (const dialect of DIALECTS) {
  describe(`webhooks [${dialect}]`, () => {
    const start = Math.floor(Date.now() / 1000) * 1000;
    const clock = new TestClock(start);
    const receiver = new Receiver();
    let server: TestServer;
    let instituteId: number;
    let administrator: TestUser;
    let teacher: TestUser;
    let superuser: TestUser;
    let otherAdministrator: TestUser;
    let secret: string;
    let students = 0;

    before(async () => {
      await receiver.start();
      server = await startTestServer(dialect, { clock, env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
      instituteId = await server.institute();
      administrator = await server.user(instituteId, 'administrator');
      teacher = await server.user(instituteId, 'teacher');
      superuser = await server.user(await server.institute(), 'superuser');
      otherAdministrator = await server.user(await server.institute(), 'administrator');
      const patched = await administrator.client.v3('PATCH', '/institutes/:id', {
        id: instituteId,
        callback_url: receiver.url,
        exam_finalized_emails_enabled: false,
      });
      assert.equal(patched.status, 200, patched.text);
      secret = secretIn(
        await administrator.client.v3('POST', '/institutes/:id/webhook_secret', { id: instituteId }),
      ).secret as string;
    });

    after(async () => {
      await server.close();
      await receiver.stop();
    });

    beforeEach(() => {
      receiver.received.length = 0;
      receiver.status = 200;
      receiver.hold = false;
    });

    /** Runs every due job to its outcome (attempts wait for `clock` to pass their backoff). */
    async function runDueJobs(): Promise<void> {
      const worker = createWorker({
        db: server.app.database.db,
        dialect,
        clock,
        logger: pino({ level: 'silent' }),
        handlers: server.app.jobHandlers,
      });
      while (await worker.runOnce());
    }

    async function createExam(owner: TestUser, extra: Json = {}): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams', {
        name: 'Webhook exam',
        type: 'classroom',
        duration_minutes: 30,
        ...(extra as Record<string, string>),
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam').id as number;
    }

    async function createStudent(owner: TestUser, examId: number): Promise<{ id: number; token: string }> {
      students += 1;
      const { id, token } = await addCandidate(owner.client, examId, students);
      return { id, token };
    }

    function room(token: string, action: string): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}${action === '' ? '' : `/${action}`}`,
        method: action === '' ? 'GET' : 'POST',
      });
    }

    async function endExam(sessionId: number): Promise<void> {
      const ended = await teacher.client.v3('POST', '/student_sessions/:id/end_exam', { id: sessionId });
      assert.equal(ended.status, 200, ended.text);
    }

    async function newJobs(after: number): Promise<WebhookJob[]> {
      return (await webhookJobs(server)).filter((job) => job.id > after);
    }

    async function lastJobId(): Promise<number> {
      return (await webhookJobs(server)).at(-1)?.id ?? 0;
    }

    describe('POST /api/v3/institutes/:id/webhook_secret', () => {
      it('answers a new secret once, stores it only encrypted, and is not cached', async () => {
        const answer = await administrator.client.v3('POST', '/institutes/:id/webhook_secret', {
          id: instituteId,
        });
        const issued = secretIn(answer);
        assert.deepEqual(Object.keys(issued).sort(), ['created_at', 'institute_id', 'replaced', 'secret']);
        assert.equal(issued.institute_id, instituteId);
        assert.match(issued.secret as string, /^whsec_[0-9a-f]{64}$/);
        assert.equal(issued.created_at, new Date(clock.now()).toISOString());
        assert.equal(issued.replaced, true, 'the secret made in before() was replaced');
        assert.equal(answer.headers['cache-control'], 'no-store');
        const rows = await server.app.database.db
          .selectFrom('webhook_secrets')
          .selectAll()
          .where('institute_id', '=', instituteId)
          .execute();
        assert.equal(rows.length, 1);
        assert.match(rows[0]?.secret_encrypted ?? '', /^v1:/);
        assert.ok(!(rows[0]?.secret_encrypted ?? '').includes((issued.secret as string).slice(6)));
        // The audit log records the call, and nothing it records holds the secret.
        const audited = await server.app.database.db
          .selectFrom('audit_events')
          .selectAll()
          .where('action', '=', 'POST /api/v3/institutes/:id/webhook_secret')
          .where('user_id', '=', administrator.id)
          .execute();
        assert.ok(
          audited.some((event) => event.target_type === 'institutes' && event.target_id === instituteId),
        );
        assert.ok(!JSON.stringify(audited).includes((issued.secret as string).slice(6)));
        secret = issued.secret as string;
      });

      it('rotates: each call gives a different secret, the earlier one stops signing at once', async () => {
        const first = secretIn(
          await administrator.client.v3('POST', '/institutes/:id/webhook_secret', { id: instituteId }),
        );
        const examId = await createExam(teacher);
        const { id } = await createStudent(teacher, examId);
        await endExam(id);
        const second = secretIn(
          await superuser.client.v3('POST', '/institutes/:id/webhook_secret', { id: instituteId }),
        );
        assert.notEqual(second.secret, first.secret);
        assert.equal(second.replaced, true);
        await runDueJobs();
        const [delivery] = receiver.received;
        assert.ok(delivery !== undefined);
        // The event was queued before the rotation and is signed with the secret of its delivery.
        assertSigned(delivery, second.secret as string);
        const header = delivery.headers['x-invigil-signature'] as string;
        const [, timestamp = ''] = /^t=(\d+)/.exec(header) ?? [];
        assert.notEqual(
          header.split('v1=')[1],
          expectedSignature(first.secret as string, timestamp, delivery.body),
        );
        secret = second.secret as string;
      });

      it('answers a first secret with replaced false', async () => {
        const fresh = await server.institute();
        const issued = secretIn(
          await superuser.client.v3('POST', '/institutes/:id/webhook_secret', { id: fresh }),
        );
        assert.equal(issued.replaced, false);
        assert.equal(issued.institute_id, fresh);
      });

      it('refuses a teacher of the institute (403)', async () => {
        const answer = await teacher.client.v3('POST', '/institutes/:id/webhook_secret', { id: instituteId });
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      });

      it('hides another institute and a missing one (404) from an administrator', async () => {
        for (const id of [instituteId, 987654321]) {
          const answer = await otherAdministrator.client.v3('POST', '/institutes/:id/webhook_secret', { id });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, { error: `Couldn't find Institute with 'id'=${id}` });
        }
      });

      it('refuses unsigned, wrongly signed and replayed requests, and changes nothing', async () => {
        const before = await server.app.database.db
          .selectFrom('webhook_secrets')
          .select('secret_encrypted')
          .where('institute_id', '=', instituteId)
          .executeTakeFirstOrThrow();
        const call = (options: Parameters<TestUser['client']['v3']>[3]) =>
          administrator.client.v3('POST', '/institutes/:id/webhook_secret', { id: instituteId }, options);
        for (const answer of [
          await call({ unsigned: true }),
          await call({ signature: '0'.repeat(64) }),
          await call({ timestamp: clock.now() - 2 * 86_400_000 }),
        ]) {
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        }
        const nonce = String(Date.now());
        const timestamp = Date.now();
        assert.equal((await call({ nonce, timestamp })).status, 200);
        const replayed = await call({ nonce, timestamp });
        assert.equal(replayed.status, 403, replayed.text);
        secret = secretIn(await call({})).secret as string;
        const after = await server.app.database.db
          .selectFrom('webhook_secrets')
          .select('secret_encrypted')
          .where('institute_id', '=', instituteId)
          .executeTakeFirstOrThrow();
        assert.notEqual(after.secret_encrypted, before.secret_encrypted);
      });
    });

    describe('student_session.finished', () => {
      it('is queued with end_exam, in its transaction, and POSTed signed to the callback_url', async () => {
        const examId = await createExam(teacher);
        const { id, token } = await createStudent(teacher, examId);
        const before = await lastJobId();
        await endExam(id);
        // Already queued when the answer came: written with the session's move.
        const [job, ...others] = await newJobs(before);
        assert.ok(job !== undefined);
        assert.deepEqual(others, []);
        assert.equal(job.status, 'queued');
        assert.equal(job.type, 'student_session.finished');

        await runDueJobs();
        assert.equal(receiver.received.length, 1);
        const [delivery] = receiver.received;
        assert.ok(delivery !== undefined);
        const timestamp = assertSigned(delivery, secret);
        assert.equal(timestamp, Math.floor(clock.now() / 1000));
        assert.equal(delivery.headers['content-type'], 'application/json');
        assert.equal(delivery.headers['user-agent'], 'Invigil-Webhooks/1');
        assert.equal(delivery.headers['x-invigil-event'], 'student_session.finished');
        assert.equal(delivery.headers['x-invigil-event-id'], job.eventId);
        assert.equal(delivery.headers['x-invigil-delivery-attempt'], '1');
        const body = bodyOf(delivery);
        assert.deepEqual(body, {
          id: job.eventId,
          type: 'student_session.finished',
          created_at: new Date(clock.now()).toISOString(),
          institute_id: instituteId,
          data: {
            student_session_id: id,
            exam_id: examId,
            token,
            end_reason: 'api',
            ended_at: new Date(clock.now()).toISOString(),
            accommodations: NO_ACCOMMODATIONS_RECORD,
            breaks_taken: 0,
          },
        });
        assert.match(job.eventId, /^evt_[0-9a-f]{32}$/);
        const [done] = await newJobs(before);
        assert.equal(done?.status, 'succeeded');
      });

      it('is queued when the student finishes in the room and when the time runs out', async () => {
        clock.current = start;
        const examId = await createExam(teacher);
        const finisher = await createStudent(teacher, examId);
        const late = await createStudent(teacher, examId);
        for (const { token } of [finisher, late]) assert.equal((await room(token, 'start')).status, 200);
        const before = await lastJobId();
        clock.current = start + 5 * MINUTE;
        assert.equal((await room(finisher.token, 'finish')).status, 200);
        // Finishing again changes nothing and sends nothing more.
        assert.equal((await room(finisher.token, 'finish')).status, 409);
        clock.current = start + 40 * MINUTE;
        assert.equal((await room(late.token, '')).status, 200);
        assert.equal((await room(late.token, '')).status, 200);
        await runDueJobs();
        const events = receiver.received.map(bodyOf);
        assert.deepEqual(
          events.map((event) => object(event.data, 'data')),
          [
            {
              student_session_id: finisher.id,
              exam_id: examId,
              token: finisher.token,
              end_reason: 'finished',
              ended_at: new Date(start + 5 * MINUTE).toISOString(),
              accommodations: NO_ACCOMMODATIONS_RECORD,
              breaks_taken: 0,
            },
            {
              student_session_id: late.id,
              exam_id: examId,
              token: late.token,
              end_reason: 'time_up',
              ended_at: new Date(start + 30 * MINUTE).toISOString(),
              accommodations: NO_ACCOMMODATIONS_RECORD,
              breaks_taken: 0,
            },
          ],
        );
        assert.equal((await newJobs(before)).length, 2);
        for (const delivery of receiver.received) assertSigned(delivery, secret);
      });

      it('is not queued for an institute without a callback_url', async () => {
        const quiet = await server.institute();
        const quietTeacher = await server.user(quiet, 'teacher');
        const examId = await createExam(quietTeacher);
        const { id } = await createStudent(quietTeacher, examId);
        const before = await lastJobId();
        const ended = await quietTeacher.client.v3('POST', '/student_sessions/:id/end_exam', { id });
        assert.equal(ended.status, 200, ended.text);
        assert.deepEqual(await newJobs(before), []);
      });
    });

    describe('delivery', () => {
      it('redelivers with the same event id and body after the receiver refused, then answered 500', async () => {
        clock.current = start;
        const examId = await createExam(teacher);
        const { id } = await createStudent(teacher, examId);
        const before = await lastJobId();
        await receiver.stop();
        await endExam(id);
        await runDueJobs();
        let [job] = await newJobs(before);
        assert.ok(job !== undefined);
        assert.equal(job.status, 'queued');
        assert.equal(job.attempts, 1);
        assert.match(job.lastError ?? '', /ECONNREFUSED/);

        await receiver.start();
        receiver.status = 500;
        await runDueJobs();
        assert.equal(receiver.received.length, 0, 'not before its backoff has passed');
        clock.current += 10 * MINUTE;
        await runDueJobs();
        [job] = await newJobs(before);
        assert.equal(job?.attempts, 2);
        assert.equal(job?.status, 'queued');
        assert.equal(
          job?.lastError,
          `student_session.finished ${job?.eventId}: the callback answered 500: answer 500`,
        );

        receiver.status = 204;
        clock.current += 10 * MINUTE;
        await runDueJobs();
        [job] = await newJobs(before);
        assert.equal(job?.status, 'succeeded');
        assert.equal(job?.attempts, 3);
        assert.deepEqual(
          receiver.received.map((each) => [
            each.status,
            each.headers['x-invigil-event-id'],
            each.headers['x-invigil-delivery-attempt'],
          ]),
          [
            [500, job.eventId, '2'],
            [204, job.eventId, '3'],
          ],
        );
        const [failed, delivered] = receiver.received;
        assert.ok(failed !== undefined && delivered !== undefined);
        assert.equal(delivered.body, failed.body, 'the same bytes on every attempt');
        assert.equal(bodyOf(delivered).id, job.eventId);
        // Signed afresh at each attempt: the timestamp is the delivery's.
        assert.equal(assertSigned(delivered, secret), Math.floor(clock.now() / 1000));
        assert.ok(assertSigned(failed, secret) < assertSigned(delivered, secret));
      });

      it('treats a redirect as a failure and does not follow it', async () => {
        const examId = await createExam(teacher);
        const { id } = await createStudent(teacher, examId);
        const before = await lastJobId();
        receiver.status = 302;
        await endExam(id);
        await runDueJobs();
        const [job] = await newJobs(before);
        assert.equal(job?.status, 'queued');
        assert.match(job?.lastError ?? '', /the callback answered 302/);
        assert.equal(receiver.received.length, 1);
        receiver.status = 200;
        clock.current += 10 * MINUTE;
        await runDueJobs();
        assert.equal((await newJobs(before))[0]?.status, 'succeeded');
      });

      it('refuses a callback_url on an address OUTBOUND_ALLOWLIST does not name, and keeps retrying', async () => {
        const guarded = await server.institute();
        const guardedAdmin = await server.user(guarded, 'administrator');
        const patched = await guardedAdmin.client.v3('PATCH', '/institutes/:id', {
          id: guarded,
          callback_url: `http://[::1]:${receiver.port}/hooks`,
        });
        assert.equal(patched.status, 200, patched.text);
        const examId = await createExam(guardedAdmin);
        const { id } = await createStudent(guardedAdmin, examId);
        const before = await lastJobId();
        const ended = await guardedAdmin.client.v3('POST', '/student_sessions/:id/end_exam', { id });
        assert.equal(ended.status, 200, ended.text);
        await runDueJobs();
        const [job] = await newJobs(before);
        assert.equal(job?.status, 'queued');
        assert.equal(
          job?.lastError,
          'refused to connect to ::1: a loopback address not named in OUTBOUND_ALLOWLIST',
        );
        assert.equal(receiver.received.length, 0);
      });

      it('sends unsigned while the institute has no secret, and drops an event whose callback_url is gone', async () => {
        const unsigned = await server.institute();
        const unsignedAdmin = await server.user(unsigned, 'administrator');
        await unsignedAdmin.client.v3('PATCH', '/institutes/:id', {
          id: unsigned,
          callback_url: receiver.url,
        });
        const examId = await createExam(unsignedAdmin);
        const first = await createStudent(unsignedAdmin, examId);
        const second = await createStudent(unsignedAdmin, examId);
        const before = await lastJobId();
        for (const { id } of [first, second]) {
          const ended = await unsignedAdmin.client.v3('POST', '/student_sessions/:id/end_exam', { id });
          assert.equal(ended.status, 200, ended.text);
        }
        // The second is still queued when the address is removed: nothing to deliver it to.
        const [firstJob] = await newJobs(before);
        assert.ok(firstJob !== undefined);
        const worker = createWorker({
          db: server.app.database.db,
          dialect,
          clock,
          logger: pino({ level: 'silent' }),
          handlers: server.app.jobHandlers.filter((handler) => handler.kind === 'webhook.deliver'),
        });
        assert.ok(await worker.runOnce());
        assert.equal(receiver.received.length, 1);
        assert.equal(receiver.received[0]?.headers['x-invigil-signature'], undefined);
        assert.equal(receiver.received[0]?.headers['x-invigil-event-id'], firstJob.eventId);
        await unsignedAdmin.client.v3('PATCH', '/institutes/:id', { id: unsigned, callback_url: null });
        await runDueJobs();
        assert.equal(receiver.received.length, 1);
        assert.deepEqual(
          (await newJobs(before)).map((job) => job.status),
          ['succeeded', 'succeeded'],
        );
      });
    });

    describe('student_session.reviewed', () => {
      it('is queued with a settled verdict, in its transaction, and not for in_review', async () => {
        const examId = await createExam(teacher);
        const { id, token } = await createStudent(teacher, examId);
        await endExam(id);
        await runDueJobs();
        receiver.received.length = 0;

        let before = await lastJobId();
        const inReview = await teacher.client.v3('PUT', '/student_sessions/:id/review', {
          id,
          verdict: 'in_review',
        });
        assert.equal(inReview.status, 200, inReview.text);
        assert.deepEqual(await newJobs(before), []);

        before = await lastJobId();
        const passed = await teacher.client.v3('PUT', '/student_sessions/:id/review', {
          id,
          verdict: 'passed',
          comment: 'Nothing out of place.',
        });
        assert.equal(passed.status, 200, passed.text);
        const [job, ...others] = await newJobs(before);
        assert.ok(job !== undefined);
        assert.deepEqual(others, []);
        assert.equal(job.type, 'student_session.reviewed');

        await runDueJobs();
        const [delivery] = receiver.received;
        assert.ok(delivery !== undefined);
        assertSigned(delivery, secret);
        const body = bodyOf(delivery);
        assert.deepEqual(body.data, {
          student_session_id: id,
          exam_id: examId,
          token,
          verdict: 'passed',
          reviewer_id: teacher.id,
          reviewed_at: new Date(clock.now()).toISOString(),
        });
      });
    });

    describe('exam_documents_zip.ready', () => {
      it('is queued when the archive is recorded a success, and names where to download it', async () => {
        const examId = await createExam(teacher);
        const before = await lastJobId();
        const generated = await teacher.client.v3('PUT', '/exams/:id/generate_exam_documents_zip', {
          id: examId,
        });
        assert.equal(generated.status, 202, generated.text);
        assert.deepEqual(await newJobs(before), [], 'not while the archive is only queued');
        await runDueJobs();
        const status = await teacher.client.v3('GET', '/exams/:id/status_exam_documents_zip', { id: examId });
        assert.equal(object(status.json, 'body').zip_job_status, 'success');
        const [job, ...others] = await newJobs(before);
        assert.deepEqual(others, []);
        assert.equal(job?.status, 'succeeded');
        const [delivery] = receiver.received;
        assert.ok(delivery !== undefined);
        assertSigned(delivery, secret);
        assert.equal(delivery.headers['x-invigil-event'], 'exam_documents_zip.ready');
        assert.deepEqual(bodyOf(delivery), {
          id: job?.eventId,
          type: 'exam_documents_zip.ready',
          created_at: new Date(clock.now()).toISOString(),
          institute_id: instituteId,
          data: {
            exam_id: examId,
            generated_at: new Date(clock.now()).toISOString(),
            download_path: `/api/v3/exams/${examId}/download_exam_documents_zip`,
          },
        });
      });
    });
  });
}

// ---- A worker killed with SIGKILL in the middle of a delivery ----

/** The killed worker's lease: its job is free for another worker this long after the kill. */
const DOOMED_LEASE_MS = 1500;
const EVENTS = 5;

async function crashScenario(dialect: DialectName): Promise<void> {
  const receiver = new Receiver();
  await receiver.start();
  const server = await startTestServer(dialect, { env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
  const running: InvigilProcess[] = [];
  try {
    const instituteId = await server.institute();
    const administrator = await server.user(instituteId, 'administrator');
    const patched = await administrator.client.v3('PATCH', '/institutes/:id', {
      id: instituteId,
      callback_url: receiver.url,
      exam_finalized_emails_enabled: false,
    });
    assert.equal(patched.status, 200, patched.text);
    const secret = secretIn(
      await administrator.client.v3('POST', '/institutes/:id/webhook_secret', { id: instituteId }),
    ).secret as string;
    const exam = await administrator.client.v3('POST', '/exams', {
      name: 'Crash exam',
      type: 'classroom',
      duration_minutes: 30,
    });
    const examId = object(object(exam.json, 'body').exam, 'exam').id as number;
    for (let index = 0; index < EVENTS; index += 1) {
      const created = await administrator.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: `Crash ${index}`,
        email: `crash${index}@example.org`,
      });
      const id = object(object(created.json, 'body').student, 'student').id as number;
      const ended = await administrator.client.v3('POST', '/student_sessions/:id/end_exam', { id });
      assert.equal(ended.status, 200, ended.text);
    }
    const queued = await webhookJobs(server);
    assert.equal(queued.length, EVENTS);

    const env = {
      ...process.env,
      DATABASE_URL: server.database.url,
      DATA_DIR: server.database.dataDir,
      LOG_LEVEL: 'warn',
      OUTBOUND_ALLOWLIST: '127.0.0.1',
    };
    // The receiver takes the first POST and never answers it: the worker is mid-delivery when killed.
    receiver.hold = true;
    const doomed = launchInvigil(['worker'], { ...env, JOB_LEASE_MS: String(DOOMED_LEASE_MS) });
    running.push(doomed);
    await waitUntil(
      'the first delivery to arrive',
      () => Promise.resolve(receiver.received.length > 0),
      60_000,
    );
    assert.ok(doomed.child.kill('SIGKILL'));
    assert.equal((await doomed.exited).signal, 'SIGKILL', doomed.output());
    const held = receiver.received[0];
    assert.ok(held !== undefined);
    const heldId = held.headers['x-invigil-event-id'];
    const orphaned = (await webhookJobs(server)).find((job) => job.eventId === heldId);
    assert.equal(orphaned?.status, 'running', 'the kill landed during the delivery');

    receiver.hold = false;
    const recovering = launchInvigil(['worker'], env);
    running.push(recovering);
    await waitUntil(
      'every event to be delivered',
      async () => {
        if (!recovering.alive()) throw new Error(`worker exited: ${recovering.output()}`);
        return (await webhookJobs(server)).every((job) => job.status === 'succeeded');
      },
      90_000,
    );
    assert.deepEqual(await recovering.stop(), { code: 0, signal: null }, recovering.output());

    // None lost: every event answered 200 once, the interrupted one sent again with its own id.
    const answered = receiver.received.filter((each) => each.status === 200);
    assert.deepEqual(
      answered.map((each) => each.headers['x-invigil-event-id']).sort(),
      queued.map((job) => job.eventId).sort(),
    );
    const again = answered.find((each) => each.headers['x-invigil-event-id'] === heldId);
    assert.ok(again !== undefined);
    assert.equal(again.body, held.body);
    assert.equal(again.headers['x-invigil-delivery-attempt'], '2');
    for (const each of answered) assertSigned(each, secret);
  } finally {
    for (const each of running) if (each.alive()) each.child.kill('SIGKILL');
    await Promise.all(running.map((each) => each.exited));
    await server.close();
    await receiver.stop();
  }
}

for (const dialect of DIALECTS) {
  describe(`webhook delivery across a worker killed with SIGKILL [${dialect}]`, () => {
    it('delivers every event, the interrupted one again with the same event id', async () => {
      await crashScenario(dialect);
    });
  });
}
