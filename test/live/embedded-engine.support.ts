/**
 * werift in Node standing in for the browsers of the embedded engine's tests: a candidate's client
 * publishing synthetic VP8 (and Opus-sized audio) over the protocol's three lines, a proctor's client
 * answering the engine's offers, and fake LiveChannels wired straight to the engine's links.
 *
 * Every peer talks over loopback only: the clients gather 127.0.0.1 (werift leaves loopback out by
 * default) and both sides' descriptions are cut down to their 127.0.0.1 candidates, so no packet
 * goes to another address. The engine under test advertises 127.0.0.1 as its LIVE_PUBLIC_IP.
 *
 * Run directly (`node test/live/embedded-engine.support.ts`), it publishes, watches, closes
 * everything and prints "closed": the test then checks the process exits by itself.
 */
import {
  MediaStreamTrack,
  RTCPeerConnection,
  RTCRtpCodecParameters,
  type RTCRtpTransceiver,
  RtpHeader,
  RtpPacket,
  useFIR,
  useNACK,
  usePLI,
  Vp8Packetizer,
} from 'werift';
import type { LiveChannel, LiveLink } from '../../src/live/engine.ts';
import {
  createEmbeddedEngine,
  type EmbeddedConfig,
  type EmbeddedEngineLog,
} from '../../src/live/embedded/index.ts';
import { withoutFallbackStun } from '../../src/live/embedded/peer.ts';
import type { ServerMessage } from '../../src/live/protocol.ts';

/** The engine's settings for a test: loopback advertised, no STUN or TURN, its own port range. */
export function loopbackConfig(udpPortMin: number, udpPortMax = udpPortMin + 199): EmbeddedConfig {
  return { engine: 'embedded', udpPortMin, udpPortMax, publicIp: '127.0.0.1', iceServers: [] };
}

/** A logger that keeps what it is told. */
export function recordingLog(): EmbeddedEngineLog & { lines: { level: string; message?: string }[] } {
  const lines: { level: string; message?: string }[] = [];
  return {
    lines,
    warn: (_details, message) => lines.push({ level: 'warn', message }),
    info: (_details, message) => lines.push({ level: 'info', message }),
    debug: (_details, message) => lines.push({ level: 'debug', message }),
  };
}

/** Resolves once `check` holds (polled every 10 ms); rejects naming `what` after `timeoutMs`. */
export async function waitUntil(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The browser's end of a LiveChannel: everything the engine sent and reported. */
export class FakeChannel implements LiveChannel {
  readonly messages: ServerMessage[] = [];
  readonly states: ('connecting' | 'live')[] = [];

  send(message: ServerMessage): void {
    this.messages.push(message);
  }

  mediaState(state: 'connecting' | 'live'): void {
    this.states.push(state);
  }

  /** The messages of one type. */
  of<T extends ServerMessage['type']>(type: T): Extract<ServerMessage, { type: T }>[] {
    return this.messages.filter(
      (message): message is Extract<ServerMessage, { type: T }> => message.type === type,
    );
  }
}

/** A session description with only its 127.0.0.1 candidates. */
export function loopbackOnly(sdp: string): string {
  return sdp
    .split('\r\n')
    .filter((line) => !line.startsWith('a=candidate:') || / 127\.0\.0\.1 \d+ typ /.test(line))
    .join('\r\n');
}

/**
 * A werift peer connection as a browser's: VP8 and Opus (with the payload types given, else werift's
 * own), bundled, loopback, no STUN.
 */
export function clientPeer(payloadTypes?: { video: number; audio: number }): RTCPeerConnection {
  return new RTCPeerConnection({
    codecs: {
      video: [
        new RTCRtpCodecParameters({
          mimeType: 'video/VP8',
          clockRate: 90000,
          rtcpFeedback: [useNACK(), usePLI(), useFIR()],
          ...(payloadTypes === undefined ? {} : { payloadType: payloadTypes.video }),
        }),
      ],
      audio: [
        new RTCRtpCodecParameters({
          mimeType: 'audio/opus',
          clockRate: 48000,
          channels: 2,
          ...(payloadTypes === undefined ? {} : { payloadType: payloadTypes.audio }),
        }),
      ],
    },
    iceServers: [],
    iceUseIpv6: false,
    iceAdditionalHostAddresses: ['127.0.0.1'],
    bundlePolicy: 'max-bundle',
  });
}

/**
 * A VP8 frame of `size` bytes as an encoder writes it: the frame tag (key frame flag, version, shown,
 * first partition size) and, for a key frame, the start code and the picture's size; the rest is
 * arbitrary data, which nobody decodes here.
 */
export function vp8Frame(key: boolean, size: number, fill = 0x55): Buffer {
  const frame = Buffer.alloc(Math.max(size, 10), fill);
  const partition = Math.min(frame.length - 10, 0x7ffff);
  const tag = (key ? 0 : 1) | (1 << 4) | (partition << 5);
  frame.writeUIntLE(tag, 0, 3);
  if (key) {
    frame.set([0x9d, 0x01, 0x2a], 3);
    frame.writeUInt16LE(640, 6);
    frame.writeUInt16LE(360, 8);
  }
  return frame;
}

/**
 * The payload types the candidate's browser offers: not the ones the engine picks for its own offers,
 * so forwarding has to rewrite them.
 */
export const PUBLISHER_PAYLOAD_TYPES = { video: 120, audio: 109 } as const;

/** A candidate's browser: three sendonly lines (camera, microphone, screen without a track). */
export class PublisherClient {
  readonly pc = clientPeer(PUBLISHER_PAYLOAD_TYPES);
  readonly camera: RTCRtpTransceiver;
  readonly microphone: RTCRtpTransceiver;
  readonly screen: RTCRtpTransceiver;
  /** Key frame requests (PLI) the camera line received. */
  pictureLossCount = 0;
  private readonly packetizer = new Vp8Packetizer({ payloadType: 96, ssrc: 1 });
  private frames = 0;
  private audioSequence = 0;

  constructor() {
    this.camera = this.pc.addTransceiver(new MediaStreamTrack({ kind: 'video' }), { direction: 'sendonly' });
    this.microphone = this.pc.addTransceiver(new MediaStreamTrack({ kind: 'audio' }), {
      direction: 'sendonly',
    });
    this.screen = this.pc.addTransceiver('video', { direction: 'sendonly' });
    this.camera.sender.onPictureLossIndication.subscribe(() => {
      this.pictureLossCount += 1;
    });
    withoutFallbackStun(this.pc);
  }

  /** Offers through `link` and applies the answer `channel` receives. */
  async publish(link: LiveLink, channel: FakeChannel): Promise<void> {
    await this.pc.setLocalDescription(await this.pc.createOffer());
    const answers = channel.of('answer').length;
    await link.receive({ type: 'offer', sdp: loopbackOnly(this.pc.localDescription?.sdp ?? '') });
    const answer = channel.of('answer')[answers];
    if (answer === undefined) throw new Error('the engine sent no answer');
    await this.pc.setRemoteDescription({ type: 'answer', sdp: loopbackOnly(answer.sdp) });
  }

  /** Sends one camera frame (a key frame when `key`). Returns its RTP timestamp. */
  async sendFrame(key: boolean, size = 3000): Promise<number> {
    this.frames += 1;
    const timestamp = this.frames * 6000;
    for (const packet of this.packetizer.packetize(vp8Frame(key, size), timestamp)) {
      await this.camera.sender.sendRtp(packet);
    }
    return timestamp;
  }

  /** Sends one 20 ms Opus-sized packet on the microphone line. */
  async sendAudio(): Promise<void> {
    this.audioSequence += 1;
    const header = new RtpHeader({
      payloadType: 111,
      sequenceNumber: this.audioSequence,
      timestamp: this.audioSequence * 960,
      ssrc: 2,
    });
    await this.microphone.sender.sendRtp(new RtpPacket(header, Buffer.alloc(80, 0x21)));
  }

  /**
   * Sends like a live camera and microphone: a frame and an audio packet every 20 ms, each frame a
   * key frame when one was asked for (PLI) since the last. Returns the function that stops it.
   */
  pump(): () => void {
    let answered = this.pictureLossCount;
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      const key = this.pictureLossCount > answered;
      answered = this.pictureLossCount;
      Promise.all([this.sendFrame(key), this.sendAudio()])
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

/** A proctor's browser for one candidate: answers the engine's offers, counts what arrives. */
export class SubscriberClient {
  pc: RTCPeerConnection | undefined;
  /** Per line (camera, microphone, screen): the RTP packets received, in order. */
  readonly received: RtpPacket[][] = [[], [], []];
  private transceivers: RTCRtpTransceiver[] = [];

  /** Answers `offer` (a new peer connection, as the browser makes one per offer) through `link`. */
  async answer(link: LiveLink, sessionId: number, offer: string): Promise<void> {
    await this.pc?.close();
    const pc = clientPeer();
    this.pc = pc;
    await pc.setRemoteDescription({ type: 'offer', sdp: loopbackOnly(offer) });
    withoutFallbackStun(pc);
    this.transceivers = pc.getTransceivers();
    for (const [index, transceiver] of this.transceivers.entries()) {
      // The track of a line with a=ssrc exists once the offer is set; others come with onTrack.
      const listen = (track: MediaStreamTrack) =>
        track.onReceiveRtp.subscribe((rtp) => this.received[index]?.push(rtp));
      transceiver.receiver.tracks.forEach(listen);
      transceiver.onTrack.subscribe(listen);
    }
    await pc.setLocalDescription(await pc.createAnswer());
    await link.receive({ type: 'answer', sessionId, sdp: loopbackOnly(pc.localDescription?.sdp ?? '') });
  }

  /** Asks for a camera key frame, as a browser's decoder does after a loss. */
  async requestKeyFrame(): Promise<void> {
    const camera = this.transceivers[0];
    const ssrc = camera?.receiver.tracks[0]?.ssrc;
    if (camera === undefined || ssrc === undefined) throw new Error('no camera track yet');
    await camera.receiver.sendRtcpPLI(ssrc);
  }

  close(): Promise<void> {
    return this.pc?.close() ?? Promise.resolve();
  }
}

/** The child run: a publication watched, then everything closed. Prints "closed" at the end. */
async function main(): Promise<void> {
  const engine = createEmbeddedEngine(
    loopbackConfig(Number(process.env.PORT_MIN ?? '46800')),
    recordingLog(),
  );
  const publisherChannel = new FakeChannel();
  const publisher = new PublisherClient();
  const publisherLink = await engine.publisher({ examId: 1, sessionId: 7, name: 'A' }, publisherChannel);
  await publisher.publish(publisherLink, publisherChannel);
  const proctorChannel = new FakeChannel();
  const proctorLink = await engine.subscriber(
    { examId: 1, userId: 3, name: 'P', mayWatch: () => Promise.resolve(true) },
    proctorChannel,
  );
  await proctorLink.receive({ type: 'subscribe', sessionId: 7 });
  const subscriber = new SubscriberClient();
  const offer = proctorChannel.of('offer')[0];
  if (offer === undefined) throw new Error('no offer');
  await subscriber.answer(proctorLink, 7, offer.sdp);
  await waitUntil('the camera to arrive', () => {
    void publisher.sendFrame(true);
    return (subscriber.received[0]?.length ?? 0) > 0;
  });
  await Promise.all([publisher.close(), subscriber.close()]);
  await engine.close();
  process.stdout.write('closed\n');
}

if (import.meta.main) await main();
