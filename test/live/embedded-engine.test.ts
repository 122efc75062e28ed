import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, before, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RTCPeerConnection } from 'werift';
import {
  createEmbeddedEngine,
  MAY_NOT_WATCH,
  NOT_WATCHING,
  OFFER_LAYOUT,
} from '../../src/live/embedded/engine.ts';
import type { LiveEngine, LiveLink } from '../../src/live/engine.ts';
import { peerSettings, portCursor, withoutMdnsCandidates } from '../../src/live/embedded/peer.ts';
import { isVp8KeyFrameStart } from '../../src/live/embedded/vp8.ts';
import {
  FakeChannel,
  loopbackConfig,
  PUBLISHER_PAYLOAD_TYPES,
  PublisherClient,
  recordingLog,
  SubscriberClient,
  waitUntil,
} from './embedded-engine.support.ts';

/** This file's own UDP ports (the engine's range), clear of the kernel's ephemeral ones. */
const PORT_MIN = 46000;
const PORT_MAX = 46199;
const EXAM = 41;
const SESSION = 7;

/**
 * Waits for a client's connection (DTLS included). Each test lets its handshakes finish before it
 * closes anything: werift cannot cancel the retransmission timer of a DTLS handshake cut short,
 * which would hold the process for half a minute.
 */
function connected(pc: RTCPeerConnection): Promise<void> {
  return waitUntil('the connection', () => pc.connectionState === 'connected');
}

function udpHandles(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === 'UDPWrap').length;
}

function watcher(mayWatch: (sessionId: number) => boolean = () => true) {
  return {
    examId: EXAM,
    userId: 3,
    name: 'Proctor',
    mayWatch: (id: number) => Promise.resolve(mayWatch(id)),
  };
}

describe('embedded live engine', () => {
  let engine: LiveEngine;
  let log: ReturnType<typeof recordingLog>;
  const clients: { close(): Promise<void> }[] = [];
  const stops: (() => void)[] = [];
  let handlesBefore = 0;

  /** A candidate publishing through its own link, its media flowing (the engine reported it live). */
  async function publishing(sessionId = SESSION) {
    const channel = new FakeChannel();
    const link = await engine.publisher({ examId: EXAM, sessionId, name: 'Candidate' }, channel);
    const client = new PublisherClient();
    clients.push(client);
    await republishing(client, link, channel);
    return { channel, link, client };
  }

  /** `client` publishes through `link` and sends until the engine says its media flows. */
  async function republishing(client: PublisherClient, link: LiveLink, channel: FakeChannel) {
    const states = channel.states.length;
    await client.publish(link, channel);
    await connected(client.pc);
    stops.push(client.pump());
    await waitUntil('live', () => channel.states.slice(states).includes('live'));
  }

  /**
   * A proctor's link and browser; `answer(n)` answers the engine's n-th offer and waits until media
   * arrives over it.
   */
  async function watching(mayWatch?: (sessionId: number) => boolean) {
    const channel = new FakeChannel();
    const link = await engine.subscriber(watcher(mayWatch), channel);
    const client = new SubscriberClient();
    clients.push(client);
    const answer = async (offers: number, sessionId = SESSION) => {
      await waitUntil(`offer ${offers}`, () => channel.of('offer').length >= offers);
      const offer = channel.of('offer')[offers - 1];
      assert.ok(offer !== undefined);
      assert.equal(offer.sessionId, sessionId);
      const camera = client.received[0]?.length ?? 0;
      await client.answer(link, sessionId, offer.sdp);
      await waitUntil('video', () => (client.received[0]?.length ?? 0) > camera);
    };
    return { channel, link, client, answer };
  }

  before(() => {
    handlesBefore = udpHandles();
  });

  beforeEach(() => {
    log = recordingLog();
    engine = createEmbeddedEngine(loopbackConfig(PORT_MIN, PORT_MAX), log);
  });

  afterEach(async () => {
    for (const stop of stops.splice(0)) stop();
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await engine.close();
    // A closed socket leaves the list of handles on a later turn of the event loop.
    await waitUntil('every socket closed', () => udpHandles() === handlesBefore, 1000);
  });

  it('hands the browsers its ICE servers and answers an offer with LIVE_PUBLIC_IP as its only candidate, in its port range', async () => {
    const iceServers = [{ urls: 'turn:turn.example.org:3478', username: 'u', credential: 'c' }];
    const other = createEmbeddedEngine({ ...loopbackConfig(PORT_MIN, PORT_MAX), iceServers }, log);
    await other.close();
    assert.deepEqual(other.iceServers, iceServers);
    assert.equal(other.kind, 'embedded');

    const { channel, link } = await publishing();
    assert.deepEqual(link.join, { engine: 'embedded', iceServers: [] });
    const answer = channel.of('answer')[0];
    assert.ok(answer !== undefined);
    const candidates = [...answer.sdp.matchAll(/^a=candidate:\S+ 1 udp \d+ (\S+) (\d+) typ host/gm)];
    assert.ok(candidates.length > 0);
    for (const [, address, port] of candidates) {
      assert.equal(address, '127.0.0.1', 'LIVE_PUBLIC_IP alone is advertised');
      assert.ok(Number(port) >= PORT_MIN && Number(port) <= PORT_MAX, `port ${port} in range`);
    }
    assert.deepEqual(
      [...answer.sdp.matchAll(/^a=(recvonly|sendrecv|sendonly|inactive)$/gm)].map((m) => m[1]),
      ['recvonly', 'recvonly', 'recvonly'],
    );
  });

  it('reports the candidate live once RTP arrives, and forwards camera and microphone to a proctor, video from a key frame on', async () => {
    const candidate = await publishing();
    assert.deepEqual(candidate.channel.states, ['live']);

    const proctor = await watching();
    await proctor.link.receive({ type: 'subscribe', sessionId: SESSION });
    await proctor.answer(1);
    await waitUntil(
      'camera and microphone',
      () =>
        (proctor.client.received[0]?.length ?? 0) >= 20 && (proctor.client.received[1]?.length ?? 0) >= 10,
    );
    const camera = proctor.client.received[0] ?? [];
    const first = camera[0];
    assert.ok(
      first !== undefined && isVp8KeyFrameStart(first.payload),
      'the first video packet starts a key frame',
    );
    // The payload is the publisher's as sent: descriptor (S set), frame tag, key frame start code.
    assert.equal(first.payload[0], 0x90);
    assert.equal(first.payload.subarray(7, 10).toString('hex'), '9d012a');
    // The whole frame arrives: 3,000 bytes behind a 4-byte descriptor per packet.
    const frame = camera.filter((packet) => packet.header.timestamp === first.header.timestamp);
    assert.equal(
      frame.reduce((bytes, packet) => bytes + packet.payload.length - 4, 0),
      3000,
    );
    assert.equal(frame.at(-1)?.header.marker, true);
    // Each line's packets carry the payload type the proctor's side negotiated, not the candidate's.
    const offer = proctor.channel.of('offer')[0]?.sdp ?? '';
    const offered = (codec: string) => Number(new RegExp(`^a=rtpmap:(\\d+) ${codec}/`, 'm').exec(offer)?.[1]);
    assert.notEqual(offered('VP8'), PUBLISHER_PAYLOAD_TYPES.video);
    assert.ok(camera.every((packet) => packet.header.payloadType === offered('VP8')));
    const microphone = proctor.client.received[1] ?? [];
    assert.notEqual(offered('opus'), PUBLISHER_PAYLOAD_TYPES.audio);
    assert.ok(microphone.every((packet) => packet.header.payloadType === offered('opus')));
    assert.equal(microphone[0]?.payload.length, 80);
    assert.equal(proctor.client.received[2]?.length, 0, 'the screen line carries nothing');
    assert.deepEqual(candidate.channel.states, ['live']);
  });

  it("asks the publisher for a key frame when a proctor starts watching, and relays the proctor's own requests, at most one a second", async () => {
    const candidate = await publishing();
    // Read through a function: assert.equal narrows a property to the literal it was compared with.
    const requests = () => candidate.client.pictureLossCount;
    assert.equal(requests(), 0);

    const proctor = await watching();
    await proctor.link.receive({ type: 'subscribe', sessionId: SESSION });
    await proctor.answer(1);
    assert.equal(requests(), 1, 'asked once for the new proctor');

    await sleep(1100);
    for (let request = 0; request < 5; request += 1) await proctor.client.requestKeyFrame();
    await waitUntil('the first relayed request', () => requests() === 2);
    await sleep(300);
    assert.equal(requests(), 2, 'the others wait for the end of the second');
    await waitUntil('one more at the end of the second', () => requests() === 3, 1500);
    await sleep(300);
    assert.equal(requests(), 3);
  });

  it('refuses a proctor a candidate it may not watch, with a non-fatal error and no offer', async () => {
    await publishing();
    const proctor = await watching((sessionId) => sessionId !== SESSION);
    await proctor.link.receive({ type: 'subscribe', sessionId: SESSION });
    assert.deepEqual(proctor.channel.messages, [{ type: 'error', error: MAY_NOT_WATCH, fatal: false }]);
    await assert.rejects(proctor.link.receive({ type: 'answer', sessionId: SESSION, sdp: 'v=0\r\n' }), {
      message: NOT_WATCHING,
    });
  });

  it('offers a candidate to a proctor who subscribed before it published', async () => {
    const proctor = await watching();
    await proctor.link.receive({ type: 'subscribe', sessionId: SESSION });
    assert.deepEqual(proctor.channel.messages, []);
    await publishing();
    await proctor.answer(1);
  });

  it('tells the proctor when the candidate stops publishing and offers again, by itself, when it is back', async () => {
    const first = await publishing();
    const proctor = await watching();
    await proctor.link.receive({ type: 'subscribe', sessionId: SESSION });
    await proctor.answer(1);

    // The candidate's socket closes (a reload): the proctor is told, the subscription stays.
    first.link.close();
    await waitUntil('unpublished', () => proctor.channel.of('unpublished').length === 1);
    assert.deepEqual(proctor.channel.of('unpublished'), [{ type: 'unpublished', sessionId: SESSION }]);
    assert.deepEqual(await engine.connected(EXAM), [{ role: 'proctor', id: 3, publishing: false }]);

    const second = await publishing();
    await proctor.answer(2);

    // The browser replaces its connection (a new offer on the same link): the proctor gets a new
    // offer, no unpublished; the candidate is connecting until the new connection's media arrives.
    const states = second.channel.states.length;
    const again = new PublisherClient();
    clients.push(again);
    await republishing(again, second.link, second.channel);
    await proctor.answer(3);
    assert.equal(proctor.channel.of('unpublished').length, 1);
    assert.deepEqual(second.channel.states.slice(states), ['connecting', 'live']);
  });

  it('closes the pair on unsubscribe: no offer when the candidate publishes again', async () => {
    const candidate = await publishing();
    const proctor = await watching();
    await proctor.link.receive({ type: 'subscribe', sessionId: SESSION });
    await proctor.answer(1);
    const peer = proctor.client.pc;
    await proctor.link.receive({ type: 'unsubscribe', sessionId: SESSION });
    // The engine's end is gone: the proctor's connection stops receiving.
    const received = proctor.client.received[0]?.length ?? 0;
    await sleep(300);
    const after = proctor.client.received[0]?.length ?? 0;
    await sleep(300);
    assert.equal(proctor.client.received[0]?.length, after);
    assert.ok(after - received < 20);
    assert.equal(proctor.client.pc, peer);

    const again = new PublisherClient();
    clients.push(again);
    await republishing(again, candidate.link, candidate.channel);
    await sleep(200);
    assert.equal(proctor.channel.of('offer').length, 1);
    assert.deepEqual(proctor.channel.of('unpublished'), []);
  });

  it('drops an answer to an offer replaced meanwhile', async () => {
    const candidate = await publishing();
    const proctor = await watching();
    await proctor.link.receive({ type: 'subscribe', sessionId: SESSION });
    const stale = proctor.channel.of('offer')[0];
    assert.ok(stale !== undefined);
    // The candidate publishes again before the proctor's browser answered the first offer.
    const again = new PublisherClient();
    clients.push(again);
    await republishing(again, candidate.link, candidate.channel);
    await waitUntil('second offer', () => proctor.channel.of('offer').length === 2);
    await proctor.client.answer(proctor.link, SESSION, stale.sdp);
    await proctor.answer(2);
  });

  it("advertises LIVE_PUBLIC_IP alone when it is set, the machine's own addresses otherwise", () => {
    const withPublic = peerSettings({ ...loopbackConfig(PORT_MIN, PORT_MAX), publicIp: '203.0.113.9' });
    assert.deepEqual(withPublic.iceAdditionalHostAddresses, ['203.0.113.9']);
    assert.equal(withPublic.iceUseIpv4, false);
    assert.equal(withPublic.iceUseIpv6, false);
    assert.deepEqual(withPublic.icePortRange, [PORT_MIN, PORT_MAX]);
    const without = peerSettings({ ...loopbackConfig(PORT_MIN, PORT_MAX), publicIp: undefined });
    assert.equal(without.iceAdditionalHostAddresses, undefined);
    assert.equal(without.iceUseIpv4, undefined);
    assert.equal(without.iceUseIpv6, undefined);
    assert.deepEqual(without.iceServers, []);
  });

  it('gives each new connection its ports from a cursor that moves on through the range and wraps', () => {
    const next = portCursor({ ...loopbackConfig(40000, 40999) });
    assert.deepEqual(next(), [40000, 40999]);
    assert.deepEqual(next(), [40004, 40999]);
    for (let connection = 2; connection < 185; connection += 1) next();
    assert.deepEqual(next(), [40740, 40999]);
    assert.deepEqual(next(), [40000, 40999], 'wrapped before the top 256 ports');
    // A narrow range is handed over whole.
    const narrow = portCursor(loopbackConfig(PORT_MIN, PORT_MAX));
    assert.deepEqual(narrow(), [PORT_MIN, PORT_MAX]);
    assert.deepEqual(narrow(), [PORT_MIN, PORT_MAX]);
  });

  it("leaves a browser's mDNS candidates out of its description", () => {
    const sdp = [
      'v=0',
      'a=candidate:1 1 udp 2122260223 3f6e1a2b-0c4d-4e5f-8a9b-0c1d2e3f4a5b.local 50000 typ host generation 0',
      'a=candidate:2 1 udp 1686052607 198.51.100.7 50001 typ srflx raddr 0.0.0.0 rport 0 generation 0',
      '',
    ].join('\r\n');
    assert.equal(
      withoutMdnsCandidates(sdp),
      [
        'v=0',
        'a=candidate:2 1 udp 1686052607 198.51.100.7 50001 typ srflx raddr 0.0.0.0 rport 0 generation 0',
        '',
      ].join('\r\n'),
    );
  });

  it('refuses an offer without the three lines in order', async () => {
    const channel = new FakeChannel();
    const link: LiveLink = await engine.publisher({ examId: EXAM, sessionId: SESSION, name: 'C' }, channel);
    const sdp =
      'v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n';
    await assert.rejects(link.receive({ type: 'offer', sdp }), { message: OFFER_LAYOUT });
    assert.deepEqual(channel.messages, []);
  });

  it('lists who is connected to a room', async () => {
    assert.deepEqual(await engine.connected(EXAM), []);
    await engine.openRoom(EXAM);
    await publishing();
    const waiting = await engine.publisher({ examId: EXAM, sessionId: 8, name: 'B' }, new FakeChannel());
    await watching();
    const connected = await engine.connected(EXAM);
    assert.deepEqual(
      [...connected].sort((a, b) => a.id - b.id),
      [
        { role: 'proctor', id: 3, publishing: false },
        { role: 'candidate', id: SESSION, publishing: true },
        { role: 'candidate', id: 8, publishing: false },
      ],
    );
    waiting.close();
    assert.deepEqual(await engine.connected(EXAM + 1), []);
  });

  it('ends a room: its links stop and its UDP sockets close', async () => {
    const candidate = await publishing();
    const proctor = await watching();
    await proctor.link.receive({ type: 'subscribe', sessionId: SESSION });
    await proctor.answer(1);
    for (const stop of stops.splice(0)) stop();
    await Promise.all(clients.splice(0).map((client) => client.close()));
    assert.ok(udpHandles() > handlesBefore);

    await engine.endRoom(EXAM);
    await waitUntil('every socket of the room closed', () => udpHandles() === handlesBefore, 1000);
    assert.deepEqual(await engine.connected(EXAM), []);
    // The links of the ended room do nothing any more.
    await candidate.link.receive({ type: 'offer', sdp: 'v=0\r\n' });
    await proctor.link.receive({ type: 'subscribe', sessionId: SESSION });
    assert.equal(proctor.channel.of('offer').length, 1);
    await engine.endRoom(EXAM);
  });

  it('closes every socket on close, and the process can then exit by itself', async () => {
    await publishing();
    await watching();
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await engine.close();
    await engine.close();
    await waitUntil('every socket closed', () => udpHandles() === handlesBefore, 1000);
    await assert.rejects(engine.publisher({ examId: EXAM, sessionId: 9, name: 'C' }, new FakeChannel()));

    const child = spawn(process.execPath, [path.join(import.meta.dirname, 'embedded-engine.support.ts')], {
      env: { ...process.env, PORT_MIN: String(PORT_MAX + 1) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(timer);
    assert.equal(code, 0, output);
    assert.match(output, /^closed$/m);
  });
});
