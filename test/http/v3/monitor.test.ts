import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type ApiClient, fillPath, V3_ACCEPT } from '../../helpers/client.ts';
import { invalid, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { createPgCluster, type PgCluster } from '../../helpers/pg-cluster.ts';
import {
  freePort,
  type InvigilProcess,
  launchInvigil,
  waitUntil,
  waitUntilServing,
} from '../../helpers/processes.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { type Browser, signIn, staffUser } from '../staff/support.ts';
import { type EventStream, openEventStream } from './event-stream.support.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const STREAM_ACCEPT = `${V3_ACCEPT}, text/event-stream`;
const ZERO_COUNTS = {
  registered: 0,
  email_sent: 0,
  after_check_req: 0,
  in_setup: 0,
  exam_not_started: 0,
  exam_started: 0,
  exam_finished: 0,
  total: 0,
};

/** The URL of a signed GET of `template` (route parameters filled from `params`), as a client builds it. */
function signedUrl(
  baseUrl: string,
  client: ApiClient,
  template: string,
  params: Record<string, Scalar>,
): string {
  const { path, route } = fillPath(template, params);
  const sent = client.sign(params, route, 'v3');
  const query = new URLSearchParams(
    Object.entries(sent).map(([name, value]): [string, string] => [
      name,
      value === null ? '' : String(value),
    ]),
  );
  return `${baseUrl}/api/v3${path}?${query.toString()}`;
}

/** Opens the monitor stream of `exam` as a signed V3 client. */
function watch(
  baseUrl: string,
  client: ApiClient,
  exam: number,
  accept = STREAM_ACCEPT,
): Promise<EventStream> {
  return openEventStream(signedUrl(baseUrl, client, '/exams/:id/monitor', { id: exam }), {
    accept,
    authorization: `Token token=${client.credentials.apiToken}`,
  });
}

/** The session entry with `id` in a snapshot's data. */
function entryOf(snapshot: unknown, id: number): Json {
  const sessions = object(snapshot, 'snapshot').sessions as Json[];
  const entry = sessions.find((session) => session.id === id);
  assert.ok(entry !== undefined, `session ${id} in the snapshot`);
  return entry;
}

function idOf(answer: HttpAnswer, key: string): number {
  assert.ok(answer.status < 300, answer.text);
  return Number(object(object(answer.json, 'body')[key], key).id);
}

for (const dialect of DIALECTS) {
  describe(`GET /api/v3/exams/:id/monitor [${dialect}]`, () => {
    let server: TestServer;
    let owner: TestUser & { email: string };
    let browser: Browser;
    let proctor: TestUser;
    let otherTeacher: TestUser;
    let outsider: TestUser;

    before(async () => {
      server = await startTestServer(dialect);
      const instituteId = await server.institute();
      owner = await staffUser(server, instituteId, 'teacher');
      browser = await signIn(server, owner.email);
      proctor = await server.user(instituteId, 'proctor');
      otherTeacher = await server.user(instituteId, 'teacher');
      outsider = await server.user(await server.institute(), 'administrator');
    });

    after(() => server.close());

    async function createExam(): Promise<number> {
      return idOf(
        await owner.client.v3('POST', '/exams', {
          name: 'Monitored',
          type: 'classroom',
          duration_minutes: 60,
        }),
        'exam',
      );
    }

    async function addStudent(exam: number, name: string): Promise<{ id: number; token: string }> {
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: exam,
        name,
        email: `${name.toLowerCase()}-${crypto.randomBytes(3).toString('hex')}@example.org`,
      });
      const student = object(object(answer.json, 'body').student, 'student');
      return { id: Number(student.id), token: String(student.token) };
    }

    function room(token: string, method: string, action: string, body?: Json): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}/${action}`,
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    }

    async function noFeedsOpen(): Promise<void> {
      await waitUntil(
        'every monitor feed to close',
        () => Promise.resolve(server.app.services.monitor.openFeeds() === 0),
        3000,
      );
    }

    it('answers the snapshot as JSON when Accept does not ask for the stream', async () => {
      const exam = await createExam();
      const ann = await addStudent(exam, 'Ann');
      const answer = await owner.client.v3('GET', '/exams/:id/monitor', { id: exam });
      assert.equal(answer.status, 200, answer.text);
      assert.match(String(answer.headers['content-type']), /^application\/json/);
      const monitor = object(object(answer.json, 'body').monitor, 'monitor');
      assert.deepEqual(monitor.counts, { ...ZERO_COUNTS, registered: 1, total: 1 });
      const entry = entryOf(monitor, ann.id);
      assert.deepEqual(Object.keys(entry), [
        'id',
        'name',
        'email',
        'attempt',
        'status',
        'checks',
        'incidents_count',
        'proctor_id',
        'live_status',
        'clock_paused',
        'accommodations',
        'on_break',
        'break_ends_at',
        'breaks_taken',
        'updated_at',
      ]);
      assert.equal(entry.accommodations, null);
      assert.equal(entry.on_break, false);
      assert.equal(entry.break_ends_at, null);
      assert.equal(entry.breaks_taken, 0);
      assert.equal(entry.status, 'registered');
      assert.equal(entry.incidents_count, 0);
      assert.equal(entry.live_status, 'offline');
      assert.equal(entry.clock_paused, false);
      assert.deepEqual(entry.checks, {
        screenshare_check: 'not_started',
        microphone_check: 'not_started',
        speakers_check: 'not_started',
        webcam_check: 'not_started',
        mobile_check: 'not_started',
        bandwidth_check: 'not_started',
      });
    });

    it('streams a snapshot, then the changes made through the room and the V3 API, then closes cleanly', async () => {
      const exam = await createExam();
      const ann = await addStudent(exam, 'Ann');
      const bob = await addStudent(exam, 'Bob');
      const stream = await watch(server.baseUrl, owner.client, exam);
      try {
        assert.equal(stream.status, 200);
        assert.equal(stream.headers['content-type'], 'text/event-stream; charset=utf-8');
        assert.equal(stream.headers['cache-control'], 'no-cache, no-transform');
        const snapshot = await stream.next('snapshot', undefined, { from: 0 });
        assert.deepEqual(stream.retries, [3000]);
        assert.match(String(snapshot.id), /^\d+$/);
        assert.equal(object(snapshot.data, 'snapshot').exam_id, exam);
        assert.deepEqual(object(snapshot.data, 'snapshot').counts, {
          ...ZERO_COUNTS,
          registered: 2,
          total: 2,
        });
        assert.equal(entryOf(snapshot.data, bob.id).status, 'registered');

        // The candidate room passes the checks this exam needs: Ann moves on, and the counts with her.
        let from = stream.events.length;
        assert.equal((await room(ann.token, 'PUT', 'checks', { webcam_check: 'succeeded' })).status, 200);
        const checked = await stream.next(
          'session',
          (data) =>
            object(data, 'session').id === ann.id &&
            object(object(data, 's').checks, 'c').webcam_check === 'succeeded',
          { from },
        );
        assert.equal(object(checked.data, 'session').status, 'after_check_req');
        assert.deepEqual((await stream.next('counts', undefined, { from })).data, {
          ...ZERO_COUNTS,
          registered: 1,
          after_check_req: 1,
          total: 2,
        });

        // The room moves Ann into setup: her status and the counts change.
        from = stream.events.length;
        assert.equal((await room(ann.token, 'POST', 'enter')).status, 200);
        await stream.next(
          'session',
          (data) => object(data, 's').id === ann.id && object(data, 's').status === 'in_setup',
          {
            from,
          },
        );
        const counts = await stream.next('counts', undefined, { from });
        assert.deepEqual(counts.data, { ...ZERO_COUNTS, registered: 1, in_setup: 1, total: 2 });

        // A proctor records an incident through V3 (it leaves updated_at alone, and is still seen).
        from = stream.events.length;
        const incident = await proctor.client.v3('POST', '/student_sessions/:id/incidents', {
          id: bob.id,
          comment: 'Second person in the room',
        });
        assert.equal(incident.status, 201, incident.text);
        await stream.next(
          'session',
          (data) => object(data, 's').id === bob.id && object(data, 's').incidents_count === 1,
          {
            from,
          },
        );

        // A new session appears; a destroyed one is removed.
        from = stream.events.length;
        const cy = await addStudent(exam, 'Cy');
        await stream.next('session', (data) => object(data, 's').id === cy.id, { from });
        assert.deepEqual((await stream.next('counts', undefined, { from })).data, {
          ...ZERO_COUNTS,
          registered: 2,
          in_setup: 1,
          total: 3,
        });
        from = stream.events.length;
        assert.equal((await owner.client.v3('DELETE', '/student_sessions/:id', { id: cy.id })).status, 200);
        assert.deepEqual((await stream.next('removed', undefined, { from })).data, { id: cy.id });
        assert.deepEqual((await stream.next('counts', undefined, { from })).data, {
          ...ZERO_COUNTS,
          registered: 1,
          in_setup: 1,
          total: 2,
        });

        // Nothing changes: no event is repeated.
        from = stream.events.length;
        await new Promise((resolve) => setTimeout(resolve, 2500));
        assert.deepEqual(stream.events.slice(from), []);
        const ids = stream.events.map((event) => Number(event.id));
        assert.deepEqual(
          ids,
          [...ids].sort((a, b) => a - b),
          'event ids never go back',
        );
      } finally {
        stream.close();
      }
      await noFeedsOpen();
    });

    it("shows a student's accommodations and a running rest break, and streams their changes", async () => {
      const exam = await createExam();
      const ann = await addStudent(exam, 'Ann');
      const accommodations = {
        extra_time_minutes: 10,
        extra_time_percent: 50,
        breaks: { count: 2, minutes: 10 },
        exemptions: [{ check: 'webcam', reason: 'No camera' }],
        assistive_technology: true,
        note: 'Screen reader',
      };
      const db = server.app.database.db;
      // Written as the student-sessions repository stores them (the V3 write is another helper's).
      await db
        .updateTable('student_sessions')
        .set({ accommodations: JSON.stringify(accommodations), updated_at: Date.now() })
        .where('id', '=', ann.id)
        .execute();
      const read = await owner.client.v3('GET', '/exams/:id/monitor', { id: exam });
      const entry = entryOf(object(object(read.json, 'body').monitor, 'monitor'), ann.id);
      assert.deepEqual(entry.accommodations, accommodations);
      assert.equal(entry.on_break, false);

      const stream = await watch(server.baseUrl, owner.client, exam);
      try {
        await stream.next('snapshot', undefined, { from: 0 });
        const from = stream.events.length;
        // A rest break begins (the room's break action stamps break_started_at and updated_at).
        const began = Date.UTC(2026, 10, 29, 10, 32);
        await db
          .updateTable('student_sessions')
          .set({ break_started_at: began, breaks_taken: 1, updated_at: Date.now() })
          .where('id', '=', ann.id)
          .execute();
        const onBreak = await stream.next(
          'session',
          (data) => object(data, 's').id === ann.id && object(data, 's').on_break === true,
          { from },
        );
        const session = object(onBreak.data, 'session');
        assert.equal(session.break_ends_at, new Date(began + 10 * 60_000).toISOString());
        assert.equal(session.breaks_taken, 1);
        assert.deepEqual(session.accommodations, accommodations);
      } finally {
        stream.close();
      }
      await noFeedsOpen();
    });

    it('streams to the console with its staff cookie (a GET needs no CSRF header)', async () => {
      const exam = await createExam();
      await addStudent(exam, 'Di');
      const stream = await openEventStream(`${server.baseUrl}/api/v3/exams/${exam}/monitor`, {
        accept: STREAM_ACCEPT,
        cookie: browser.cookie,
      });
      try {
        assert.equal(stream.status, 200);
        const snapshot = await stream.next('snapshot', undefined, { from: 0 });
        assert.equal(object(snapshot.data, 'snapshot').exam_id, exam);
      } finally {
        stream.close();
      }
      await noFeedsOpen();
    });

    it('lets anyone who may read the exam watch (a proctor); others get JSON errors before any stream', async () => {
      const exam = await createExam();
      const allowed = await watch(server.baseUrl, proctor.client, exam);
      allowed.close();
      assert.equal(allowed.status, 200);
      for (const user of [otherTeacher, outsider]) {
        const refused = await watch(server.baseUrl, user.client, exam);
        assert.equal(refused.status, 404);
        assert.match(String(refused.headers['content-type']), /^application\/json/);
        assert.deepEqual(JSON.parse(refused.text), notFound('Exam', exam));
      }
      const missing = await watch(server.baseUrl, owner.client, 987654321);
      assert.equal(missing.status, 404);
      assert.deepEqual(JSON.parse(missing.text), notFound('Exam', 987654321));
      const unsigned = await openEventStream(`${server.baseUrl}/api/v3/exams/${exam}/monitor`, {
        accept: STREAM_ACCEPT,
        authorization: `Token token=${owner.credentials.apiToken}`,
      });
      assert.equal(unsigned.status, 403);
      assert.deepEqual(JSON.parse(unsigned.text), NOT_AUTHORIZED);
      const withoutV3 = await watch(server.baseUrl, owner.client, exam, 'text/event-stream');
      assert.equal(withoutV3.status, 406);
      await noFeedsOpen();
    });

    it('answers hostile ids promptly with a JSON 404, never a stream', async () => {
      for (const id of ['0', '-1', 'abc', '1e3', '99999999999999999999', '💥', ' 1']) {
        const started = performance.now();
        const answer = await openEventStream(
          signedUrl(server.baseUrl, owner.client, '/exams/:id/monitor', { id, x: '{"a":' }),
          { accept: STREAM_ACCEPT, authorization: `Token token=${owner.credentials.apiToken}` },
        );
        assert.equal(answer.status, 404, id);
        assert.deepEqual(JSON.parse(answer.text), notFound('Exam', id));
        assert.ok(performance.now() - started < 2000, `${id}: ${Math.round(performance.now() - started)} ms`);
      }
      // A NUL is refused like in every input: 422 naming the field, and no stream either.
      const answer = await openEventStream(
        signedUrl(server.baseUrl, owner.client, '/exams/:id/monitor', { id: '\u0000' }),
        { accept: STREAM_ACCEPT, authorization: `Token token=${owner.credentials.apiToken}` },
      );
      assert.equal(answer.status, 422);
      assert.deepEqual(JSON.parse(answer.text), invalid('id', 'contains a NUL character'));
      await noFeedsOpen();
    });

    it('ends open streams with `end` {reason: reconnect} when the server shuts down, without waiting', async () => {
      const own = await startTestServer(dialect);
      const institute = await own.institute();
      const teacher = await own.user(institute, 'teacher');
      const exam = idOf(
        await teacher.client.v3('POST', '/exams', {
          name: 'Closing',
          type: 'classroom',
          duration_minutes: 5,
        }),
        'exam',
      );
      const stream = await watch(own.baseUrl, teacher.client, exam);
      await stream.next('snapshot', undefined, { from: 0 });
      const started = performance.now();
      await own.close();
      await stream.ended;
      assert.ok(performance.now() - started < 5000, 'the shutdown did not wait for the stream');
      assert.deepEqual(stream.events.at(-1)?.event, 'end');
      assert.deepEqual(stream.events.at(-1)?.data, { reason: 'reconnect' });
    });
  });
}

describe('GET /api/v3/exams/:id/monitor across processes on one PostgreSQL', () => {
  let server: TestServer;
  let other: InvigilProcess;
  let otherUrl: string;
  let owner: TestUser;

  before(async () => {
    server = await startTestServer('postgres');
    const port = await freePort();
    otherUrl = `http://127.0.0.1:${port}`;
    // A second `invigil serve` on the same schema and data folder (and so the same server key).
    other = launchInvigil(['serve', '--no-worker'], {
      PATH: process.env.PATH,
      DATABASE_URL: server.database.url,
      DATA_DIR: server.database.dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
    });
    await waitUntilServing(other, otherUrl);
    owner = await server.user(await server.institute(), 'teacher');
  });

  after(async () => {
    await other.stop();
    await server.close();
  });

  it('sees within seconds a change that another process made', async () => {
    const exam = idOf(
      await owner.client.v3('POST', '/exams', {
        name: 'Two processes',
        type: 'classroom',
        duration_minutes: 30,
      }),
      'exam',
    );
    const student = object(
      object(
        (
          await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
            exam_id: exam,
            name: 'Eve',
            email: 'eve@example.org',
          })
        ).json,
        'body',
      ).student,
      'student',
    );
    const stream = await watch(server.baseUrl, owner.client, exam);
    try {
      await stream.next('snapshot', undefined, { from: 0 });
      const from = stream.events.length;
      const checked = await httpRequest({
        url: `${otherUrl}/api/room/${String(student.token)}/checks`,
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ microphone_check: 'failed' }),
      });
      assert.equal(checked.status, 200, checked.text);
      const seen = await stream.next(
        'session',
        (data) => object(object(data, 's').checks, 'c').microphone_check === 'failed',
        { from },
      );
      assert.equal(object(seen.data, 'session').id, student.id);
    } finally {
      stream.close();
    }
  });
});

describe('GET /api/v3/exams/:id/monitor while PostgreSQL is away', () => {
  let cluster: PgCluster;
  let server: TestServer;
  let owner: TestUser;

  before(async () => {
    cluster = await createPgCluster();
    server = await startTestServer('postgres', { env: { DATABASE_URL: cluster.url } });
    owner = await server.user(await server.institute(), 'teacher');
  });

  after(async () => {
    await server.close().catch(() => undefined);
    await cluster.destroy();
  });

  it('ends a running stream with `end` {reason: unavailable}, answers 503 before a new one, and streams again once it is back', async () => {
    const exam = idOf(
      await owner.client.v3('POST', '/exams', { name: 'Outage', type: 'classroom', duration_minutes: 30 }),
      'exam',
    );
    const stream = await watch(server.baseUrl, owner.client, exam);
    await stream.next('snapshot', undefined, { from: 0 });
    await cluster.stop('fast');
    try {
      const end = await stream.next('end', undefined, { from: 0, timeoutMs: 10_000 });
      assert.deepEqual(end.data, { reason: 'unavailable' });
      await stream.ended;
      assert.equal(server.app.services.monitor.openFeeds(), 0);
      const refused = await watch(server.baseUrl, owner.client, exam);
      assert.equal(refused.status, 503);
      assert.equal(refused.headers['retry-after'], '5');
      assert.deepEqual(JSON.parse(refused.text), { error: 'Service unavailable' });
    } finally {
      await cluster.start();
    }
    await waitUntil(
      'the monitor to stream again',
      async () => {
        const again = await watch(server.baseUrl, owner.client, exam);
        again.close();
        return again.status === 200;
      },
      20_000,
    );
  });
});
