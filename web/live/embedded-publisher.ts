/**
 * Publishing to the embedded engine (the candidate's room, the phone): one peer connection offered
 * complete to the service, which answers it (src/live/protocol.ts).
 */
import { NO_MEDIA, encodingFor, hasTracks, tracksInOrder } from './media.ts';
import { followConnection, gatheredSdp, newPeerConnection, retryDelay, type PeerOwner } from './peer.ts';
import type { ClientSignal, IceServer, Media, PublishState, Publisher } from './types.ts';

/** A publication whose offer got no answer in this time is offered again. */
const ANSWER_LIMIT_MS = 15000;

/**
 * Publishes to the embedded engine: one peer connection with the three sendonly lines (the phone's
 * one, `cameraOnly`), offered complete; a failed connection (or an offer left unanswered) is
 * replaced and offered again.
 */
export class EmbeddedPublisher implements Publisher, PeerOwner {
  private media: Media = NO_MEDIA;
  pc: RTCPeerConnection | undefined;
  /** Peer connections whose offers await their answer, oldest first (the server answers in order). */
  private awaiting: RTCPeerConnection[] = [];
  failures = 0;
  private closed = false;
  private retryTimer: number | undefined;
  private answerTimer: number | undefined;
  disconnectedTimer: number | undefined;

  constructor(
    private readonly iceServers: readonly IceServer[],
    private readonly signal: (signal: ClientSignal) => void,
    readonly report: (state: PublishState) => void,
    private readonly cameraOnly: boolean,
  ) {}

  setMedia(media: Media): void {
    const pc = this.pc;
    this.media = media;
    if (pc === undefined || !hasTracks(media)) {
      this.restart();
      return;
    }
    // Same three lines, other tracks: no new offer needed.
    this.replaceTracks(pc).catch(() => this.restart());
  }

  /** The tracks of the lines in order: camera, microphone, screen (the phone: camera). */
  private lineTracks(): (MediaStreamTrack | null)[] {
    const tracks = tracksInOrder(this.media);
    return this.cameraOnly ? [tracks[0]] : [...tracks];
  }

  private async replaceTracks(pc: RTCPeerConnection): Promise<void> {
    const tracks = this.lineTracks();
    const transceivers = pc.getTransceivers();
    if (transceivers.length !== tracks.length) throw new Error('unexpected transceivers');
    for (const [index, track] of tracks.entries()) {
      const sender = transceivers[index]?.sender;
      if (sender === undefined) continue;
      await sender.replaceTrack(track);
      if (index === 1 || track === null) continue;
      const parameters = sender.getParameters();
      const encoding = parameters.encodings[0];
      if (encoding === undefined) continue;
      Object.assign(encoding, encodingFor(index === 0 ? 'camera' : 'screen', track));
      await sender.setParameters(parameters);
    }
  }

  /** Replaces the peer connection now (or drops it when there is nothing to send). */
  private restart(): void {
    this.dropConnection();
    if (this.closed) return;
    if (!hasTracks(this.media)) {
      this.report('off');
      return;
    }
    const pc = newPeerConnection(this.iceServers);
    this.pc = pc;
    this.connect(pc).catch((error: unknown) => {
      // A connection replaced meanwhile fails as it is closed; only the current one is retried.
      if (this.pc !== pc) return;
      console.warn('live: the offer failed', error);
      this.retry();
    });
  }

  /** Replaces the peer connection after a wait that grows with each failure in a row. */
  private retry(): void {
    this.dropConnection();
    if (this.closed) return;
    this.report(hasTracks(this.media) ? 'connecting' : 'off');
    const delay = retryDelay(this.failures);
    this.failures += 1;
    this.retryTimer = window.setTimeout(() => this.restart(), delay);
  }

  private dropConnection(): void {
    window.clearTimeout(this.retryTimer);
    window.clearTimeout(this.answerTimer);
    window.clearTimeout(this.disconnectedTimer);
    this.pc?.close();
    this.pc = undefined;
  }

  /** Offers `pc` with the three lines (the phone: the camera's alone) and sends the offer once ICE is gathered. */
  private async connect(pc: RTCPeerConnection): Promise<void> {
    this.report('connecting');
    const [camera, microphone, screen] = tracksInOrder(this.media);
    const cameraStreams = this.media.camera === null ? [] : [this.media.camera];
    pc.addTransceiver(camera ?? 'video', {
      direction: 'sendonly',
      streams: cameraStreams,
      sendEncodings: [encodingFor('camera', camera)],
    });
    if (!this.cameraOnly) {
      pc.addTransceiver(microphone ?? 'audio', { direction: 'sendonly', streams: cameraStreams });
      pc.addTransceiver(screen ?? 'video', {
        direction: 'sendonly',
        streams: this.media.screen === null ? [] : [this.media.screen],
        sendEncodings: [encodingFor('screen', screen)],
      });
    }
    followConnection(this, pc, () => this.retry());
    await pc.setLocalDescription(await pc.createOffer());
    const sdp = await gatheredSdp(pc);
    if (this.pc !== pc) return;
    this.awaiting.push(pc);
    this.signal({ type: 'offer', sdp });
    this.answerTimer = window.setTimeout(() => {
      if (this.pc === pc && pc.signalingState === 'have-local-offer') this.retry();
    }, ANSWER_LIMIT_MS);
  }

  answer(sdp: string): void {
    const pc = this.awaiting.shift();
    // An answer to an offer of a connection since replaced: dropped.
    if (pc === undefined || pc !== this.pc || pc.signalingState !== 'have-local-offer') return;
    window.clearTimeout(this.answerTimer);
    pc.setRemoteDescription({ type: 'answer', sdp }).catch((error: unknown) => {
      console.warn('live: the answer was refused', error);
      if (this.pc === pc) this.retry();
    });
  }

  close(): void {
    this.closed = true;
    this.dropConnection();
    this.awaiting = [];
  }
}
