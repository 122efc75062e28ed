/**
 * The live-capacity benchmark's load generator: synthetic candidates and proctors, werift peers in
 * one process talking to the engine process over loopback (127.0.0.1 only). Each candidate
 * publishes the protocol's three lines: the camera plays the pre-encoded VP8 frames (argv[2], from
 * bench/live-frames.ts) at 15 frames a second, answering a key frame request with the loop's key
 * frame as an encoder would; the microphone sends a 20 ms packet of Opus's size at 32 kbit/s; the
 * screen line carries nothing. Each candidate is watched by one proctor, whose peer counts the
 * camera frames and audio packets that arrive complete. Driven by the benchmark over IPC
 * (bench/live-ipc.ts).
 */
import {
  MediaStreamTrack,
  RTCPeerConnection,
  RTCRtpCodecParameters,
  type RTCRtpTransceiver,
  RtpHeader,
  RtpPacket,
  type RtpPacket as Packet,
  useFIR,
  useNACK,
  usePLI,
  Vp8Packetizer,
} from 'werift';
import { withoutFallbackStun } from '../src/live/embedded/peer.ts';
import { useKeyObjectsForSrtp } from '../src/live/embedded/srtp-keys.ts';
import type { ServerMessage } from '../src/live/protocol.ts';
import { type EncodedFrame, FPS, readFrames, SCREEN_FPS, screenFrames } from './live-frames.ts';
import type { FromEngine, LoadCommand, LoadReport, Measured, ToEngine } from './live-ipc.ts';

const cameraFrames = readFrames(process.argv[2] ?? '').frames;
/** BENCH_LIVE_SCREEN=1: each candidate also shares its screen (bench/live-frames.ts screenFrames). */
const WITH_SCREEN = process.env.BENCH_LIVE_SCREEN === '1';
const SCREEN_FRAMES = WITH_SCREEN ? screenFrames().frames : [];
// The generator's werift encrypts as cheaply as the engine's, so the yardstick is like for like.
useKeyObjectsForSrtp();
const AUDIO_MS = 20;
/** 32 kbit/s of Opus in 20 ms packets. */
const AUDIO_BYTES = 80;
/** How many candidates are set up at once. */
const SETUP_CONCURRENCY = 4;
const SETUP_LIMIT_MS = 30_000;

function ignore(): void {
  // A packet that could not be sent is counted as sent and lost.
}

function relay(message: ToEngine | LoadReport): void {
  process.send?.(message);
}

function peer(): RTCPeerConnection {
  return new RTCPeerConnection({
    codecs: {
      video: [
        new RTCRtpCodecParameters({
          mimeType: 'video/VP8',
          clockRate: 90000,
          rtcpFeedback: [useNACK(), usePLI(), useFIR()],
        }),
      ],
      audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2 })],
    },
    iceServers: [],
    iceUseIpv4: false,
    iceUseIpv6: false,
    iceAdditionalHostAddresses: ['127.0.0.1'],
    bundlePolicy: 'max-bundle',
  });
}

/** Signalling waiting for the engine, per link. */
const inbox = new Map<string, ServerMessage[]>();
const waiters = new Map<string, () => void>();

function deliver(link: string, message: ServerMessage): void {
  inbox.set(link, [...(inbox.get(link) ?? []), message]);
  waiters.get(link)?.();
}

/** The next message of `type` the engine sent `link`. */
async function next<T extends ServerMessage['type']>(
  link: string,
  type: T,
): Promise<Extract<ServerMessage, { type: T }>> {
  const deadline = performance.now() + SETUP_LIMIT_MS;
  for (;;) {
    const queue = inbox.get(link) ?? [];
    const index = queue.findIndex((message) => message.type === type);
    if (index >= 0) {
      const [found] = queue.splice(index, 1);
      return found as Extract<ServerMessage, { type: T }>;
    }
    if (performance.now() > deadline) throw new Error(`no ${type} for ${link}`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 1000);
      waiters.set(link, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    waiters.delete(link);
  }
}

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = performance.now() + SETUP_LIMIT_MS;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** What a window counts for one video line of one candidate. */
interface VideoWindow {
  /** Frames sent (RTP timestamp → packets), and the packets of each seen at the proctor. */
  readonly sent: Map<number, number>;
  readonly got: Map<number, Set<number>>;
}

/** What a window counts for one candidate. */
interface Window {
  readonly video: [VideoWindow, VideoWindow];
  audioSent: number;
  readonly audioGot: Set<number>;
  bytes: number;
  /** Video frames skipped because the generator was held up past their time. */
  skipped: number;
  /** Still counting sends (false during the grace). */
  sending: boolean;
}

/**
 * One video line of a candidate: plays `frames` in a loop at `fps` on `transceiver`, starting again
 * from the loop's first (key) frame when asked for a key frame, as an encoder would send one.
 */
class VideoLine {
  keyRequests = 0;
  private readonly packetizer: Vp8Packetizer;
  private readonly frames: readonly EncodedFrame[];
  private readonly frameMs: number;
  private readonly frameTicks: number;
  private readonly transceiver: RTCRtpTransceiver;
  private frame = 0;
  private keyRequested = true;
  private timestamp = Math.floor(Math.random() * 2 ** 31);
  private nextAt = 0;

  constructor(transceiver: RTCRtpTransceiver, ssrc: number, frames: readonly EncodedFrame[], fps: number) {
    this.transceiver = transceiver;
    this.packetizer = new Vp8Packetizer({ payloadType: 96, ssrc });
    this.frames = frames;
    this.frameMs = 1000 / fps;
    this.frameTicks = 90_000 / fps;
    transceiver.sender.onPictureLossIndication.subscribe(() => {
      this.keyRequested = true;
      this.keyRequests += 1;
    });
  }

  /** Starts at a random point of the frame interval, as real cameras are not in step. */
  start(now: number): void {
    this.nextAt = now + Math.random() * this.frameMs;
  }

  /**
   * Sends the frame due at `now`, counting it in `window`. Frames whose time passed while the
   * generator was held up are skipped, as an encoder skips them, rather than sent in a burst.
   * Returns how late the frame was, ms.
   */
  pump(now: number, window: VideoWindow | undefined, counting: Window | undefined): number {
    if (this.nextAt > now) return 0;
    const late = now - this.nextAt;
    this.send(window, counting);
    const due = Math.max(1, Math.ceil(late / this.frameMs));
    if (counting?.sending === true) counting.skipped += due - 1;
    this.nextAt += this.frameMs * due;
    return late;
  }

  private send(window: VideoWindow | undefined, counting: Window | undefined): void {
    if (this.keyRequested) {
      this.keyRequested = false;
      this.frame = 0;
    }
    const frame = this.frames[this.frame % this.frames.length];
    this.frame += 1;
    if (frame === undefined) return;
    this.timestamp = (this.timestamp + this.frameTicks) >>> 0;
    const packets = this.packetizer.packetize(frame.data, this.timestamp);
    if (window !== undefined && counting?.sending === true) {
      window.sent.set(this.timestamp, packets.length);
      window.got.set(this.timestamp, new Set());
      counting.bytes += frame.data.length;
    }
    for (const packet of packets) this.transceiver.sender.sendRtp(packet).catch(ignore);
  }
}

class Candidate {
  readonly id: number;
  readonly publisher = peer();
  readonly camera: VideoLine;
  readonly screen: VideoLine | undefined;
  readonly microphone: RTCRtpTransceiver;
  subscriber: RTCPeerConnection | undefined;
  sending = false;
  receiving = false;
  window: Window | undefined;
  private audioSequence = 0;
  private nextAudioAt = 0;

  constructor(id: number) {
    this.id = id;
    const camera = this.publisher.addTransceiver(new MediaStreamTrack({ kind: 'video' }), {
      direction: 'sendonly',
    });
    this.microphone = this.publisher.addTransceiver(new MediaStreamTrack({ kind: 'audio' }), {
      direction: 'sendonly',
    });
    const screen = this.publisher.addTransceiver(new MediaStreamTrack({ kind: 'video' }), {
      direction: 'sendonly',
    });
    this.camera = new VideoLine(camera, id, cameraFrames, FPS);
    this.screen = WITH_SCREEN ? new VideoLine(screen, id + 1_000_000, SCREEN_FRAMES, SCREEN_FPS) : undefined;
    withoutFallbackStun(this.publisher);
  }

  get keyRequests(): number {
    return this.camera.keyRequests + (this.screen?.keyRequests ?? 0);
  }

  get publisherLink(): string {
    return `p${this.id}`;
  }

  get proctorLink(): string {
    return `s${this.id}`;
  }

  /** Publishes, then has a proctor watch; resolves once the proctor receives the camera. */
  async open(): Promise<void> {
    relay({ kind: 'publisher', link: this.publisherLink, sessionId: this.id });
    await this.publisher.setLocalDescription(await this.publisher.createOffer());
    relay({
      kind: 'signal',
      link: this.publisherLink,
      signal: { type: 'offer', sdp: this.publisher.localDescription?.sdp ?? '' },
    });
    const answer = await next(this.publisherLink, 'answer');
    await this.publisher.setRemoteDescription({ type: 'answer', sdp: answer.sdp });
    await until('publisher connected', () => this.publisher.connectionState === 'connected');
    this.start(performance.now());

    relay({ kind: 'subscriber', link: this.proctorLink, userId: this.id });
    relay({ kind: 'signal', link: this.proctorLink, signal: { type: 'subscribe', sessionId: this.id } });
    const offer = await next(this.proctorLink, 'offer');
    const subscriber = peer();
    this.subscriber = subscriber;
    await subscriber.setRemoteDescription({ type: 'offer', sdp: offer.sdp });
    withoutFallbackStun(subscriber);
    const [camera, microphone, screen] = subscriber.getTransceivers();
    const listen = (transceiver: RTCRtpTransceiver | undefined, on: (rtp: Packet) => void) => {
      transceiver?.receiver.tracks.forEach((track) => track.onReceiveRtp.subscribe(on));
      transceiver?.onTrack.subscribe((track) => track.onReceiveRtp.subscribe(on));
    };
    listen(camera, (rtp) => {
      this.receiving = true;
      this.videoPacket(0, rtp);
    });
    listen(microphone, (rtp) => this.window?.audioGot.add(rtp.header.sequenceNumber));
    listen(screen, (rtp) => this.videoPacket(1, rtp));
    await subscriber.setLocalDescription(await subscriber.createAnswer());
    relay({
      kind: 'signal',
      link: this.proctorLink,
      signal: { type: 'answer', sessionId: this.id, sdp: subscriber.localDescription?.sdp ?? '' },
    });
    await until('camera at the proctor', () => this.receiving);
  }

  private videoPacket(line: 0 | 1, rtp: Packet): void {
    this.window?.video[line].got.get(rtp.header.timestamp)?.add(rtp.header.sequenceNumber);
  }

  private start(now: number): void {
    this.camera.start(now);
    this.screen?.start(now);
    this.nextAudioAt = now + Math.random() * AUDIO_MS;
    this.sending = true;
  }

  /** Sends whatever is due at `now`. Returns how late the latest send was, ms. */
  pump(now: number): number {
    const window = this.window;
    let late = this.camera.pump(now, window?.video[0], window);
    if (this.screen !== undefined) late = Math.max(late, this.screen.pump(now, window?.video[1], window));
    if (this.nextAudioAt <= now) {
      late = Math.max(late, now - this.nextAudioAt);
      this.sendAudio();
      this.nextAudioAt += AUDIO_MS * Math.max(1, Math.ceil((now - this.nextAudioAt) / AUDIO_MS));
    }
    return late;
  }

  private sendAudio(): void {
    this.audioSequence = (this.audioSequence + 1) & 0xffff;
    const header = new RtpHeader({
      payloadType: 111,
      sequenceNumber: this.audioSequence,
      timestamp: (this.audioSequence * 960) >>> 0,
      ssrc: this.id,
    });
    const window = this.window;
    if (window?.sending === true) {
      window.audioSent += 1;
      window.bytes += AUDIO_BYTES;
    }
    this.microphone.sender.sendRtp(new RtpPacket(header, Buffer.alloc(AUDIO_BYTES, 0x21))).catch(ignore);
  }

  async close(): Promise<void> {
    this.sending = false;
    relay({ kind: 'close', link: this.proctorLink });
    relay({ kind: 'close', link: this.publisherLink });
    await Promise.all([this.publisher.close(), this.subscriber?.close()]);
  }
}

const candidates: Candidate[] = [];
let lateMaxMs = 0;

const pacer = setInterval(() => {
  const now = performance.now();
  for (const candidate of candidates) {
    if (candidate.sending) lateMaxMs = Math.max(lateMaxMs, candidate.pump(now));
  }
}, 5);

async function grow(target: number): Promise<LoadReport> {
  const started = performance.now();
  const added: Candidate[] = [];
  for (let id = candidates.length + 1; id <= target; id += 1) {
    const candidate = new Candidate(id);
    candidates.push(candidate);
    added.push(candidate);
  }
  let failed = 0;
  let cursor = 0;
  await Promise.all(
    Array.from({ length: SETUP_CONCURRENCY }, async () => {
      while (cursor < added.length) {
        const candidate = added[cursor];
        cursor += 1;
        if (candidate === undefined) continue;
        try {
          await candidate.open();
        } catch (error) {
          failed += 1;
          process.stderr.write(`  [live-load] candidate ${candidate.id}: ${String(error)}\n`);
        }
      }
    }),
  );
  return {
    kind: 'grown',
    candidates: candidates.length,
    failed,
    setupMs: Math.round(performance.now() - started),
  };
}

async function measure(ms: number, graceMs: number): Promise<LoadReport> {
  const keyRequests = candidates.reduce((sum, candidate) => sum + candidate.keyRequests, 0);
  for (const candidate of candidates) {
    candidate.window = {
      video: [
        { sent: new Map(), got: new Map() },
        { sent: new Map(), got: new Map() },
      ],
      audioSent: 0,
      audioGot: new Set(),
      bytes: 0,
      skipped: 0,
      sending: true,
    };
  }
  lateMaxMs = 0;
  await new Promise((resolve) => setTimeout(resolve, ms));
  for (const candidate of candidates) if (candidate.window !== undefined) candidate.window.sending = false;
  const late = lateMaxMs;
  await new Promise((resolve) => setTimeout(resolve, graceMs));
  const sum: { -readonly [K in keyof Measured]: Measured[K] } = {
    candidates: candidates.length,
    framesSent: 0,
    framesComplete: 0,
    framesSkipped: 0,
    packetsSent: 0,
    packetsReceived: 0,
    audioSent: 0,
    audioReceived: 0,
    bytesSent: 0,
    lateMaxMs: Math.round(late),
    keyFrameRequests: candidates.reduce((sum, candidate) => sum + candidate.keyRequests, 0) - keyRequests,
    silentCandidates: 0,
    brokenConnections: candidates.filter(
      (candidate) =>
        candidate.publisher.connectionState !== 'connected' ||
        candidate.subscriber?.connectionState !== 'connected',
    ).length,
  };
  for (const candidate of candidates) {
    const window = candidate.window;
    candidate.window = undefined;
    if (window === undefined) continue;
    const complete = sum.framesComplete;
    for (const line of window.video) {
      for (const [timestamp, packets] of line.sent) {
        const got = line.got.get(timestamp)?.size ?? 0;
        sum.framesSent += 1;
        sum.packetsSent += packets;
        sum.packetsReceived += Math.min(got, packets);
        if (got >= packets) sum.framesComplete += 1;
      }
    }
    if (sum.framesComplete === complete) sum.silentCandidates += 1;
    sum.audioSent += window.audioSent;
    sum.audioReceived += Math.min(window.audioGot.size, window.audioSent);
    sum.bytesSent += window.bytes;
    sum.framesSkipped += window.skipped;
  }
  return { kind: 'measured', ...sum };
}

async function shutdown(): Promise<void> {
  clearInterval(pacer);
  await Promise.all(candidates.map((candidate) => candidate.close()));
  process.disconnect();
}

process.on('message', (message: LoadCommand | FromEngine) => {
  switch (message.kind) {
    case 'send':
      deliver(message.link, message.message);
      return;
    case 'media':
      return;
    case 'refused':
      process.stderr.write(`  [live-load] ${message.link} refused: ${message.error}\n`);
      return;
    case 'grow':
      void grow(message.candidates).then(relay);
      return;
    case 'measure':
      void measure(message.ms, message.graceMs).then(relay);
      return;
    case 'shutdown':
      void shutdown();
      return;
  }
});
