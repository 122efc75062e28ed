/**
 * The candidate's phone as a second publisher of live proctoring (docs/live-proctoring.md, "The
 * phone"): its socket `/live/mobile/<pairing token>` through real HTTP and WebSockets over a fake
 * engine (who may open it, the hello, the publishing link, the end of the session, a second phone),
 * then the embedded engine with werift clients standing in for the browsers (one video line
 * published and forwarded to a proctor who subscribed to the phone, apart from the computer's three
 * lines: either publishing again leaves the other's connection alone).
 */
import assert from 'node:assert/strict';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import crypto from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import {
  MediaStreamTrack,
  type RTCPeerConnection,
  type RTCRtpTransceiver,
  type RtpPacket,
  Vp8Packetizer,
} from 'werift';
import { NO_MOBILE_CAM, NO_PHONE } from '../../src/domain/mobile/mobile.ts';
import { SESSION_FINISHED } from '../../src/domain/room/room.ts';
import { NO_LIVE_PROCTOR } from '../../src/live/access.ts';
import { createEmbeddedEngine, OFFER_LAYOUT, PHONE_OFFER_LAYOUT } from '../../src/live/embedded/engine.ts';
import { withoutFallbackStun } from '../../src/live/embedded/peer.ts';
import type { LiveEngine, LiveLink, LivePublisherIdentity } from '../../src/live/engine.ts';
import { EXAM_ENDED, PHONE_OPENED_ELSEWHERE, UNREADABLE_SIGNAL } from '../../src/live/hub.ts';
import { parseClientSignal } from '../../src/live/protocol.ts';
import { UPGRADE_REQUIRED } from '../../src/http/live/socket.routes.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { signIn, staffUser } from '../http/staff/support.ts';
import {
  clientPeer,
  FakeChannel,
  loopbackConfig,
  loopbackOnly,
  PublisherClient,
  recordingLog,
  vp8Frame,
  waitUntil,
} from './embedded-engine.support.ts';
import { FakeEngine, type FakeLink } from './fake-engine.ts';

type Json = Record<string, unknown>;

// ---- A WebSocket client (the `ws` package), as in hub.test.ts ----

interface WsClient {
  readonly readyState: number;
  on(event: 'open', listener: () => void): void;
  on(event: 'message', listener: (data: Buffer) => void): void;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  on(
    event: 'unexpected-response',
    listener: (request: ClientRequest, response: IncomingMessage) => void,
  ): void;
  send(data: string): void;
  close(): void;
}
type WsConstructor = new (url: string, options: { headers: Record<string, string> }) => WsClient;
const { WebSocket } = createRequire(import.meta.url)('ws') as { WebSocket: WsConstructor };

const WAIT_MS = 5000;

/** An open socket and what it received, taken in order by type. */
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

  /** The next message of `type` not read yet (waiting for it), removed from the list. */
  async take(type: string): Promise<Json> {
    const deadline = Date.now() + WAIT_MS;
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

  send(message: unknown): void {
    this.client.send(JSON.stringify(message));
  }

  close(): void {
    this.client.close();
  }
}

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
        resolve({ status: response.statusCode ?? 0, json: text === '' ? undefined : JSON.parse(text) });
      });
    });
    client.on('error', reject);
  });
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<TestSocket> {
  const answer = await handshake(url, headers);
  if (answer.socket === undefined) assert.fail(`refused ${answer.status}: ${JSON.stringify(answer.json)}`);
  return answer.socket;
}

async function eventually(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const PUBLIC_URL = 'https://exams.example.org';

for (const dialect of DIALECTS) {
  describe(`GET /live/mobile/:token, the phone's live socket [${dialect}]`, () => {
    let server: TestServer;
    let engine: FakeEngine;
    let wsBase: string;
    let owner: Awaited<ReturnType<typeof staffUser>>;
    let exam: number;
    let sequence = 0;

    before(async () => {
      engine = new FakeEngine();
      server = await startTestServer(dialect, {
        clock: new TestClock(),
        env: { PUBLIC_URL },
        liveEngine: engine,
      });
      wsBase = server.baseUrl.replace(/^http/, 'ws');
      owner = await staffUser(server, await server.institute(), 'teacher');
      exam = await newExam({ type: 'live_proctoring', mobile_cam: true });
    });

    after(async () => {
      await server.close();
    });

    async function newExam(settings: Record<string, string | boolean>): Promise<number> {
      const created = await owner.client.v3('POST', '/exams', {
        name: `Exam ${String(settings.type)}`,
        duration_minutes: 60,
        ...settings,
      });
      assert.equal(created.status, 201, created.text);
      return object(object(created.json, 'body').exam, 'exam').id as number;
    }

    /** A new session of `examId` with its room token and a pairing token for its phone. */
    async function newSession(
      examId: number,
      status?: string,
    ): Promise<{ id: number; token: string; mobileToken: string; name: string }> {
      sequence += 1;
      const name = `Student ${sequence}`;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name,
        email: `phone${sequence}-${dialect}@example.org`,
      });
      assert.equal(answer.status, 201, answer.text);
      const id = object(object(answer.json, 'body').student, 'student').id as number;
      const mobileToken = crypto.randomBytes(16).toString('hex');
      const db = server.app.database.db;
      await db
        .updateTable('student_sessions')
        .set({ mobile_token: mobileToken, ...(status === undefined ? {} : { status }) })
        .where('id', '=', id)
        .execute();
      const row = await db
        .selectFrom('student_sessions')
        .select('token')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return { id, token: row.token, mobileToken, name };
    }

    function phoneUrl(mobileToken: string): string {
      return `${wsBase}/live/mobile/${mobileToken}`;
    }

    /** The newest open link the fake engine gave the phone of `sessionId`. */
    function phoneLink(sessionId: number): Promise<FakeLink> {
      return engine.link(
        (link) =>
          link.publisher?.sessionId === sessionId && link.publisher.device === 'phone' && !link.closed,
      );
    }

    async function storedLiveStatus(id: number): Promise<string> {
      const row = await server.app.database.db
        .selectFrom('student_sessions')
        .select('live_status')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return row.live_status;
    }

    it('says hello as the phone and publishes through a link of its own, leaving the live status to the computer', async () => {
      const session = await newSession(exam);
      const socket = await connect(phoneUrl(session.mobileToken));
      assert.deepEqual(await socket.take('hello'), {
        type: 'hello',
        role: 'phone',
        join: { engine: 'embedded', iceServers: engine.iceServers },
      });
      const link = await phoneLink(session.id);
      assert.deepEqual(link.publisher, {
        examId: exam,
        sessionId: session.id,
        name: session.name,
        device: 'phone',
      });
      socket.send({ type: 'offer', sdp: 'v=0 the phone' });
      assert.deepEqual(await socket.take('answer'), { type: 'answer', sdp: 'answer to v=0 the phone' });

      // Whatever the phone's media does, the session's live status is its computer's.
      link.channel.mediaState('live');
      await new Promise((resolve) => setTimeout(resolve, 150));
      assert.equal(server.app.live.hub.statusOf(session.id), 'offline');
      assert.equal(await storedLiveStatus(session.id), 'offline');

      // The computer and the phone are two links side by side.
      const room = await connect(`${wsBase}/live/room/${session.token}`);
      await room.take('hello');
      const computer = await engine.link(
        (found) => found.publisher?.sessionId === session.id && found.publisher.device === undefined,
      );
      assert.notEqual(computer, link);
      assert.equal(computer.publisher?.device, undefined);
      socket.send({ type: 'subscribe', sessionId: session.id });
      assert.deepEqual(await socket.take('error'), {
        type: 'error',
        error: 'That message is not for this socket',
        fatal: false,
      });
      socket.close();
      await eventually('the phone link closed', () => link.closed);
      assert.equal(computer.closed, false, "the computer's link stays");
      room.close();
    });

    it('refuses before the upgrade: an unknown or a room token 404, a finished session, an exam without a phone or a live proctor 409', async () => {
      const unknown = await handshake(phoneUrl('0123456789abcdef0123456789abcdef'));
      assert.equal(unknown.status, 404);
      assert.deepEqual(unknown.json, { error: NO_PHONE });

      const session = await newSession(exam);
      const roomToken = await handshake(phoneUrl(session.token));
      assert.equal(roomToken.status, 404, 'a room token is no phone link');
      const pairingAsRoom = await handshake(`${wsBase}/live/room/${session.mobileToken}`);
      assert.equal(pairingAsRoom.status, 404, 'a phone link is no room token');

      const finished = await newSession(exam, 'exam_finished');
      const late = await handshake(phoneUrl(finished.mobileToken));
      assert.equal(late.status, 409);
      assert.deepEqual(late.json, { error: SESSION_FINISHED });

      const recorded = await newSession(await newExam({ type: 'record_review', mobile_cam: true }));
      const notLive = await handshake(phoneUrl(recorded.mobileToken));
      assert.equal(notLive.status, 409);
      assert.deepEqual(notLive.json, { error: NO_LIVE_PROCTOR });

      const noPhone = await newSession(await newExam({ type: 'live_proctoring' }));
      const refused = await handshake(phoneUrl(noPhone.mobileToken));
      assert.equal(refused.status, 409);
      assert.deepEqual(refused.json, { error: NO_MOBILE_CAM });
      assert.ok(!engine.links.some((link) => link.publisher?.device === 'phone' && link.id === finished.id));
    });

    it('answers a plain GET 426, counted against the phone link rate limit', async () => {
      const session = await newSession(exam);
      const plain = await httpRequest({ url: `${server.baseUrl}/live/mobile/${session.mobileToken}` });
      assert.equal(plain.status, 426);
      assert.deepEqual(plain.json, { error: UPGRADE_REQUIRED });
      assert.ok(plain.headers['x-ratelimit-limit'] !== undefined);
    });

    it('a second phone takes over: the older socket gets a fatal error and closes with 4000', async () => {
      const session = await newSession(exam);
      const first = await connect(phoneUrl(session.mobileToken));
      await first.take('hello');
      const firstLink = await phoneLink(session.id);
      const second = await connect(phoneUrl(session.mobileToken));
      await second.take('hello');
      assert.deepEqual(await first.take('error'), {
        type: 'error',
        error: PHONE_OPENED_ELSEWHERE,
        fatal: true,
      });
      assert.equal((await first.closed).code, 4000);
      assert.ok(firstLink.closed);
      const secondLink = await phoneLink(session.id);
      assert.notEqual(secondLink, firstLink);
      second.close();
    });

    it('closes the phone when the session ends: told `ended`, its link closed, the socket closed with 4002', async () => {
      const session = await newSession(exam, 'exam_started');
      const phone = await connect(phoneUrl(session.mobileToken));
      await phone.take('hello');
      const link = await phoneLink(session.id);
      const room = await connect(`${wsBase}/live/room/${session.token}`);
      await room.take('hello');

      const ended = await owner.client.v3('POST', '/student_sessions/:id/end_exam', { id: session.id });
      assert.equal(ended.status, 200, ended.text);
      assert.deepEqual(await phone.take('control'), { type: 'control', action: 'ended' });
      assert.deepEqual(await phone.take('error'), { type: 'error', error: EXAM_ENDED, fatal: true });
      assert.equal((await phone.closed).code, 4002);
      assert.ok(link.closed);
      assert.deepEqual(await room.take('control'), { type: 'control', action: 'ended' });
      room.close();
      const again = await handshake(phoneUrl(session.mobileToken));
      assert.equal(again.status, 409);
    });

    it("passes a proctor's subscription to a phone on to the engine, and refuses a device it does not know", async () => {
      const session = await newSession(exam);
      const browser = await signIn(server, owner.email);
      const wall = await connect(`${wsBase}/live/exams/${exam}`, {
        cookie: browser.cookie,
        origin: PUBLIC_URL,
      });
      await wall.take('hello');
      const link = await engine.link(
        (found) => found.role === 'proctor' && found.id === owner.id && !found.closed,
      );
      wall.send({ type: 'subscribe', sessionId: session.id, device: 'phone' });
      await wall.take('offer');
      wall.send({ type: 'answer', sessionId: session.id, sdp: 'v=0 proctor', device: 'phone' });
      wall.send({ type: 'unsubscribe', sessionId: session.id, device: 'phone' });
      await eventually('the unsubscribe reached the engine', () => link.received.length === 3);
      assert.deepEqual(link.received, [
        { type: 'subscribe', sessionId: session.id, device: 'phone' },
        { type: 'answer', sessionId: session.id, sdp: 'v=0 proctor', device: 'phone' },
        { type: 'unsubscribe', sessionId: session.id, device: 'phone' },
      ]);
      wall.send({ type: 'subscribe', sessionId: session.id, device: 'tablet' });
      assert.deepEqual(await wall.take('error'), { type: 'error', error: UNREADABLE_SIGNAL, fatal: false });
      assert.equal(link.received.length, 3);
      wall.close();

      // The protocol's reader: `device` is "phone" or left out; anything else is unreadable.
      const read = (value: Json) => parseClientSignal(JSON.stringify(value));
      assert.deepEqual(read({ type: 'unsubscribe', sessionId: 3 }), { type: 'unsubscribe', sessionId: 3 });
      assert.equal(read({ type: 'subscribe', sessionId: 3, device: null }), undefined);
      assert.equal(read({ type: 'answer', sessionId: 3, sdp: 'v=0', device: 'computer' }), undefined);
    });
  });
}

// ---- The embedded engine: the phone's one line, watched apart from the computer's three ----

/** This file's own UDP ports, clear of embedded-engine.test.ts's and of the kernel's ephemeral ones. */
const PORT_MIN = 46400;
const PORT_MAX = 46599;
const EXAM = 51;
const SESSION = 9;

/** A phone's browser: one sendonly video line, sending VP8 frames of its own (filled with 0x77). */
class PhoneClient {
  readonly pc = clientPeer({ video: 121, audio: 110 });
  readonly camera: RTCRtpTransceiver;
  pictureLossCount = 0;
  private readonly packetizer = new Vp8Packetizer({ payloadType: 96, ssrc: 5 });
  private frames = 0;

  constructor() {
    this.camera = this.pc.addTransceiver(new MediaStreamTrack({ kind: 'video' }), { direction: 'sendonly' });
    this.camera.sender.onPictureLossIndication.subscribe(() => {
      this.pictureLossCount += 1;
    });
    withoutFallbackStun(this.pc);
  }

  async publish(link: LiveLink, channel: FakeChannel): Promise<void> {
    await this.pc.setLocalDescription(await this.pc.createOffer());
    const answers = channel.of('answer').length;
    await link.receive({ type: 'offer', sdp: loopbackOnly(this.pc.localDescription?.sdp ?? '') });
    const answer = channel.of('answer')[answers];
    if (answer === undefined) throw new Error('the engine sent no answer to the phone');
    await this.pc.setRemoteDescription({ type: 'answer', sdp: loopbackOnly(answer.sdp) });
  }

  /** Sends a frame every 20 ms, a key frame when one was asked for. Returns the function that stops it. */
  pump(): () => void {
    let answered = this.pictureLossCount;
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      const key = this.pictureLossCount > answered || this.frames === 0;
      answered = this.pictureLossCount;
      this.frames += 1;
      const packets = this.packetizer.packetize(vp8Frame(key, 2000, 0x77), this.frames * 6000);
      Promise.all(packets.map((packet) => this.camera.sender.sendRtp(packet)))
        .catch(() => undefined)
        .finally(() => {
          busy = false;
        });
    }, 20);
    return () => clearInterval(timer);
  }

  close(): Promise<void> {
    return this.pc.close();
  }
}

/** A proctor's browser for one device of one candidate: answers the engine's offers, keeps what arrives. */
class Viewer {
  pc: RTCPeerConnection | undefined;
  received: RtpPacket[][] = [];
  /** How many offers it answered (each a new peer connection, as a browser makes). */
  answered = 0;

  async answer(link: LiveLink, sessionId: number, offer: string, device?: 'phone'): Promise<void> {
    await this.pc?.close();
    const pc = clientPeer();
    this.pc = pc;
    await pc.setRemoteDescription({ type: 'offer', sdp: loopbackOnly(offer) });
    withoutFallbackStun(pc);
    const transceivers = pc.getTransceivers();
    this.received = transceivers.map(() => []);
    for (const [index, transceiver] of transceivers.entries()) {
      const listen = (track: MediaStreamTrack) =>
        track.onReceiveRtp.subscribe((rtp) => this.received[index]?.push(rtp));
      transceiver.receiver.tracks.forEach(listen);
      transceiver.onTrack.subscribe(listen);
    }
    await pc.setLocalDescription(await pc.createAnswer());
    const sdp = loopbackOnly(pc.localDescription?.sdp ?? '');
    await link.receive({ type: 'answer', sessionId, sdp, ...(device === undefined ? {} : { device }) });
    this.answered += 1;
  }

  /** Packets received on line `line` of the current connection. */
  count(line = 0): number {
    return this.received[line]?.length ?? 0;
  }

  close(): Promise<void> {
    return this.pc?.close() ?? Promise.resolve();
  }
}

function mediaKinds(sdp: string): string[] {
  return [...sdp.matchAll(/^m=(\S+) /gm)].map((match) => match[1] ?? '');
}

describe('embedded live engine: the phone as a second publisher', () => {
  let engine: LiveEngine;
  const clients: { close(): Promise<void> }[] = [];
  const stops: (() => void)[] = [];
  const who: LivePublisherIdentity = { examId: EXAM, sessionId: SESSION, name: 'Candidate' };
  const phoneWho: LivePublisherIdentity = { ...who, device: 'phone' };

  beforeEach(() => {
    engine = createEmbeddedEngine(loopbackConfig(PORT_MIN, PORT_MAX), recordingLog());
  });

  afterEach(async () => {
    for (const stop of stops.splice(0)) stop();
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await engine.close();
  });

  /** Waits for a client's connection (DTLS included) before anything is closed. */
  function connected(pc: RTCPeerConnection): Promise<void> {
    return waitUntil('the connection', () => pc.connectionState === 'connected', 10_000);
  }

  async function phonePublishing(): Promise<{ link: LiveLink; channel: FakeChannel; client: PhoneClient }> {
    const channel = new FakeChannel();
    const link = await engine.publisher(phoneWho, channel);
    const client = new PhoneClient();
    clients.push(client);
    await client.publish(link, channel);
    await connected(client.pc);
    stops.push(client.pump());
    await waitUntil('the phone live', () => channel.states.includes('live'), 10_000);
    return { link, channel, client };
  }

  async function computerPublishing(): Promise<{
    link: LiveLink;
    channel: FakeChannel;
    client: PublisherClient;
  }> {
    const channel = new FakeChannel();
    const link = await engine.publisher(who, channel);
    const client = new PublisherClient();
    clients.push(client);
    await client.publish(link, channel);
    await connected(client.pc);
    stops.push(client.pump());
    await waitUntil('the computer live', () => channel.states.includes('live'), 10_000);
    return { link, channel, client };
  }

  /** A proctor's link with one viewer for the computer and one for the phone. */
  async function proctor() {
    const channel = new FakeChannel();
    const link = await engine.subscriber(
      { examId: EXAM, userId: 4, name: 'Proctor', mayWatch: () => Promise.resolve(true) },
      channel,
    );
    const computer = new Viewer();
    const phone = new Viewer();
    clients.push(computer, phone);
    const offers = (device: 'computer' | 'phone') =>
      channel.of('offer').filter((offer) => (offer.device === 'phone') === (device === 'phone'));
    /** Answers the n-th offer of `device` and waits until its video arrives. */
    const answer = async (device: 'computer' | 'phone', n: number) => {
      await waitUntil(`${device} offer ${n}`, () => offers(device).length >= n, 10_000);
      const offer = offers(device)[n - 1];
      assert.ok(offer !== undefined);
      const viewer = device === 'phone' ? phone : computer;
      await viewer.answer(link, SESSION, offer.sdp, device === 'phone' ? 'phone' : undefined);
      await waitUntil(`${device} video`, () => viewer.count() > 0, 10_000);
    };
    return { channel, link, computer, phone, offers, answer };
  }

  it("forwards the phone's one video line to a proctor who subscribed to the phone, in an offer marked `device: phone`", async () => {
    const phone = await phonePublishing();
    assert.deepEqual(phone.link.join, { engine: 'embedded', iceServers: [] });
    const answer = phone.channel.of('answer')[0]?.sdp ?? '';
    assert.deepEqual(mediaKinds(answer), ['video']);

    const watcher = await proctor();
    await watcher.link.receive({ type: 'subscribe', sessionId: SESSION, device: 'phone' });
    await watcher.answer('phone', 1);
    const [offer] = watcher.offers('phone');
    assert.equal(offer?.sessionId, SESSION);
    assert.equal(offer?.device, 'phone');
    assert.deepEqual(mediaKinds(offer?.sdp ?? ''), ['video']);
    await waitUntil('phone frames', () => watcher.phone.count() >= 20, 10_000);
    // What arrives is the phone's: its frames are filled with 0x77 behind the VP8 headers.
    const packet = watcher.phone.received[0]?.find((rtp) => rtp.payload.length > 100);
    assert.equal(packet?.payload.at(-1), 0x77);
    assert.equal(watcher.offers('computer').length, 0, 'the computer publishes nothing: no offer of it');

    assert.deepEqual(await engine.connected(EXAM), [
      { role: 'phone', id: SESSION, publishing: true },
      { role: 'proctor', id: 4, publishing: false },
    ]);
  });

  it("refuses a phone's offer that is not one video line, and a computer's of one line", async () => {
    const channel = new FakeChannel();
    const link = await engine.publisher(phoneWho, channel);
    const threeLines = new PublisherClient();
    clients.push(threeLines);
    await threeLines.pc.setLocalDescription(await threeLines.pc.createOffer());
    await assert.rejects(
      link.receive({ type: 'offer', sdp: threeLines.pc.localDescription?.sdp ?? '' }),
      new RegExp(PHONE_OFFER_LAYOUT),
    );
    const computer = await engine.publisher(who, new FakeChannel());
    const oneLine = new PhoneClient();
    clients.push(oneLine);
    await oneLine.pc.setLocalDescription(await oneLine.pc.createOffer());
    await assert.rejects(
      computer.receive({ type: 'offer', sdp: oneLine.pc.localDescription?.sdp ?? '' }),
      new RegExp(OFFER_LAYOUT),
    );
    link.close();
    computer.close();
  });

  it('offers the phone to a proctor who subscribed before it published, and says when it stops (device phone)', async () => {
    const watcher = await proctor();
    await watcher.link.receive({ type: 'subscribe', sessionId: SESSION, device: 'phone' });
    assert.equal(watcher.channel.of('offer').length, 0);
    const phone = await phonePublishing();
    await watcher.answer('phone', 1);
    phone.link.close();
    await waitUntil('unpublished', () => watcher.channel.of('unpublished').length === 1);
    assert.deepEqual(watcher.channel.of('unpublished'), [
      { type: 'unpublished', sessionId: SESSION, device: 'phone' },
    ]);
  });

  it('keeps the phone when the computer publishes again, and the computer when the phone does', async () => {
    const computer = await computerPublishing();
    const phone = await phonePublishing();
    const watcher = await proctor();
    await watcher.link.receive({ type: 'subscribe', sessionId: SESSION });
    await watcher.link.receive({ type: 'subscribe', sessionId: SESSION, device: 'phone' });
    await watcher.answer('computer', 1);
    await watcher.answer('phone', 1);
    const phoneConnection = watcher.phone.pc;

    // The computer publishes again (a reload, a new camera): a new offer for the computer only.
    const again = new PublisherClient();
    clients.push(again);
    await again.publish(computer.link, computer.channel);
    await connected(again.pc);
    stops.push(again.pump());
    await watcher.answer('computer', 2);
    assert.equal(watcher.offers('phone').length, 1, 'no new offer of the phone');
    assert.equal(watcher.phone.pc, phoneConnection);
    const phoneBefore = watcher.phone.count();
    await waitUntil('the phone still flowing', () => watcher.phone.count() > phoneBefore + 10, 10_000);

    // The phone publishes again (it switched cameras): a new offer for the phone only.
    const computerConnection = watcher.computer.pc;
    const phoneAgain = new PhoneClient();
    clients.push(phoneAgain);
    await phoneAgain.publish(phone.link, phone.channel);
    await connected(phoneAgain.pc);
    stops.push(phoneAgain.pump());
    await watcher.answer('phone', 2);
    assert.equal(watcher.offers('computer').length, 2, 'no new offer of the computer');
    assert.equal(watcher.computer.pc, computerConnection);
    const computerBefore = watcher.computer.count();
    await waitUntil(
      'the computer still flowing',
      () => watcher.computer.count() > computerBefore + 10,
      10_000,
    );

    // The phone leaves: the proctor is told about the phone alone; the computer flows on.
    phone.link.close();
    await waitUntil('the phone unpublished', () => watcher.channel.of('unpublished').length === 1);
    assert.equal(watcher.channel.of('unpublished')[0]?.device, 'phone');
    const stillBefore = watcher.computer.count();
    await waitUntil(
      'the computer flowing without the phone',
      () => watcher.computer.count() > stillBefore + 10,
      10_000,
    );
    assert.equal(watcher.offers('computer').length, 2);
  });

  it("ends the phone's link with the room", async () => {
    const phone = await phonePublishing();
    const watcher = await proctor();
    await watcher.link.receive({ type: 'subscribe', sessionId: SESSION, device: 'phone' });
    await watcher.answer('phone', 1);
    await engine.endRoom(EXAM);
    assert.deepEqual(await engine.connected(EXAM), []);
    // The ended link takes nothing any more: a new offer goes unanswered.
    const answers = phone.channel.of('answer').length;
    const late = new PhoneClient();
    clients.push(late);
    await late.pc.setLocalDescription(await late.pc.createOffer());
    await phone.link.receive({ type: 'offer', sdp: late.pc.localDescription?.sdp ?? '' });
    assert.equal(phone.channel.of('answer').length, answers);
  });
});
