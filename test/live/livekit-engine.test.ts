import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ClaimGrants, TokenVerifier } from 'livekit-server-sdk';
import type { IceServer } from '../../src/config/config.ts';
import type { LiveChannel, LiveLink } from '../../src/live/engine.ts';
import type { LiveJoin } from '../../src/live/protocol.ts';
import {
  createLivekitEngine,
  type LivekitConfig,
  type LivekitEngineOptions,
  livekitApiUrl,
  TOKEN_TTL_SECONDS,
} from '../../src/live/livekit/livekit-engine.ts';
import type { ServerMessage } from '../../src/live/protocol.ts';

const API_KEY = 'APIinvigiltest';
const API_SECRET = 'a-secret-of-at-least-thirty-two-characters';
const ICE: readonly IceServer[] = [{ urls: 'turn:turn.example.org:3478', username: 'u', credential: 'c' }];

/** A participant as LiveKit's RoomService answers it in JSON (protobuf JSON names, enum names). */
interface ParticipantJson {
  readonly sid: string;
  readonly identity: string;
  readonly state: 'JOINING' | 'JOINED' | 'ACTIVE' | 'DISCONNECTED';
  readonly tracks: readonly { sid: string; type: 'AUDIO' | 'VIDEO'; source: string }[];
}

/** One request the fake received, after its credential was checked. */
interface SeenRequest {
  readonly method: string;
  readonly contentType: string | undefined;
  readonly body: Record<string, unknown>;
  readonly claims: ClaimGrants;
}

/** What the fake does with every request: answer as LiveKit would, fail with 500, or never answer. */
type FakeMode = 'serve' | 'fail' | 'hang';

/** Which grant LiveKit's RoomService requires for each method the engine calls. */
const REQUIRED_GRANT: Readonly<Record<string, 'roomCreate' | 'roomList' | 'roomAdmin'>> = {
  CreateRoom: 'roomCreate',
  DeleteRoom: 'roomCreate',
  ListRooms: 'roomList',
  ListParticipants: 'roomAdmin',
  RemoveParticipant: 'roomAdmin',
};

/**
 * A stand-in for LiveKit's RoomService: Twirp over HTTP, JSON bodies, POST to
 * /twirp/livekit.RoomService/<Method>, a bearer token signed with the API secret carrying the grant
 * the method needs (roomAdmin ones for the room named in the body), Twirp's JSON errors
 * (`{"code","msg"}` with Content-Type application/json).
 */
class FakeRoomService {
  readonly rooms = new Map<string, ParticipantJson[]>();
  readonly seen: SeenRequest[] = [];
  mode: FakeMode = 'serve';
  private readonly verifier = new TokenVerifier(API_KEY, API_SECRET);
  private readonly server = http.createServer((request, response) => {
    void this.handle(request, response);
  });

  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  reset(): void {
    this.rooms.clear();
    this.seen.length = 0;
    this.mode = 'serve';
  }

  private answer(response: http.ServerResponse, status: number, body: unknown): void {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  }

  private twirpError(response: http.ServerResponse, status: number, code: string, msg: string): void {
    this.answer(response, status, { code, msg });
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (this.mode === 'hang') return;
    if (this.mode === 'fail') return this.twirpError(response, 500, 'internal', 'the fake is failing');
    const match = /^\/twirp\/livekit\.RoomService\/(\w+)$/.exec(request.url ?? '');
    if (request.method !== 'POST' || match === null)
      return this.twirpError(response, 404, 'bad_route', 'no route');
    const method = match[1] ?? '';
    const contentType = request.headers['content-type'];
    if (!(contentType ?? '').startsWith('application/json')) {
      return this.twirpError(response, 415, 'bad_route', 'only JSON');
    }
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '');
    if (bearer === null) return this.twirpError(response, 401, 'unauthenticated', 'no token');
    let claims: ClaimGrants;
    try {
      claims = await this.verifier.verify(bearer[1] ?? '');
    } catch {
      return this.twirpError(response, 401, 'unauthenticated', 'invalid token');
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    this.seen.push({ method, contentType, body, claims });
    const grant = REQUIRED_GRANT[method];
    const video = claims.video ?? {};
    const allowed =
      grant !== undefined && video[grant] === true && (grant !== 'roomAdmin' || video.room === body.room);
    if (!allowed) return this.twirpError(response, 403, 'permission_denied', 'permissions denied');

    const roomName = String(method === 'CreateRoom' ? body.name : body.room);
    const participants = this.rooms.get(roomName);
    switch (method) {
      case 'CreateRoom':
        if (participants === undefined) this.rooms.set(roomName, []);
        return this.answer(response, 200, {
          sid: `RM_${roomName}`,
          name: roomName,
          emptyTimeout: body.emptyTimeout,
        });
      case 'DeleteRoom':
        if (participants === undefined) return this.twirpError(response, 404, 'not_found', 'room not found');
        this.rooms.delete(roomName);
        return this.answer(response, 200, {});
      case 'ListParticipants':
        if (participants === undefined) return this.twirpError(response, 404, 'not_found', 'room not found');
        return this.answer(response, 200, { participants });
      case 'RemoveParticipant': {
        const index = (participants ?? []).findIndex((participant) => participant.identity === body.identity);
        if (participants === undefined || index === -1) {
          return this.twirpError(response, 404, 'not_found', 'participant not found');
        }
        participants.splice(index, 1);
        return this.answer(response, 200, {});
      }
      default:
        return this.twirpError(response, 404, 'bad_route', 'unknown method');
    }
  }
}

/** A channel recording what the engine tells it. */
function recordingChannel(): LiveChannel & { sent: ServerMessage[]; states: string[] } {
  const sent: ServerMessage[] = [];
  const states: string[] = [];
  return { sent, states, send: (message) => sent.push(message), mediaState: (state) => states.push(state) };
}

function livekitJoin(join: LiveJoin): Extract<LiveJoin, { engine: 'livekit' }> {
  if (join.engine !== 'livekit') assert.fail(`a LiveKit join, got ${join.engine}`);
  return join;
}

/** A log collecting warnings. */
function collectingLog(): NonNullable<LivekitEngineOptions['log']> & {
  warnings: { details: Record<string, unknown>; message: string }[];
} {
  const warnings: { details: Record<string, unknown>; message: string }[] = [];
  return { warnings, warn: (details, message) => warnings.push({ details, message }) };
}

function participant(
  identity: string,
  tracks: ParticipantJson['tracks'] = [],
  state: ParticipantJson['state'] = 'ACTIVE',
): ParticipantJson {
  return { sid: `PA_${identity}`, identity, state, tracks };
}

const CAMERA = { sid: 'TR_cam', type: 'VIDEO', source: 'CAMERA' } as const;

describe('LiveKit engine', () => {
  const fake = new FakeRoomService();
  let config: LivekitConfig;

  before(async () => {
    const port = await fake.start();
    config = {
      engine: 'livekit',
      url: `ws://127.0.0.1:${port}`,
      apiKey: API_KEY,
      apiSecret: API_SECRET,
      iceServers: ICE,
    };
  });
  after(() => fake.stop());
  beforeEach(() => fake.reset());

  describe('join tokens', () => {
    const verifier = new TokenVerifier(API_KEY, API_SECRET);

    it('admits a candidate to its exam room to publish camera, microphone and screen only', async () => {
      const engine = createLivekitEngine(config);
      const before = Math.floor(Date.now() / 1000);
      const link = await engine.publisher(
        { examId: 7, sessionId: 12, name: 'Ada Lovelace' },
        recordingChannel(),
      );
      const join = livekitJoin(link.join);
      assert.deepEqual(
        { url: join.url, room: join.room, iceServers: join.iceServers },
        { url: config.url, room: 'invigil-exam-7', iceServers: ICE },
      );
      const claims = await verifier.verify(join.token, 0);
      assert.equal(claims.sub, 'candidate-12');
      assert.equal(claims.iss, API_KEY);
      assert.equal(claims.name, 'Ada Lovelace');
      assert.deepEqual(claims.video, {
        roomJoin: true,
        room: 'invigil-exam-7',
        canPublish: true,
        canPublishSources: ['camera', 'microphone', 'screen_share'],
        canSubscribe: false,
        canPublishData: false,
      });
      assert.equal(claims.video?.hidden, undefined);
      assert.equal((claims.exp ?? 0) - (claims.nbf ?? 0), TOKEN_TTL_SECONDS);
      assert.ok(
        (claims.exp ?? 0) >= before + TOKEN_TTL_SECONDS &&
          (claims.exp ?? 0) <= before + TOKEN_TTL_SECONDS + 5,
      );
      link.close();
      await engine.close();
    });

    it('admits a proctor hidden, to subscribe and never publish', async () => {
      const engine = createLivekitEngine(config);
      const link = await engine.subscriber(
        { examId: 7, userId: 3, name: 'Prof. Proctor', mayWatch: () => Promise.resolve(true) },
        recordingChannel(),
      );
      const join = livekitJoin(link.join);
      assert.equal(join.room, 'invigil-exam-7');
      const claims = await verifier.verify(join.token, 0);
      assert.equal(claims.sub, 'proctor-3');
      assert.equal(claims.name, 'Prof. Proctor');
      assert.deepEqual(claims.video, {
        roomJoin: true,
        room: 'invigil-exam-7',
        hidden: true,
        canPublish: false,
        canSubscribe: true,
        canPublishData: false,
      });
      link.close();
      await engine.close();
    });

    it('signs with the API secret: another secret or key does not verify the token', async () => {
      const engine = createLivekitEngine(config);
      const link = await engine.publisher({ examId: 1, sessionId: 2, name: 'C' }, recordingChannel());
      const { token } = livekitJoin(link.join);
      await assert.rejects(new TokenVerifier(API_KEY, `${API_SECRET}x`).verify(token));
      await assert.rejects(new TokenVerifier('APIother', API_SECRET).verify(token));
      link.close();
      await engine.close();
    });

    it('mints tokens that stop working after their lifetime', async () => {
      const engine = createLivekitEngine(config, { tokenTtlSeconds: 1 });
      const link = await engine.publisher({ examId: 1, sessionId: 2, name: 'C' }, recordingChannel());
      const { token } = livekitJoin(link.join);
      await verifier.verify(token, 0);
      await sleep(2100);
      await assert.rejects(verifier.verify(token, 0), /exp/);
      link.close();
      await engine.close();
    });

    it('answers the LiveKit address and the TURN servers as configured, the API over http(s)', () => {
      const engine = createLivekitEngine(config);
      assert.equal(engine.kind, 'livekit');
      assert.deepEqual(engine.iceServers, ICE);
      assert.equal(livekitApiUrl('wss://live.example.org'), 'https://live.example.org');
      assert.equal(livekitApiUrl('ws://127.0.0.1:7880/'), 'http://127.0.0.1:7880/');
      assert.equal(livekitApiUrl('https://live.example.org:7443'), 'https://live.example.org:7443');
    });
  });

  describe('signals from browsers', () => {
    it("passes a candidate's media reports to the channel and ignores every other signal", async () => {
      const engine = createLivekitEngine(config);
      const channel = recordingChannel();
      const link = await engine.publisher({ examId: 1, sessionId: 2, name: 'C' }, channel);
      await link.receive({ type: 'media', state: 'connecting' });
      await link.receive({ type: 'offer', sdp: 'v=0' });
      await link.receive({ type: 'subscribe', sessionId: 4 });
      await link.receive({ type: 'media', state: 'live' });
      assert.deepEqual(channel.states, ['connecting', 'live']);
      assert.deepEqual(channel.sent, []);
      link.close();
      await link.receive({ type: 'media', state: 'connecting' });
      assert.deepEqual(channel.states, ['connecting', 'live']);
      await engine.close();
    });

    it("ignores a proctor's signals, media reports included", async () => {
      const engine = createLivekitEngine(config);
      const channel = recordingChannel();
      const link = await engine.subscriber(
        { examId: 1, userId: 9, name: 'P', mayWatch: () => Promise.resolve(true) },
        channel,
      );
      await link.receive({ type: 'media', state: 'live' });
      await link.receive({ type: 'subscribe', sessionId: 2 });
      await link.receive({ type: 'answer', sessionId: 2, sdp: 'v=0' });
      assert.deepEqual(channel.states, []);
      assert.deepEqual(channel.sent, []);
      link.close();
      await engine.close();
    });
  });

  describe('rooms through the RoomService', () => {
    it('opens the exam room with a roomCreate token over JSON, and opening again is fine', async () => {
      const log = collectingLog();
      const engine = createLivekitEngine(config, { log });
      await engine.openRoom(7);
      await engine.openRoom(7);
      assert.deepEqual([...fake.rooms.keys()], ['invigil-exam-7']);
      assert.equal(fake.seen.length, 2);
      const [first] = fake.seen;
      assert.equal(first?.method, 'CreateRoom');
      assert.match(first?.contentType ?? '', /^application\/json/);
      assert.equal(first?.body.name, 'invigil-exam-7');
      assert.equal(first?.claims.video?.roomCreate, true);
      assert.deepEqual(log.warnings, []);
      await engine.close();
    });

    it('takes a LiveKit that says the room already exists as success', async () => {
      const log = collectingLog();
      const server = http.createServer((_request, response) => {
        response.writeHead(409, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ code: 'already_exists', msg: 'room already exists' }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const other = createLivekitEngine({ ...config, url: `ws://127.0.0.1:${port}` }, { log });
      await other.openRoom(7);
      assert.deepEqual(log.warnings, []);
      server.close();
      await other.close();
    });

    it('ends the exam room, and ending a room that is gone is fine', async () => {
      const log = collectingLog();
      const engine = createLivekitEngine(config, { log });
      await engine.openRoom(7);
      await engine.openRoom(8);
      await engine.endRoom(7);
      assert.deepEqual([...fake.rooms.keys()], ['invigil-exam-8']);
      const deletion = fake.seen.find((request) => request.method === 'DeleteRoom');
      assert.equal(deletion?.body.room, 'invigil-exam-7');
      assert.equal(deletion?.claims.video?.roomCreate, true);
      await engine.endRoom(7);
      assert.deepEqual(log.warnings, []);
      await engine.close();
    });

    it('lists who is connected: candidates by session, proctors by user, publishing = has tracks', async () => {
      const log = collectingLog();
      const engine = createLivekitEngine(config, { log });
      fake.rooms.set('invigil-exam-7', [
        participant('candidate-5', [CAMERA, { sid: 'TR_mic', type: 'AUDIO', source: 'MICROPHONE' }]),
        participant('candidate-6', [], 'JOINED'),
        participant('proctor-3'),
        participant('candidate-8', [CAMERA], 'DISCONNECTED'),
        participant('EG_recorder'),
        participant('candidate-05'),
        participant('candidate-0'),
      ]);
      fake.rooms.set('invigil-exam-8', [participant('candidate-9', [CAMERA])]);
      assert.deepEqual(await engine.connected(7), [
        { role: 'candidate', id: 5, publishing: true },
        { role: 'candidate', id: 6, publishing: false },
        { role: 'proctor', id: 3, publishing: false },
      ]);
      const listing = fake.seen.find((request) => request.method === 'ListParticipants');
      assert.equal(listing?.body.room, 'invigil-exam-7');
      assert.equal(listing?.claims.video?.roomAdmin, true);
      assert.equal(listing?.claims.video?.room, 'invigil-exam-7');
      assert.deepEqual(await engine.connected(99), [], 'no room: nobody');
      assert.deepEqual(log.warnings, []);
      await engine.close();
    });

    it('removes the participant when its link closes, unless a newer link of it is open', async () => {
      const log = collectingLog();
      const engine = createLivekitEngine(config, { log });
      fake.rooms.set('invigil-exam-7', [participant('candidate-5', [CAMERA]), participant('proctor-3')]);
      const removals = () =>
        fake.seen
          .filter((request) => request.method === 'RemoveParticipant')
          .map((request) => [request.body.room, request.body.identity, request.claims.video?.roomAdmin]);
      const who = { examId: 7, sessionId: 5, name: 'C' };
      const old = await engine.publisher(who, recordingChannel());
      const reconnected = await engine.publisher(who, recordingChannel());
      old.close();
      await engine.close(); // waits for removals under way: there are none
      assert.deepEqual(removals(), []);

      reconnected.close();
      reconnected.close();
      await engine.close();
      assert.deepEqual(removals(), [['invigil-exam-7', 'candidate-5', true]]);

      const second = createLivekitEngine(config, { log });
      const proctor = await second.subscriber(
        { examId: 7, userId: 3, name: 'P', mayWatch: () => Promise.resolve(true) },
        recordingChannel(),
      );
      proctor.close();
      await second.close();
      assert.deepEqual(removals(), [
        ['invigil-exam-7', 'candidate-5', true],
        ['invigil-exam-7', 'proctor-3', true],
      ]);
      assert.deepEqual(fake.rooms.get('invigil-exam-7'), []);
      assert.deepEqual(log.warnings, []);
    });

    it('lets a new link wait for the removal of the same participant before handing out its token', async () => {
      const engine = createLivekitEngine(config, { requestTimeoutSeconds: 0.5 });
      fake.rooms.set('invigil-exam-7', [participant('candidate-5', [CAMERA])]);
      const who = { examId: 7, sessionId: 5, name: 'C' };
      const first = await engine.publisher(who, recordingChannel());
      fake.mode = 'hang';
      first.close();
      let second: LiveLink | undefined;
      const pending = engine.publisher(who, recordingChannel()).then((link) => (second = link));
      await sleep(200);
      assert.equal(second, undefined, 'waiting for the removal');
      fake.mode = 'serve';
      await engine.close(); // the hanging removal times out, then the new link is handed out
      await pending;
      assert.ok(second);
    });

    it('refuses new links once closed', async () => {
      const engine = createLivekitEngine(config);
      await engine.close();
      await assert.rejects(
        engine.publisher({ examId: 1, sessionId: 2, name: 'C' }, recordingChannel()),
        /closed/,
      );
    });
  });

  describe('when LiveKit fails', () => {
    it('logs and carries on when LiveKit answers errors', async () => {
      const log = collectingLog();
      const engine = createLivekitEngine(config, { log });
      fake.mode = 'fail';
      await engine.openRoom(7);
      await engine.endRoom(7);
      assert.deepEqual(await engine.connected(7), []);
      const link = await engine.publisher({ examId: 7, sessionId: 5, name: 'C' }, recordingChannel());
      link.close();
      await engine.close();
      assert.deepEqual(
        log.warnings.map((warning) => [warning.message, warning.details.status, warning.details.room]),
        [
          ['LiveKit could not open a room', 500, 'invigil-exam-7'],
          ['LiveKit could not end a room', 500, 'invigil-exam-7'],
          ['LiveKit could not list a room', 500, 'invigil-exam-7'],
          ['LiveKit could not remove a participant', 500, 'invigil-exam-7'],
        ],
      );
    });

    it('logs a refused credential (wrong API secret)', async () => {
      const log = collectingLog();
      const engine = createLivekitEngine({ ...config, apiSecret: `${API_SECRET}-wrong` }, { log });
      assert.deepEqual(await engine.connected(7), []);
      await engine.openRoom(7);
      assert.deepEqual(
        log.warnings.map((warning) => [warning.details.status, warning.details.code]),
        [
          [401, 'unauthenticated'],
          [401, 'unauthenticated'],
        ],
      );
      assert.equal(fake.rooms.size, 0);
    });

    it('logs an unreachable LiveKit', async () => {
      const log = collectingLog();
      const server = http.createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const engine = createLivekitEngine({ ...config, url: `wss://127.0.0.1:${port}` }, { log });
      assert.deepEqual(await engine.connected(7), []);
      await engine.endRoom(7);
      assert.equal(log.warnings.length, 2);
      assert.match(String(log.warnings[0]?.details.error), /fetch failed/);
    });

    it('gives up on a LiveKit that does not answer after the request timeout', async () => {
      const log = collectingLog();
      const engine = createLivekitEngine(config, { log, requestTimeoutSeconds: 0.3 });
      fake.mode = 'hang';
      const started = Date.now();
      assert.deepEqual(await engine.connected(7), []);
      assert.ok(Date.now() - started < 3000);
      assert.equal(log.warnings.length, 1);
      assert.match(String(log.warnings[0]?.details.error), /Timeout|abort/i);
    });
  });
});
