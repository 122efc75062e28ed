import type { MediaStreamTrack, RTCRtpReceiver, RTCRtpSender, RtpPacket } from 'werift';
import type { LineKind } from './peer.ts';
import { isVp8KeyFrameStart } from './vp8.ts';

/**
 * The least time between two key frame requests (RTCP PLI) the engine sends one publisher's video
 * line. Subscribers that join or lose pictures meanwhile are served by one request at the end of the
 * interval: a key frame costs the candidate's uplink several times a normal frame.
 */
export const KEY_FRAME_INTERVAL_MS = 1000;
/** A subscriber that has waited this long for its first key frame asks again (the PLI may be lost). */
const KEY_FRAME_WAIT_MS = 2000;

function ignore(): void {
  // A packet that could not be sent (its connection closing) is simply not sent.
}

/** One subscriber's sender of a line: what the line's packets go to. */
export class Sink {
  /** A video subscriber gets nothing until a key frame starts: it could decode nothing before. */
  readonly sender: RTCRtpSender;
  waitingForKeyFrame: boolean;
  askedAt = 0;

  constructor(sender: RTCRtpSender, video: boolean) {
    this.sender = sender;
    this.waitingForKeyFrame = video;
  }
}

/**
 * One line of a publication (the camera, the microphone or the screen): the publisher's track
 * once it is known, and the subscribers' senders its RTP goes to. Forwarding rewrites nothing by
 * hand: each werift sender puts its own SSRC and negotiated payload type on the packet (and keeps
 * the packets for the subscriber's NACKs); the publisher's header extensions, whose ids were
 * negotiated with the publisher, are dropped first.
 */
export class Source {
  readonly kind: LineKind;
  /** Called for every packet received, before forwarding. */
  private readonly onPacket: () => void;
  private track: MediaStreamTrack | undefined;
  private receiver: RTCRtpReceiver | undefined;
  private readonly sinks = new Set<Sink>();
  private lastRequestAt = Number.NEGATIVE_INFINITY;
  private requestTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  /** Whether any packet arrived yet: a key frame request sent before that is likely lost. */
  private flowing = false;
  private closed = false;

  constructor(kind: LineKind, onPacket: () => void) {
    this.kind = kind;
    this.onPacket = onPacket;
  }

  /** The publisher's track of this line arrived (werift's onTrack). */
  attach(track: MediaStreamTrack, receiver: RTCRtpReceiver): void {
    if (this.closed) return;
    this.unsubscribe?.();
    this.track = track;
    this.receiver = receiver;
    const { unSubscribe } = track.onReceiveRtp.subscribe((rtp) => this.forward(rtp));
    this.unsubscribe = unSubscribe;
  }

  /** Starts sending this line to a subscriber's sender (its connection is up). Returns its sink. */
  addSink(sender: RTCRtpSender): Sink {
    const sink = new Sink(sender, this.kind === 'video');
    if (this.closed) return sink;
    this.sinks.add(sink);
    // Before the publisher's media flows, its first packet triggers the request (see forward).
    if (sink.waitingForKeyFrame && this.flowing) {
      sink.askedAt = performance.now();
      this.requestKeyFrame();
    }
    return sink;
  }

  removeSink(sink: Sink): void {
    this.sinks.delete(sink);
  }

  /**
   * Asks the publisher for a key frame (RTCP PLI), at most once per KEY_FRAME_INTERVAL_MS: a request
   * within the interval is sent when it ends. Does nothing for audio or before the track is known.
   */
  requestKeyFrame(): void {
    if (this.kind !== 'video' || this.closed || this.requestTimer !== undefined) return;
    const wait = this.lastRequestAt + KEY_FRAME_INTERVAL_MS - performance.now();
    if (wait > 0) {
      this.requestTimer = setTimeout(() => {
        this.requestTimer = undefined;
        this.sendKeyFrameRequest();
      }, wait);
      this.requestTimer.unref();
      return;
    }
    this.sendKeyFrameRequest();
  }

  private sendKeyFrameRequest(): void {
    const { track, receiver } = this;
    if (this.closed || track?.ssrc === undefined || receiver === undefined) return;
    this.lastRequestAt = performance.now();
    receiver.sendRtcpPLI(track.ssrc).catch(ignore);
  }

  private forward(rtp: RtpPacket): void {
    this.onPacket();
    const first = !this.flowing;
    this.flowing = true;
    if (this.sinks.size === 0) return;
    rtp.header.extensions = [];
    const keyFrame = this.kind === 'video' && isVp8KeyFrameStart(rtp.payload);
    for (const sink of this.sinks) {
      if (sink.waitingForKeyFrame) {
        if (!keyFrame) {
          const now = performance.now();
          if (first || now - sink.askedAt > KEY_FRAME_WAIT_MS) {
            sink.askedAt = now;
            this.requestKeyFrame();
          }
          continue;
        }
        sink.waitingForKeyFrame = false;
      }
      sink.sender.sendRtp(rtp).catch(ignore);
    }
  }

  /** Stops forwarding: the publication ended. */
  close(): void {
    this.closed = true;
    clearTimeout(this.requestTimer);
    this.requestTimer = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.sinks.clear();
  }
}
