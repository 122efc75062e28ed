/**
 * The live-proctoring sockets and their hub (docs/live-proctoring.md, "Sockets"), through real HTTP
 * and real WebSockets (the `ws` client, which can send Cookie and Origin), over a fake media engine
 * (test/live/fake-engine.ts): who may open them, the hello, the candidate's live status in the
 * database and on the wall, chat and control events, a second tab, bad frames, shutting down. The
 * ping and silence timings are checked on the hub alone, with short timings and scripted sockets.
 */
import assert from 'node:assert/strict';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { NO_ROOM, SESSION_FINISHED } from '../../src/domain/room/room.ts';
import { NO_LIVE_PROCTOR } from '../../src/live/access.ts';
import { createLiveEvents } from '../../src/live/events.ts';
import {
  createLiveHub,
  EXAM_ENDED,
  ENGINE_UNAVAILABLE,
  type LiveHubTiming,
  type LiveSocket,
  MAY_NOT_WATCH,
  OPENED_ELSEWHERE,
  SHUTTING_DOWN,
  UNREADABLE_SIGNAL,
  WRONG_SIDE,
} from '../../src/live/hub.ts';
import type { LiveMessageJson } from '../../src/live/protocol.ts';
import { UPGRADE_REQUIRED } from '../../src/http/live/socket.routes.ts';
import { NOT_AUTHORIZED, notFound } from '../helpers/answers.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { type Browser, signIn, staffUser } from '../http/staff/support.ts';
import { FakeEngine, REFUSED_SDP } from './fake-engine.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

// ---- A WebSocket client (the `ws` package, typed here by the little the tests use) ----

interface WsClient {
  readonly readyState: number;
  on(event: 'open', listener: () => void): void;
  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): void;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  on(
    event: 'unexpected-response',
    listener: (request: ClientRequest, response: IncomingMessage) => void,
  ): void;
  send(data: string | Buffer, options?: { binary?: boolean }): void;
  close(): void;
  terminate(): void;
}
type WsConstructor = new (url: string, options: { headers: Record<string, string> }) => WsClient;
const { WebSocket } = createRequire(import.meta.url)('ws') as { WebSocket: WsConstructor };

const WAIT_MS = 5000;

/** An open socket and everything it received, read in order by type. */
class TestSocket {
  readonly messages: Json[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly waiters: (() => void)[] = [];
  private readonly client: WsClient;

  constructor(client: WsClient) {
    this.client = client;
    client.on('message', (data) => {
      this.messages.push(object(JSON.parse(data.toString('utf8')), 'message'));
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => {
      client.on('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') }));
    });
  }

  get open(): boolean {
    return this.client.readyState === 1;
  }

  /** The next message of `type` not read yet (waiting for it), removed from the list. */
  async take(type: string, ms = WAIT_MS): Promise<Json> {
    const deadline = Date.now() + ms;
    for (;;) {
      const index = this.messages.findIndex((message) => message.type === type);
      if (index !== -1) return this.messages.splice(index, 1)[0] as Json;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${type} message; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Asserts no message of `type` arrives within `ms`. */
  async none(type: string, ms = 300): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    assert.equal(
      this.messages.find((message) => message.type === type),
      undefined,
      `unexpected ${type}: ${JSON.stringify(this.messages)}`,
    );
  }

  send(message: unknown): void {
    this.client.send(JSON.stringify(message));
  }

  sendRaw(data: string | Buffer, binary = false): void {
    this.client.send(data, { binary });
  }

  close(): void {
    this.client.close();
  }
}

/** What a handshake came to: an open socket, or the HTTP answer that refused it. */
type Handshake =
  | { readonly socket: TestSocket; readonly status: 101 }
  | { readonly socket?: undefined; readonly status: number; readonly json: unknown };

function handshake(url: string, headers: Record<string, string> = {}): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const client = new WebSocket(url, { headers });
    const socket = new TestSocket(client);
    client.on('open', () => resolve({ socket, status: 101 }));
    client.on('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({
          status: response.statusCode ?? 0,
          json: text === '' ? undefined : (JSON.parse(text) as unknown),
        });
      });
    });
    client.on('error', reject);
  });
}

/** Opens a socket, failing the test unless the handshake succeeds. */
async function connect(url: string, headers: Record<string, string> = {}): Promise<TestSocket> {
  const answer = await handshake(url, headers);
  if (answer.socket === undefined) assert.fail(`refused ${answer.status}: ${JSON.stringify(answer.json)}`);
  return answer.socket;
}

/** Waits until `check` holds (polling), failing with `what` after a few seconds. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const PUBLIC_URL = 'https://exams.example.org';

for (const dialect of DIALECTS) {
  describe(`live-proctoring sockets [${dialect}]`, () => {
    let server: TestServer;
    let engine: FakeEngine;
    let wsBase: string;
    let owner: TestUser & { email: string };
    let administrator: TestUser & { email: string };
    let proctor: TestUser & { email: string };
    let idleProctor: TestUser & { email: string };
    let reviewer: TestUser & { email: string };
    let outsider: TestUser & { email: string };
    let exam: number;
    let otherExam: number;
    let recordExam: number;
    let sequence = 0;
    const browsers = new Map<number, Browser>();

    before(async () => {
      engine = new FakeEngine();
      server = await startTestServer(dialect, {
        clock: new TestClock(),
        env: { PUBLIC_URL },
        liveEngine: engine,
      });
      wsBase = server.baseUrl.replace(/^http/, 'ws');
      const instituteId = await server.institute();
      owner = await staffUser(server, instituteId, 'teacher');
      administrator = await staffUser(server, instituteId, 'administrator');
      proctor = await staffUser(server, instituteId, 'proctor');
      idleProctor = await staffUser(server, instituteId, 'proctor');
      reviewer = await staffUser(server, instituteId, 'reviewer');
      outsider = await staffUser(server, await server.institute(), 'administrator');
      exam = await newExam('live_proctoring');
      otherExam = await newExam('live_proctoring');
      recordExam = await newExam('record_review');
    });

    after(async () => {
      await server.close();
    });

    async function newExam(type: string): Promise<number> {
      const created = await owner.client.v3('POST', '/exams', {
        name: `Exam ${type}`,
        type,
        duration_minutes: 60,
      });
      assert.equal(created.status, 201, created.text);
      return object(object(created.json, 'body').exam, 'exam').id as number;
    }

    /** A new session of `examId` (assigned to `proctorId`), with its room token. */
    async function newSession(
      examId: number,
      options: { proctorId?: number; status?: string } = {},
    ): Promise<{ id: number; token: string }> {
      sequence += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: `Student ${sequence}`,
        email: `student${sequence}-${dialect}@example.org`,
      });
      assert.equal(answer.status, 201, answer.text);
      const id = object(object(answer.json, 'body').student, 'student').id as number;
      if (options.proctorId !== undefined) {
        const assigned = await owner.client.v3('POST', '/student_sessions/:id/assign_proctor', {
          id,
          proctor_id: options.proctorId,
        });
        assert.equal(assigned.status, 200, assigned.text);
      }
      const db = server.app.database.db;
      if (options.status !== undefined) {
        await db
          .updateTable('student_sessions')
          .set({ status: options.status })
          .where('id', '=', id)
          .execute();
      }
      const row = await db
        .selectFrom('student_sessions')
        .select('token')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return { id, token: row.token };
    }

    async function storedStatus(id: number): Promise<string> {
      const row = await server.app.database.db
        .selectFrom('student_sessions')
        .select('live_status')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return row.live_status;
    }

    async function statusBecomes(id: number, status: string): Promise<void> {
      await eventually(`session ${id} ${status}`, async () => (await storedStatus(id)) === status);
    }

    async function browserOf(user: TestUser & { email: string }): Promise<Browser> {
      const known = browsers.get(user.id);
      if (known !== undefined) return known;
      const browser = await signIn(server, user.email);
      browsers.set(user.id, browser);
      return browser;
    }

    async function wallHeaders(user: TestUser & { email: string }): Promise<Record<string, string>> {
      return { cookie: (await browserOf(user)).cookie, origin: PUBLIC_URL };
    }

    function roomUrl(token: string): string {
      return `${wsBase}/live/room/${token}`;
    }

    function wallUrl(examId: number | string): string {
      return `${wsBase}/live/exams/${examId}`;
    }

    async function candidate(token: string): Promise<TestSocket> {
      const socket = await connect(roomUrl(token));
      await socket.take('hello');
      return socket;
    }

    async function wall(user: TestUser & { email: string }, examId = exam): Promise<TestSocket> {
      const socket = await connect(wallUrl(examId), await wallHeaders(user));
      await socket.take('hello');
      return socket;
    }

    function chat(sessionId: number, body: string): LiveMessageJson {
      return {
        id: sequence,
        student_session_id: sessionId,
        sender: 'proctor',
        author: 'A proctor',
        body,
        created_at: new Date().toISOString(),
      };
    }

    describe('GET /live/room/:token (the candidate)', () => {
      it('says hello first, then answers the offer through the engine; live status offline → connecting → live → offline, stored and in the V3 record', async () => {
        const session = await newSession(exam);
        assert.equal(await storedStatus(session.id), 'offline');
        const socket = await connect(roomUrl(session.token));
        const hello = await socket.take('hello');
        assert.deepEqual(hello, {
          type: 'hello',
          role: 'candidate',
          join: { engine: 'embedded', iceServers: engine.iceServers },
        });
        assert.ok(engine.calls.includes(`openRoom ${exam}`), engine.calls.join());
        await statusBecomes(session.id, 'connecting');

        const link = await engine.candidateLink(session.id);
        assert.deepEqual(link.publisher, {
          examId: exam,
          sessionId: session.id,
          name: `Student ${sequence}`,
        });
        socket.send({ type: 'offer', sdp: 'v=0 my offer' });
        assert.deepEqual(await socket.take('answer'), { type: 'answer', sdp: 'answer to v=0 my offer' });
        assert.deepEqual(link.received, [{ type: 'offer', sdp: 'v=0 my offer' }]);

        link.channel.mediaState('live');
        await statusBecomes(session.id, 'live');
        assert.equal(server.app.live.hub.statusOf(session.id), 'live');
        const shown = await owner.client.v3('GET', '/student_sessions/:id', { id: session.id });
        assert.equal(object(object(shown.json, 'body').student, 'student').live_status, 'live');

        link.channel.mediaState('connecting');
        await statusBecomes(session.id, 'connecting');
        link.channel.mediaState('live');
        await statusBecomes(session.id, 'live');

        socket.close();
        await socket.closed;
        await statusBecomes(session.id, 'offline');
        await eventually('the link closed', () => Promise.resolve(link.closed));
      });

      it('moves updated_at with each status change (so the monitor sees it), and only then', async () => {
        const session = await newSession(exam);
        const before = async () =>
          (
            await server.app.database.db
              .selectFrom('student_sessions')
              .select('updated_at')
              .where('id', '=', session.id)
              .executeTakeFirstOrThrow()
          ).updated_at;
        const first = Number(await before());
        const clock = server.app.clock as TestClock;
        clock.current += 5000;
        const socket = await candidate(session.token);
        await statusBecomes(session.id, 'connecting');
        assert.equal(Number(await before()), clock.current);
        assert.ok(clock.current > first);
        socket.close();
        await statusBecomes(session.id, 'offline');
      });

      it('refuses before the upgrade: 404 for an unknown token, 409 for a finished session or an exam without a live proctor', async () => {
        const unknown = await handshake(roomUrl('no-such-token'));
        assert.equal(unknown.status, 404);
        assert.deepEqual(unknown.json, { error: NO_ROOM });

        const finished = await newSession(exam, { status: 'exam_finished' });
        const late = await handshake(roomUrl(finished.token));
        assert.equal(late.status, 409);
        assert.deepEqual(late.json, { error: SESSION_FINISHED });

        const recorded = await newSession(recordExam);
        const notLive = await handshake(roomUrl(recorded.token));
        assert.equal(notLive.status, 409);
        assert.deepEqual(notLive.json, { error: NO_LIVE_PROCTOR });
        assert.equal(await storedStatus(finished.id), 'offline');
        assert.equal(await storedStatus(recorded.id), 'offline');
      });

      it('answers a plain GET 426 with a JSON error, and counts against the room rate limit', async () => {
        const session = await newSession(exam);
        const plain = await httpRequest({ url: `${server.baseUrl}/live/room/${session.token}` });
        assert.equal(plain.status, 426);
        assert.equal(plain.headers.upgrade, 'websocket');
        assert.deepEqual(plain.json, { error: UPGRADE_REQUIRED });
        assert.ok(plain.headers['x-ratelimit-limit'] !== undefined);
        const unknown = await httpRequest({ url: `${server.baseUrl}/live/room/nope` });
        assert.equal(unknown.status, 426);
      });

      it('a second tab wins: the older socket gets a fatal error and is closed, the status stays', async () => {
        const session = await newSession(exam);
        const first = await candidate(session.token);
        const firstLink = await engine.candidateLink(session.id);
        firstLink.channel.mediaState('live');
        await statusBecomes(session.id, 'live');

        const second = await candidate(session.token);
        assert.deepEqual(await first.take('error'), { type: 'error', error: OPENED_ELSEWHERE, fatal: true });
        const closed = await first.closed;
        assert.equal(closed.code, 4000);
        assert.ok(firstLink.closed);
        // The new tab is connecting until its media flows; the old link's reports no longer count.
        await statusBecomes(session.id, 'connecting');
        firstLink.channel.mediaState('live');
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal(await storedStatus(session.id), 'connecting');

        const secondLink = await engine.candidateLink(session.id);
        assert.notEqual(secondLink, firstLink);
        secondLink.channel.mediaState('live');
        await statusBecomes(session.id, 'live');
        second.send({ type: 'offer', sdp: 'again' });
        await second.take('answer');
        second.close();
        await statusBecomes(session.id, 'offline');
      });

      it('answers bad frames with a non-fatal error and keeps the socket open', async () => {
        const session = await newSession(exam);
        const socket = await candidate(session.token);
        socket.sendRaw('not json');
        assert.deepEqual(await socket.take('error'), {
          type: 'error',
          error: UNREADABLE_SIGNAL,
          fatal: false,
        });
        socket.sendRaw(Buffer.from('{"type":"offer","sdp":"x"}'), true);
        assert.deepEqual(await socket.take('error'), {
          type: 'error',
          error: UNREADABLE_SIGNAL,
          fatal: false,
        });
        socket.send({ type: 'offer' });
        assert.deepEqual(await socket.take('error'), {
          type: 'error',
          error: UNREADABLE_SIGNAL,
          fatal: false,
        });
        socket.send({ type: 'subscribe', sessionId: session.id });
        assert.deepEqual(await socket.take('error'), { type: 'error', error: WRONG_SIDE, fatal: false });
        socket.send({ type: 'offer', sdp: REFUSED_SDP });
        assert.deepEqual(await socket.take('error'), {
          type: 'error',
          error: 'The offer could not be read',
          fatal: false,
        });
        socket.sendRaw('x'.repeat(70 * 1024));
        assert.deepEqual(await socket.take('error'), {
          type: 'error',
          error: UNREADABLE_SIGNAL,
          fatal: false,
        });
        assert.ok(socket.open);
        socket.send({ type: 'offer', sdp: 'fine' });
        assert.deepEqual(await socket.take('answer'), { type: 'answer', sdp: 'answer to fine' });
        socket.close();
        await statusBecomes(session.id, 'offline');
      });

      it('closes the socket with a fatal error when the engine cannot give it a link', async () => {
        const session = await newSession(exam);
        engine.failLinks = true;
        try {
          const socket = await connect(roomUrl(session.token));
          assert.deepEqual(await socket.take('error'), {
            type: 'error',
            error: ENGINE_UNAVAILABLE,
            fatal: true,
          });
          assert.equal((await socket.closed).code, 1011);
          assert.equal(socket.messages.length, 0, 'no hello after the error');
        } finally {
          engine.failLinks = false;
        }
        await statusBecomes(session.id, 'offline');
      });
    });

    describe('GET /live/exams/:examId (the proctor wall)', () => {
      it('refuses before the upgrade: 403 without a session cookie, from another origin or none, 404 for another institute, 403 for a role that may not proctor', async () => {
        const headers = await wallHeaders(administrator);
        const noCookie = await handshake(wallUrl(exam), { origin: PUBLIC_URL });
        assert.equal(noCookie.status, 403);
        assert.deepEqual(noCookie.json, NOT_AUTHORIZED);
        const badCookie = await handshake(wallUrl(exam), {
          origin: PUBLIC_URL,
          cookie: 'invigil_session=nope',
        });
        assert.equal(badCookie.status, 403);

        const crossSite = await handshake(wallUrl(exam), { ...headers, origin: 'https://evil.example.com' });
        assert.equal(crossSite.status, 403);
        assert.deepEqual(crossSite.json, NOT_AUTHORIZED);
        const noOrigin = await handshake(wallUrl(exam), { cookie: headers.cookie ?? '' });
        assert.equal(noOrigin.status, 403);

        const other = await handshake(wallUrl(exam), await wallHeaders(outsider));
        assert.equal(other.status, 404);
        assert.deepEqual(other.json, notFound('Exam', exam));
        const missing = await handshake(wallUrl('999999'), headers);
        assert.equal(missing.status, 404);
        const junk = await handshake(wallUrl('abc'), headers);
        assert.equal(junk.status, 404);

        const reviewing = await handshake(wallUrl(exam), await wallHeaders(reviewer));
        assert.equal(reviewing.status, 403);
        assert.deepEqual(reviewing.json, NOT_AUTHORIZED);
        // A proctor of the institute with no session of this exam assigned.
        const idle = await handshake(wallUrl(exam), await wallHeaders(idleProctor));
        assert.equal(idle.status, 403);

        const notLive = await handshake(wallUrl(recordExam), headers);
        assert.equal(notLive.status, 409);
        assert.deepEqual(notLive.json, { error: NO_LIVE_PROCTOR });

        const plain = await httpRequest({ url: `${server.baseUrl}/live/exams/${exam}`, headers });
        assert.equal(plain.status, 426);
        assert.deepEqual(plain.json, { error: UPGRADE_REQUIRED });
      });

      it('lets managers watch every session of the exam and an assigned proctor only its own', async () => {
        const mine = await newSession(exam, { proctorId: proctor.id });
        const notMine = await newSession(exam);
        const elsewhere = await newSession(otherExam, { proctorId: proctor.id });

        const socket = await wall(proctor);
        const link = await engine.link(
          (found) => found.role === 'proctor' && found.id === proctor.id && !found.closed,
        );
        assert.equal(link.examId, exam);
        const user = await server.app.database.db
          .selectFrom('users')
          .select('name')
          .where('id', '=', proctor.id)
          .executeTakeFirstOrThrow();
        assert.equal(link.subscriber?.name, user.name);
        assert.equal(await link.subscriber?.mayWatch(mine.id), true);
        assert.equal(await link.subscriber?.mayWatch(notMine.id), false);
        assert.equal(await link.subscriber?.mayWatch(elsewhere.id), false);
        assert.equal(await link.subscriber?.mayWatch(2 ** 40), false);

        socket.send({ type: 'subscribe', sessionId: mine.id });
        assert.deepEqual(await socket.take('offer'), {
          type: 'offer',
          sessionId: mine.id,
          sdp: `offer of ${mine.id}`,
        });
        socket.send({ type: 'answer', sessionId: mine.id, sdp: 'proctor answer' });
        socket.send({ type: 'subscribe', sessionId: notMine.id });
        assert.deepEqual(await socket.take('error'), { type: 'error', error: MAY_NOT_WATCH, fatal: false });
        socket.send({ type: 'offer', sdp: 'a proctor does not publish' });
        assert.deepEqual(await socket.take('error'), { type: 'error', error: WRONG_SIDE, fatal: false });
        socket.send({ type: 'unsubscribe', sessionId: mine.id });
        await eventually('the unsubscribe reached the engine', () =>
          Promise.resolve(link.received.some((signal) => signal.type === 'unsubscribe')),
        );
        assert.deepEqual(
          link.received.map((signal) => signal.type),
          ['subscribe', 'answer', 'unsubscribe'],
        );
        assert.ok(socket.open);
        socket.close();
        await eventually('the proctor link closed', () => Promise.resolve(link.closed));

        const manager = await wall(owner);
        const managerLink = await engine.link(
          (found) => found.role === 'proctor' && found.id === owner.id && !found.closed,
        );
        assert.equal(await managerLink.subscriber?.mayWatch(notMine.id), true);
        assert.equal(await managerLink.subscriber?.mayWatch(elsewhere.id), false);
        manager.send({ type: 'subscribe', sessionId: notMine.id });
        await manager.take('offer');
        manager.close();

        const admin = await wall(administrator);
        admin.send({ type: 'subscribe', sessionId: mine.id });
        await admin.take('offer');
        admin.close();
      });

      it('pushes live statuses to the proctors who may watch the session, current ones first', async () => {
        const mine = await newSession(exam, { proctorId: proctor.id });
        const notMine = await newSession(exam);
        const early = await candidate(mine.token);
        await statusBecomes(mine.id, 'connecting');

        const manager = await wall(owner);
        const assigned = await wall(proctor);
        // What is live already comes right after hello.
        assert.deepEqual(await assigned.take('live'), {
          type: 'live',
          sessionId: mine.id,
          liveStatus: 'connecting',
        });
        assert.ok(
          manager.messages.some((message) => message.type === 'live' && message.sessionId === mine.id),
        );
        manager.messages.length = 0;

        (await engine.candidateLink(mine.id)).channel.mediaState('live');
        assert.deepEqual(await manager.take('live'), {
          type: 'live',
          sessionId: mine.id,
          liveStatus: 'live',
        });
        assert.deepEqual(await assigned.take('live'), {
          type: 'live',
          sessionId: mine.id,
          liveStatus: 'live',
        });

        const other = await candidate(notMine.token);
        assert.deepEqual(await manager.take('live'), {
          type: 'live',
          sessionId: notMine.id,
          liveStatus: 'connecting',
        });
        other.close();
        assert.deepEqual(await manager.take('live'), {
          type: 'live',
          sessionId: notMine.id,
          liveStatus: 'offline',
        });
        await assigned.none('live');

        early.close();
        assert.deepEqual(await assigned.take('live'), {
          type: 'live',
          sessionId: mine.id,
          liveStatus: 'offline',
        });
        manager.close();
        assigned.close();
      });
    });

    describe('live events', () => {
      it('delivers a chat message to the candidate and to the proctors who may watch it', async () => {
        const mine = await newSession(exam, { proctorId: proctor.id });
        const notMine = await newSession(exam);
        const room = await candidate(mine.token);
        const otherRoom = await candidate(notMine.token);
        const manager = await wall(owner);
        const assigned = await wall(proctor);

        const message = chat(mine.id, 'Please show your ID card');
        server.app.services.liveEvents.emit({ kind: 'message', examId: exam, sessionId: mine.id, message });
        assert.deepEqual(await room.take('message'), { type: 'message', message });
        assert.deepEqual(await manager.take('message'), { type: 'message', message });
        assert.deepEqual(await assigned.take('message'), { type: 'message', message });

        const other = chat(notMine.id, 'Not for the assigned proctor');
        server.app.services.liveEvents.emit({
          kind: 'message',
          examId: exam,
          sessionId: notMine.id,
          message: other,
        });
        assert.deepEqual(await otherRoom.take('message'), { type: 'message', message: other });
        assert.deepEqual(await manager.take('message'), { type: 'message', message: other });
        await assigned.none('message');
        await room.none('message', 0);

        for (const socket of [room, otherRoom, manager, assigned]) socket.close();
      });

      it('delivers controls to the candidate; `ended` closes its link, marks it offline and refuses further offers', async () => {
        const session = await newSession(exam, { status: 'exam_started' });
        const room = await candidate(session.token);
        const link = await engine.candidateLink(session.id);
        link.channel.mediaState('live');
        await statusBecomes(session.id, 'live');

        const emit = (action: 'paused' | 'resumed' | 'admitted' | 'ended') =>
          server.app.services.liveEvents.emit({
            kind: 'control',
            examId: exam,
            sessionId: session.id,
            action,
          });
        emit('paused');
        assert.deepEqual(await room.take('control'), { type: 'control', action: 'paused' });
        emit('resumed');
        assert.deepEqual(await room.take('control'), { type: 'control', action: 'resumed' });
        assert.equal(link.closed, false);

        emit('ended');
        assert.deepEqual(await room.take('control'), { type: 'control', action: 'ended' });
        assert.ok(link.closed);
        await statusBecomes(session.id, 'offline');
        room.send({ type: 'offer', sdp: 'once more' });
        assert.deepEqual(await room.take('error'), { type: 'error', error: EXAM_ENDED, fatal: false });
        link.channel.mediaState('live');
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal(await storedStatus(session.id), 'offline');
        room.close();
      });

      it('ends the candidate socket when a proctor ends the exam through the API', async () => {
        const session = await newSession(exam, { status: 'exam_started' });
        const room = await candidate(session.token);
        const ended = await owner.client.v3('POST', '/student_sessions/:id/end_exam', { id: session.id });
        assert.equal(ended.status, 200, ended.text);
        assert.deepEqual(await room.take('control'), { type: 'control', action: 'ended' });
        await statusBecomes(session.id, 'offline');
        room.close();
        const again = await handshake(roomUrl(session.token));
        assert.equal(again.status, 409);
      });
    });

    describe('shutting down', () => {
      it('hub.close tells every socket, closes their links, stores candidates offline and refuses new sockets', async () => {
        const session = await newSession(exam);
        const room = await candidate(session.token);
        const link = await engine.candidateLink(session.id);
        link.channel.mediaState('live');
        await statusBecomes(session.id, 'live');
        const manager = await wall(owner);

        await server.app.live.hub.close();
        assert.deepEqual(await room.take('error'), { type: 'error', error: SHUTTING_DOWN, fatal: true });
        assert.deepEqual(await manager.take('error'), { type: 'error', error: SHUTTING_DOWN, fatal: true });
        assert.equal((await room.closed).code, 1001);
        assert.equal((await manager.closed).code, 1001);
        assert.ok(link.closed);
        assert.equal(await storedStatus(session.id), 'offline');

        const late = await connect(roomUrl(session.token));
        assert.deepEqual(await late.take('error'), { type: 'error', error: SHUTTING_DOWN, fatal: true });
        assert.equal((await late.closed).code, 1001);
        assert.equal(await storedStatus(session.id), 'offline');
      });
    });
  });
}

describe('closing the HTTP server, as `serve` does on SIGTERM', () => {
  it('closes the hub first (every socket told why), then the engine with the app', async () => {
    const engine = new FakeEngine();
    const server = await startTestServer('sqlite', { liveEngine: engine });
    try {
      const instituteId = await server.institute();
      const owner = await server.user(instituteId, 'teacher');
      const created = await owner.client.v3('POST', '/exams', {
        name: 'Live',
        type: 'live_proctoring',
        duration_minutes: 60,
      });
      const examId = object(object(created.json, 'body').exam, 'exam').id as number;
      const added = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Student',
        email: 'student@example.org',
      });
      const sessionId = object(object(added.json, 'body').student, 'student').id as number;
      const { token } = await server.app.database.db
        .selectFrom('student_sessions')
        .select('token')
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow();
      const socket = await connect(`${server.baseUrl.replace(/^http/, 'ws')}/live/room/${token}`);
      await socket.take('hello');
      await eventually('connecting', () =>
        Promise.resolve(server.app.live.hub.statusOf(sessionId) === 'connecting'),
      );

      const started = Date.now();
      await server.app.server.close();
      assert.ok(Date.now() - started < 3000, `closing took ${Date.now() - started} ms`);
      assert.deepEqual(await socket.take('error'), { type: 'error', error: SHUTTING_DOWN, fatal: true });
      assert.equal((await socket.closed).code, 1001);
      const row = await server.app.database.db
        .selectFrom('student_sessions')
        .select('live_status')
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow();
      assert.equal(row.live_status, 'offline');
      assert.ok(!engine.calls.includes('close'));
    } finally {
      await server.close();
    }
    assert.ok(engine.calls.includes('close'));
  });
});

// ---- The hub alone: pings, silence, a proctor signed out ----

/** A socket the hub can hold, scripted by the test. */
class ScriptedSocket implements LiveSocket {
  readyState = 1;
  readonly sent: Json[] = [];
  pings = 0;
  closedWith: number | undefined;
  terminated = false;
  private readonly listeners = new Map<string, ((data: unknown, isBinary: boolean) => void)[]>();

  send(data: string): void {
    this.sent.push(object(JSON.parse(data), 'sent'));
  }
  close(code?: number): void {
    this.closedWith = code;
    this.finish();
  }
  terminate(): void {
    this.terminated = true;
    this.finish();
  }
  ping(): void {
    this.pings += 1;
  }
  on(event: string, listener: (data: unknown, isBinary: boolean) => void): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }
  emit(event: string, data?: unknown): void {
    for (const listener of this.listeners.get(event) ?? []) listener(data, false);
  }
  private finish(): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.emit('close');
  }
}

describe('the live hub on its own', () => {
  const statusDb = {
    updateTable: () => statusDb,
    set: () => statusDb,
    where: () => statusDb,
    executeTakeFirst: () => Promise.resolve({ numUpdatedRows: 1n }),
  };

  function hubWith(
    engine: FakeEngine,
    timing: Partial<LiveHubTiming> = { pingMs: 20, silentMs: 90, closeGraceMs: 50 },
  ) {
    return createLiveHub({
      engine,
      db: statusDb as unknown as Parameters<typeof createLiveHub>[0]['db'],
      liveEvents: createLiveEvents(),
      clock: new TestClock(),
      log: pino({ level: 'silent' }),
      timing,
    });
  }

  it('pings every socket and closes one that stays silent; a pong or a frame keeps it open', async () => {
    const engine = new FakeEngine();
    const hub = hubWith(engine);
    const silent = new ScriptedSocket();
    const talking = new ScriptedSocket();
    hub.candidate(silent, { examId: 1, sessionId: 1, name: 'Silent' });
    hub.candidate(talking, { examId: 1, sessionId: 2, name: 'Talking' });
    const keepAlive = setInterval(() => talking.emit('pong'), 10);
    try {
      await eventually('the silent socket cut', () => Promise.resolve(silent.terminated));
      assert.ok(silent.pings >= 2, `pinged ${silent.pings} times`);
      assert.equal(hub.statusOf(1), 'offline');
      assert.equal(talking.terminated, false);
      assert.equal(hub.statusOf(2), 'connecting');
      assert.ok(talking.pings >= 2);
      assert.deepEqual(talking.sent[0]?.type, 'hello');
      // Pages cannot see pings: each comes with a keepalive frame they can.
      assert.ok(talking.sent.filter((message) => message.type === 'keepalive').length >= 2);
    } finally {
      clearInterval(keepAlive);
      await hub.close();
    }
    assert.equal(talking.closedWith, 1001);
    assert.equal(hub.statusOf(2), 'offline');
  });

  it("closes a proctor's socket at the ping after its sign-in ended", async () => {
    const engine = new FakeEngine();
    const hub = hubWith(engine, { pingMs: 20, silentMs: 10_000, closeGraceMs: 50 });
    const socket = new ScriptedSocket();
    let signedIn = true;
    hub.proctor(socket, {
      examId: 1,
      userId: 5,
      name: 'Proctor',
      watchesAll: true,
      mayWatch: () => Promise.resolve(true),
      stillAllowed: () => Promise.resolve(signedIn),
    });
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(socket.closedWith, undefined);
    signedIn = false;
    await eventually('the signed-out socket closed', () => Promise.resolve(socket.closedWith !== undefined));
    assert.equal(socket.sent.at(-1)?.error, 'You are signed out');
    await hub.close();
  });

  it('opens the exam room once, keeps it while a socket comes back, ends it once idle and opens it again', async () => {
    const engine = new FakeEngine();
    const hub = hubWith(engine, { pingMs: 10_000, silentMs: 10_000, closeGraceMs: 50, roomIdleMs: 80 });
    const a = new ScriptedSocket();
    const b = new ScriptedSocket();
    hub.candidate(a, { examId: 3, sessionId: 1, name: 'A' });
    hub.candidate(b, { examId: 3, sessionId: 2, name: 'B' });
    await eventually('both linked', () => Promise.resolve(engine.links.length === 2));
    assert.deepEqual(engine.calls, ['openRoom 3']);
    a.close();
    b.close();
    // A reload within the idle time finds the same room.
    const c = new ScriptedSocket();
    hub.candidate(c, { examId: 3, sessionId: 1, name: 'A' });
    await eventually('linked again', () => Promise.resolve(engine.links.length === 3));
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.deepEqual(engine.calls, ['openRoom 3']);
    // Left alone past the idle time, the room is ended; the next socket opens it again.
    c.close();
    await eventually('the idle room ended', () => Promise.resolve(engine.calls.includes('endRoom 3')));
    const d = new ScriptedSocket();
    hub.candidate(d, { examId: 3, sessionId: 1, name: 'A' });
    await eventually('linked once more', () => Promise.resolve(engine.links.length === 4));
    assert.deepEqual(engine.calls, ['openRoom 3', 'endRoom 3', 'openRoom 3']);
    await hub.close();
  });
});
