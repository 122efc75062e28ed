/**
 * A proctor's watch of one candidate's computer or phone: subscribed over the socket on the embedded
 * engine (the service offers, the watch answers), or through the LiveKit adapter.
 */
import {
  followConnection,
  gatheredSdp,
  loadLivekit,
  newPeerConnection,
  retryDelay,
  safely,
  statNumber,
  type PeerOwner,
} from './peer.ts';
import type {
  ClientSignal,
  LiveDevice,
  LiveJoin,
  LiveStats,
  LivekitJoin,
  LiveWatch,
  StreamKind,
  WatchHandlers,
  WatchState,
} from './types.ts';

const NO_STATS: LiveStats = { fps: null, lossPercent: null, rttMs: null };

/** The previous sample of the counters, for loss and frame rate over the last interval. */
interface Sample {
  readonly received: number;
  readonly lost: number;
  readonly frames: number | undefined;
  readonly at: number;
}

/**
 * Watching one candidate's computer (or its phone, `device` phone). Lives across reconnects: each
 * new socket subscribes again. On the embedded engine every `offer` for the device replaces the peer
 * connection; on LiveKit the adapter does the watching.
 */
export class Watch implements PeerOwner {
  /** What the signals about this device carry besides the session: nothing for the computer. */
  private readonly target: { device?: 'phone' };
  private join: LiveJoin | undefined;
  pc: RTCPeerConnection | undefined;
  private livekit: LiveWatch | undefined;
  private generation = 0;
  failures = 0;
  private stopped = false;
  private state: WatchState | undefined;
  private retryTimer: number | undefined;
  disconnectedTimer: number | undefined;
  private previous: Sample | undefined;

  constructor(
    private readonly sessionId: number,
    private readonly handlers: WatchHandlers,
    private readonly signal: (signal: ClientSignal) => boolean,
    private readonly device: LiveDevice = 'computer',
  ) {
    this.target = device === 'phone' ? { device: 'phone' } : {};
  }

  report(state: WatchState): void {
    if (this.state === state) return;
    this.state = state;
    safely(() => this.handlers.onState?.(state));
  }

  private emit(kind: StreamKind, stream: MediaStream): void {
    safely(() => this.handlers.onStream?.(kind, stream));
  }

  /** The socket said hello: subscribe over it. */
  start(join: LiveJoin): void {
    this.teardown();
    this.join = join;
    if (this.stopped) return;
    if (join.engine === 'livekit') {
      this.startLivekit(join);
      return;
    }
    this.report('waiting');
    this.signal({ type: 'subscribe', sessionId: this.sessionId, ...this.target });
  }

  private startLivekit(join: LivekitJoin): void {
    const generation = this.generation;
    this.report('connecting');
    loadLivekit()
      .then((livekit) =>
        livekit.watchLivekit(
          join,
          this.sessionId,
          {
            onStream: (kind, stream) => {
              if (generation === this.generation) this.emit(kind, stream);
            },
            onState: (state) => {
              if (generation === this.generation) this.report(state);
            },
          },
          this.device,
        ),
      )
      .then((watch) => {
        if (generation === this.generation && !this.stopped) this.livekit = watch;
        else watch.stop();
      })
      .catch((error: unknown) => {
        console.warn('live: LiveKit watching failed', error);
        if (generation !== this.generation || this.stopped) return;
        this.retryTimer = window.setTimeout(() => this.start(join), retryDelay(this.failures));
        this.failures += 1;
      });
  }

  /** The socket closed: what came over it is gone. */
  disconnected(): void {
    this.teardown();
    this.join = undefined;
    if (!this.stopped) this.report('connecting');
  }

  private teardown(): void {
    this.generation += 1;
    window.clearTimeout(this.retryTimer);
    window.clearTimeout(this.disconnectedTimer);
    this.pc?.close();
    this.pc = undefined;
    this.livekit?.stop();
    this.livekit = undefined;
    this.previous = undefined;
  }

  /** The candidate's media, offered (again): a new peer connection answers it. */
  offer(sdp: string): void {
    if (this.stopped || this.join === undefined) return;
    this.teardown();
    const pc = newPeerConnection(this.join.iceServers);
    this.pc = pc;
    this.answerOffer(pc, sdp).catch((error: unknown) => {
      // A connection replaced by a newer offer fails as it is closed; that is no failure.
      if (this.pc !== pc) return;
      console.warn('live: the offer could not be answered', error);
      this.resubscribe();
    });
  }

  /** Answers the offer on `pc` (receive only) and hands the streams to the page. */
  private async answerOffer(pc: RTCPeerConnection, sdp: string): Promise<void> {
    this.report('connecting');
    followConnection(this, pc, () => this.resubscribe());
    await pc.setRemoteDescription({ type: 'offer', sdp });
    const transceivers = pc.getTransceivers();
    for (const transceiver of transceivers) {
      // A line the server rejected (port 0) is stopped and takes no direction.
      if (transceiver.currentDirection !== 'stopped') transceiver.direction = 'recvonly';
    }
    await pc.setLocalDescription(await pc.createAnswer());
    const answer = await gatheredSdp(pc);
    if (this.pc !== pc) return;
    this.signal({ type: 'answer', sessionId: this.sessionId, sdp: answer, ...this.target });
    const receiving = (transceiver: RTCRtpTransceiver | undefined) =>
      transceiver !== undefined && transceiver.currentDirection === 'recvonly'
        ? [transceiver.receiver.track]
        : [];
    const camera = [...receiving(transceivers[0]), ...receiving(transceivers[1])];
    const screen = receiving(transceivers[2]);
    if (camera.length > 0) this.emit('camera', new MediaStream(camera));
    if (screen.length > 0) this.emit('screen', new MediaStream(screen));
  }

  /** The connection failed: after a wait, ask the server for a fresh offer. */
  private resubscribe(): void {
    const join = this.join;
    this.teardown();
    if (this.stopped || join === undefined) return;
    this.report('connecting');
    const delay = retryDelay(this.failures);
    this.failures += 1;
    this.retryTimer = window.setTimeout(() => {
      if (this.stopped || this.join !== join) return;
      this.signal({ type: 'unsubscribe', sessionId: this.sessionId, ...this.target });
      this.signal({ type: 'subscribe', sessionId: this.sessionId, ...this.target });
    }, delay);
  }

  /** The candidate stopped publishing; the server offers again when they are back. */
  unpublished(): void {
    this.teardown();
    if (!this.stopped) this.report('waiting');
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.teardown();
    if (this.join?.engine === 'embedded') {
      this.signal({ type: 'unsubscribe', sessionId: this.sessionId, ...this.target });
    }
  }

  /**
   * The camera's reception over the interval since the previous call (the first call: since the
   * start): frames a second, lost packets in percent (camera and microphone), and the round trip.
   * Returns nulls for what is not known (not connected yet).
   */
  async stats(): Promise<LiveStats> {
    if (this.livekit !== undefined) return this.livekit.stats();
    const pc = this.pc;
    if (pc === undefined || pc.connectionState === 'closed') return { ...NO_STATS };
    const cameraTrack = pc.getTransceivers()[0]?.receiver.track.id;
    const report = await pc.getStats();
    let received = 0;
    let lost = 0;
    let fps: number | undefined;
    let frames: number | undefined;
    let rtt: number | undefined;
    let at = performance.now();
    report.forEach((stat: Record<string, unknown>) => {
      if (stat.type === 'inbound-rtp') {
        received += statNumber(stat, 'packetsReceived') ?? 0;
        lost += Math.max(0, statNumber(stat, 'packetsLost') ?? 0);
        const camera = stat.kind === 'video' && (stat.trackIdentifier === cameraTrack || stat.mid === '0');
        if (camera) {
          fps = statNumber(stat, 'framesPerSecond');
          frames = statNumber(stat, 'framesDecoded');
          at = statNumber(stat, 'timestamp') ?? at;
        }
      }
      if (stat.type === 'candidate-pair' && stat.state === 'succeeded' && stat.nominated === true) {
        const seconds = statNumber(stat, 'currentRoundTripTime');
        if (seconds !== undefined) rtt = Math.round(seconds * 1000);
      }
    });
    const previous = this.previous;
    this.previous = { received, lost, frames, at };
    const newReceived = received - (previous?.received ?? 0);
    const newLost = lost - (previous?.lost ?? 0);
    const lossPercent =
      newReceived + newLost > 0 ? Math.round((newLost / (newReceived + newLost)) * 1000) / 10 : null;
    if (fps === undefined && frames !== undefined && previous?.frames !== undefined && at > previous.at) {
      fps = ((frames - previous.frames) * 1000) / (at - previous.at);
    }
    return {
      fps: fps === undefined ? null : Math.round(fps * 10) / 10,
      lossPercent,
      rttMs: rtt ?? null,
    };
  }
}
