/**
 * The LiveKit engine and the candidate's phone (docs/live-proctoring.md, "The phone"): the phone
 * joins the exam's room as its own participant, `candidate-<session id>-phone`, allowed to publish a
 * camera and nothing else; its link and the computer's are removed apart; the room's listing names
 * it. Against a small stand-in for LiveKit's RoomService (Twirp JSON over HTTP, a bearer token that
 * must verify with the API secret), as livekit-engine.test.ts does at length.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { TokenVerifier } from 'livekit-server-sdk';
import type { LiveChannel } from '../../src/live/engine.ts';
import type { LiveJoin } from '../../src/live/protocol.ts';
import { createLivekitEngine, type LivekitConfig } from '../../src/live/livekit/livekit-engine.ts';

const API_KEY = 'APIinvigilphone';
const API_SECRET = 'another-secret-of-at-least-thirty-two-characters';

interface Participant {
  readonly sid: string;
  readonly identity: string;
  readonly state: 'ACTIVE' | 'DISCONNECTED';
  readonly tracks: readonly { sid: string; type: 'AUDIO' | 'VIDEO'; source: string }[];
}

/** ListParticipants and RemoveParticipant of LiveKit's RoomService, for rooms the test fills. */
class FakeRoomService {
  readonly rooms = new Map<string, Participant[]>();
  /** `room identity` of every participant removed, in order. */
  readonly removed: string[] = [];
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

  private answer(response: http.ServerResponse, status: number, body: unknown): void {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '');
    try {
      const claims = await this.verifier.verify(bearer?.[1] ?? '');
      if (claims.video?.roomAdmin !== true) throw new Error('not an admin token');
    } catch {
      return this.answer(response, 401, { code: 'unauthenticated', msg: 'invalid token' });
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { room: string; identity?: string };
    const participants = this.rooms.get(body.room);
    if (participants === undefined) return this.answer(response, 404, { code: 'not_found', msg: 'no room' });
    if (request.url === '/twirp/livekit.RoomService/ListParticipants') {
      return this.answer(response, 200, { participants });
    }
    if (request.url === '/twirp/livekit.RoomService/RemoveParticipant') {
      const index = participants.findIndex((participant) => participant.identity === body.identity);
      if (index === -1) return this.answer(response, 404, { code: 'not_found', msg: 'no participant' });
      participants.splice(index, 1);
      this.removed.push(`${body.room} ${body.identity}`);
      return this.answer(response, 200, {});
    }
    return this.answer(response, 404, { code: 'bad_route', msg: 'unknown method' });
  }
}

function channel(): LiveChannel & { states: string[] } {
  const states: string[] = [];
  return { states, send: () => undefined, mediaState: (state) => states.push(state) };
}

function livekitJoin(join: LiveJoin): Extract<LiveJoin, { engine: 'livekit' }> {
  if (join.engine !== 'livekit') assert.fail(`a LiveKit join, got ${join.engine}`);
  return join;
}

function participant(identity: string, tracks: Participant['tracks'] = []): Participant {
  return { sid: `PA_${identity}`, identity, state: 'ACTIVE', tracks };
}

const CAMERA = { sid: 'TR_cam', type: 'VIDEO', source: 'CAMERA' } as const;

describe("LiveKit engine: the candidate's phone", () => {
  const fake = new FakeRoomService();
  const verifier = new TokenVerifier(API_KEY, API_SECRET);
  let config: LivekitConfig;

  before(async () => {
    const port = await fake.start();
    config = {
      engine: 'livekit',
      url: `ws://127.0.0.1:${port}`,
      apiKey: API_KEY,
      apiSecret: API_SECRET,
      iceServers: [],
    };
  });
  after(() => fake.stop());
  beforeEach(() => {
    fake.rooms.clear();
    fake.removed.length = 0;
  });

  it('admits the phone to the exam room as candidate-<id>-phone, to publish a camera only', async () => {
    const engine = createLivekitEngine(config);
    const link = await engine.publisher(
      { examId: 7, sessionId: 12, name: 'Ada Lovelace', device: 'phone' },
      channel(),
    );
    const join = livekitJoin(link.join);
    assert.equal(join.room, 'invigil-exam-7');
    const claims = await verifier.verify(join.token, 0);
    assert.equal(claims.sub, 'candidate-12-phone');
    assert.equal(claims.name, 'Ada Lovelace (phone)');
    assert.deepEqual(claims.video, {
      roomJoin: true,
      room: 'invigil-exam-7',
      canPublish: true,
      canPublishSources: ['camera'],
      canSubscribe: false,
      canPublishData: false,
    });
    link.close();
    await engine.close();
  });

  it("passes the phone's media reports to its channel, and nothing else", async () => {
    const engine = createLivekitEngine(config);
    const reports = channel();
    const link = await engine.publisher({ examId: 7, sessionId: 12, name: 'A', device: 'phone' }, reports);
    await link.receive({ type: 'media', state: 'live' });
    await link.receive({ type: 'subscribe', sessionId: 12, device: 'phone' });
    assert.deepEqual(reports.states, ['live']);
    link.close();
    await engine.close();
  });

  it("removes the phone when its link closes, and the computer when its own does: neither takes the other's place", async () => {
    const engine = createLivekitEngine(config);
    fake.rooms.set('invigil-exam-7', [
      participant('candidate-5', [CAMERA]),
      participant('candidate-5-phone', [CAMERA]),
    ]);
    const computer = await engine.publisher({ examId: 7, sessionId: 5, name: 'C' }, channel());
    const phone = await engine.publisher({ examId: 7, sessionId: 5, name: 'C', device: 'phone' }, channel());
    // Both are links of their own: the phone's newer link does not make the computer's stale.
    phone.close();
    await engine.close(); // waits for the removals under way
    assert.deepEqual(fake.removed, ['invigil-exam-7 candidate-5-phone']);
    computer.close();
    await engine.close();
    assert.deepEqual(fake.removed, ['invigil-exam-7 candidate-5-phone', 'invigil-exam-7 candidate-5']);
  });

  it('lists the phone apart from its candidate', async () => {
    const engine = createLivekitEngine(config);
    fake.rooms.set('invigil-exam-7', [
      participant('candidate-5', [CAMERA]),
      participant('candidate-5-phone', [CAMERA]),
      participant('candidate-6-phone'),
      participant('candidate-6-phones'),
      participant('candidate-06-phone'),
      participant('proctor-3-phone'),
    ]);
    assert.deepEqual(await engine.connected(7), [
      { role: 'candidate', id: 5, publishing: true },
      { role: 'phone', id: 5, publishing: true },
      { role: 'phone', id: 6, publishing: false },
    ]);
    await engine.close();
  });
});
