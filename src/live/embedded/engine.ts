import type { ConnectionState, RTCPeerConnection, RTCRtpTransceiver, RtcpPacket } from 'werift';
import type { IceServer } from '../../config/config.ts';
import type {
  LiveChannel,
  LiveEngine,
  LiveLink,
  LiveParticipant,
  LivePublisherIdentity,
  LiveSubscriberIdentity,
} from '../engine.ts';
import {
  type ClientSignal,
  deviceOf,
  type LiveDevice,
  type LiveJoin,
  type ServerMessage,
} from '../protocol.ts';
import { type Sink, Source } from './forwarding.ts';
import {
  type EmbeddedConfig,
  hasStunServer,
  LINE_KINDS,
  type LineKind,
  mediaIds,
  mediaKinds,
  mediaPorts,
  newPeerConnection,
  PHONE_LINE_KINDS,
  portCursor,
  withoutFallbackStun,
  withoutMdnsCandidates,
} from './peer.ts';
import { useKeyObjectsForSrtp } from './srtp-keys.ts';

/** How the engine logs; pino's Logger fits. */
export interface EmbeddedEngineLog {
  warn(details: object, message?: string): void;
  info(details: object, message?: string): void;
  debug(details: object, message?: string): void;
}

/** The texts of the errors the engine throws or sends; the hub shows them to the browser. */
export const OFFER_LAYOUT =
  'The media offer must have three lines in this order: camera video, microphone audio, screen video';
export const PHONE_OFFER_LAYOUT = "The phone's media offer must have one line: the camera's video";
export const OFFER_UNREADABLE = 'The media offer could not be read';
export const OFFER_CODECS = 'The media offer has no VP8 video or no Opus audio, which live proctoring needs';
export const OFFER_FAILED = 'The media offer could not be answered; try again in a moment';
export const ANSWER_UNREADABLE = 'The media answer could not be read';
export const NOT_WATCHING = 'You are not watching this candidate';
export const OFFER_FAILED_TO_PROCTOR =
  "The candidate's media could not be offered; subscribe again in a moment";
export const MAY_NOT_WATCH = 'You may not watch this candidate';
export const WATCH_NOT_CHECKED =
  'Could not check whether you may watch this candidate; try again in a moment';
export const NOT_FOR_THIS_SOCKET = 'That message is not for this socket';
export const ENGINE_CLOSED = 'The live engine is closed';

/** How often the liveness watchdog looks at the publications. */
const WATCHDOG_TICK_MS = 1000;
/**
 * A live publication that received no RTP in this many ticks is reported `connecting`: a browser
 * that stopped sending without its connection failing (ICE consent takes half a minute to expire).
 */
const SILENT_TICKS = 5;
/** RFC 5104 FIR is RTCP payload-specific feedback of format 4 (werift does not export the class). */
const FIR_FORMAT = 4;
const PAYLOAD_SPECIFIC_FEEDBACK = 206;

/** Thrown by a closed peer's steps; the caller stops quietly. */
class PeerClosed extends Error {
  override name = 'PeerClosed';
}

/** An error whose message is meant for the browser (werift's own are logged, not shown). */
class RefusedSignal extends Error {
  override name = 'RefusedSignal';
}

/**
 * A werift peer connection whose steps run one at a time, and whose close waits for the step under
 * way: closing during ICE gathering would leave the sockets gathered after it open.
 */
class Peer {
  readonly pc: RTCPeerConnection;
  private queue: Promise<unknown> = Promise.resolve();
  private closing: Promise<void> | undefined;
  private readonly onClosed: (peer: Peer) => void;
  private readonly log: EmbeddedEngineLog;

  constructor(pc: RTCPeerConnection, log: EmbeddedEngineLog, onClosed: (peer: Peer) => void) {
    this.pc = pc;
    this.log = log;
    this.onClosed = onClosed;
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Runs `work` after the steps before it. Returns its result; throws PeerClosed once closed. */
  step<T>(work: (pc: RTCPeerConnection) => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.closed) throw new PeerClosed('closed');
      return work(this.pc);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Closes the connection and its sockets once the step under way is done. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.queue
      .then(() => this.pc.close())
      .catch((error: unknown) => this.log.warn({ err: error }, 'live peer connection did not close cleanly'))
      .finally(() => this.onClosed(this));
    return this.closing;
  }
}

/** The engine's parts each link needs. */
interface EngineContext {
  readonly config: EmbeddedConfig;
  readonly log: EmbeddedEngineLog;
  readonly join: LiveJoin;
  newPeer(): Peer;
  /** A short token that changes with every offer (it cycles through 36³), for the offer's mids. */
  nextOfferTag(): string;
}

/** The m-line kinds a device publishes: the computer's three lines, the phone's one. */
function linesOf(device: LiveDevice): readonly LineKind[] {
  return device === 'phone' ? PHONE_LINE_KINDS : LINE_KINDS;
}

/** What the proctor's messages about `device` carry: nothing for the computer, `device` phone. */
function deviceField(device: LiveDevice): { device?: 'phone' } {
  return device === 'phone' ? { device } : {};
}

/** What a candidate's browser (three lines) or its phone (one line) sends on one connection. */
class Publication {
  readonly sources: readonly Source[];
  readonly peer: Peer;
  readonly link: PublisherLink;
  closed = false;
  /** RTP packets received on all lines, and their count at the watchdog's last tick. */
  packets = 0;
  packetsAtTick = 0;
  silentTicks = 0;

  constructor(peer: Peer, link: PublisherLink) {
    this.peer = peer;
    this.link = link;
    this.sources = linesOf(link.device).map((kind) => new Source(kind, () => this.received()));
  }

  private received(): void {
    this.packets += 1;
    if (this.link.mediaState !== 'live' && this.link.publication === this) this.link.report('live');
  }

  close(): Promise<void> {
    this.closed = true;
    for (const source of this.sources) source.close();
    return this.peer.close();
  }
}

/** The key of a device of a session, in maps holding both devices' watches. */
function deviceKey(device: LiveDevice, sessionId: number): string {
  return `${device} ${sessionId}`;
}

/**
 * One exam's room: its candidates' (and their phones') links and publications, its proctors' links
 * and watches. A computer and a phone of the same session are apart in everything: each has its
 * own publication and its own watches, so one publishing again never touches the other.
 */
class Room {
  readonly examId: number;
  readonly publishers = new Set<PublisherLink>();
  readonly subscribers = new Set<SubscriberLink>();
  /** The current publication of each candidate's computer (session id) publishing in the room. */
  readonly publications = new Map<number, Publication>();
  /** The current publication of each candidate's phone (session id). */
  readonly phones = new Map<number, Publication>();
  private readonly watches = new Map<string, Set<Watch>>();
  private readonly release: (room: Room) => void;

  constructor(examId: number, release: (room: Room) => void) {
    this.examId = examId;
    this.release = release;
  }

  /** The current publications of `device` by session id. */
  publicationsOf(device: LiveDevice): Map<number, Publication> {
    return device === 'phone' ? this.phones : this.publications;
  }

  /** A link closed: the room is forgotten once nobody is in it (it is made again on demand). */
  leave(link: PublisherLink | SubscriberLink): void {
    if (link instanceof PublisherLink) this.publishers.delete(link);
    else this.subscribers.delete(link);
    const empty = this.publishers.size === 0 && this.subscribers.size === 0;
    if (empty && this.publications.size === 0 && this.phones.size === 0) this.release(this);
  }

  /** A device publishes (again): its watchers are offered the new publication; the old one ends. */
  publish(device: LiveDevice, sessionId: number, publication: Publication): void {
    const publications = this.publicationsOf(device);
    const replaced = publications.get(sessionId);
    publications.set(sessionId, publication);
    for (const watch of this.watches.get(deviceKey(device, sessionId)) ?? []) void watch.attach(publication);
    if (replaced !== undefined && replaced !== publication) void replaced.close();
  }

  /** A publication ended (its link closed, its connection failed): its watchers are told. */
  unpublish(device: LiveDevice, sessionId: number, publication: Publication): void {
    const publications = this.publicationsOf(device);
    if (publications.get(sessionId) === publication) {
      publications.delete(sessionId);
      for (const watch of this.watches.get(deviceKey(device, sessionId)) ?? []) {
        void watch.detach(publication, true);
      }
    }
    void publication.close();
  }

  addWatch(watch: Watch): void {
    const key = deviceKey(watch.device, watch.sessionId);
    const set = this.watches.get(key) ?? new Set<Watch>();
    set.add(watch);
    this.watches.set(key, set);
  }

  removeWatch(watch: Watch): void {
    const key = deviceKey(watch.device, watch.sessionId);
    const set = this.watches.get(key);
    set?.delete(watch);
    if (set?.size === 0) this.watches.delete(key);
  }
}

/**
 * A candidate's link (or its phone's): publishes what the browser offers, replacing the publication
 * on every offer.
 */
class PublisherLink implements LiveLink {
  readonly join: LiveJoin;
  readonly sessionId: number;
  readonly device: LiveDevice;
  publication: Publication | undefined;
  /** The publication whose offer is being answered. */
  private pending: Publication | undefined;
  /** The media state last reported through the channel (the hub starts it at `connecting`). */
  mediaState: 'connecting' | 'live' = 'connecting';
  private closed = false;
  private readonly context: EngineContext;
  private readonly room: Room;
  private readonly channel: LiveChannel;

  constructor(context: EngineContext, room: Room, who: LivePublisherIdentity, channel: LiveChannel) {
    this.context = context;
    this.room = room;
    this.channel = channel;
    this.join = context.join;
    this.sessionId = who.sessionId;
    this.device = who.device ?? 'computer';
  }

  report(state: 'connecting' | 'live'): void {
    if (this.closed || this.mediaState === state) return;
    this.mediaState = state;
    this.channel.mediaState(state);
  }

  async receive(signal: ClientSignal): Promise<void> {
    if (this.closed) return;
    // `media` is the LiveKit engine's report; this engine sees the media itself.
    if (signal.type === 'media') return;
    if (signal.type !== 'offer') throw new RefusedSignal(NOT_FOR_THIS_SOCKET);
    await this.publish(signal.sdp);
  }

  private async publish(offer: string): Promise<void> {
    const kinds = mediaKinds(offer);
    const expected = linesOf(this.device);
    if (kinds.length !== expected.length || kinds.some((kind, index) => kind !== expected[index])) {
      throw new RefusedSignal(this.device === 'phone' ? PHONE_OFFER_LAYOUT : OFFER_LAYOUT);
    }
    const peer = this.context.newPeer();
    const publication = new Publication(peer, this);
    void this.pending?.close();
    this.pending = publication;
    let answer: string;
    try {
      answer = await peer.step((pc) => this.answer(pc, publication, offer));
    } catch (error) {
      void publication.close();
      if (error instanceof PeerClosed || this.closed) return;
      if (error instanceof RefusedSignal) throw error;
      this.context.log.warn({ err: error, sessionId: this.sessionId }, 'live offer not answered');
      throw new RefusedSignal(OFFER_FAILED, { cause: error });
    } finally {
      if (this.pending === publication) this.pending = undefined;
    }
    if (this.closed || publication.closed) {
      void publication.close();
      return;
    }
    this.channel.send({ type: 'answer', sdp: answer });
    this.publication = publication;
    // Until the new connection's media arrives the candidate is connecting again.
    this.report('connecting');
    this.room.publish(this.device, this.sessionId, publication);
    this.context.log.debug(
      { examId: this.room.examId, sessionId: this.sessionId, device: this.device },
      'live publication',
    );
  }

  /** Answers the offer on `pc` (receive only). Returns the answer, ICE gathered. */
  private async answer(pc: RTCPeerConnection, publication: Publication, offer: string): Promise<string> {
    pc.connectionStateChange.subscribe((state) => this.connectionChanged(publication, state));
    try {
      await pc.setRemoteDescription({ type: 'offer', sdp: withoutMdnsCandidates(offer) });
    } catch (error) {
      throw new RefusedSignal(OFFER_UNREADABLE, { cause: error });
    }
    const transceivers = pc.getTransceivers();
    for (const [index, source] of publication.sources.entries()) {
      const transceiver = transceivers.find((each) => each.mLineIndex === index);
      if (transceiver === undefined) {
        throw new RefusedSignal(this.device === 'phone' ? PHONE_OFFER_LAYOUT : OFFER_LAYOUT);
      }
      const known = transceiver.receiver.tracks[0];
      if (known !== undefined) source.attach(known, transceiver.receiver);
      transceiver.onTrack.subscribe((track) => source.attach(track, transceiver.receiver));
    }
    const answer = await pc.createAnswer();
    if (!hasStunServer(this.context.config)) withoutFallbackStun(pc);
    await pc.setLocalDescription(answer);
    const sdp = pc.localDescription?.sdp ?? '';
    if (mediaPorts(sdp).some((port) => port === 0)) throw new RefusedSignal(OFFER_CODECS);
    return sdp;
  }

  private connectionChanged(publication: Publication, state: ConnectionState): void {
    if (this.publication !== publication) return;
    if (state === 'disconnected') this.report('connecting');
    if (state !== 'failed') return;
    // The browser replaces a failed connection with a new offer; its watchers wait for that.
    this.report('connecting');
    this.publication = undefined;
    this.room.unpublish(this.device, this.sessionId, publication);
  }

  /** The watchdog's tick: a live publication silent for SILENT_TICKS ticks is connecting again. */
  tick(): void {
    const publication = this.publication;
    if (publication === undefined) return;
    if (publication.packets !== publication.packetsAtTick) {
      publication.packetsAtTick = publication.packets;
      publication.silentTicks = 0;
      return;
    }
    publication.silentTicks += 1;
    if (publication.silentTicks >= SILENT_TICKS) this.report('connecting');
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    void this.pending?.close();
    const publication = this.publication;
    this.publication = undefined;
    if (publication !== undefined) this.room.unpublish(this.device, this.sessionId, publication);
    this.room.leave(this);
  }
}

/**
 * One proctor watching one candidate (or its phone): a peer connection carrying the device's
 * current publication (three sendonly lines, the phone's one), replaced whenever the device
 * publishes again. Its steps run one at a time.
 */
class Watch {
  readonly sessionId: number;
  readonly device: LiveDevice;
  private readonly link: SubscriberLink;
  private readonly context: EngineContext;
  private queue: Promise<unknown> = Promise.resolve();
  private peer: Peer | undefined;
  private publication: Publication | undefined;
  private sinks: { source: Source; sink: Sink }[] = [];
  /** The mids of the offer awaiting its answer (empty once answered). */
  private offerMids: string[] = [];
  private closed = false;

  constructor(context: EngineContext, link: SubscriberLink, sessionId: number, device: LiveDevice) {
    this.context = context;
    this.link = link;
    this.sessionId = sessionId;
    this.device = device;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Offers `publication` to the proctor (a new peer connection). Resolves once the offer is sent. */
  attach(publication: Publication): Promise<void> {
    return this.serial(async () => {
      this.drop();
      if (this.closed || publication.closed) return;
      let offer: string;
      let peer: Peer | undefined;
      try {
        peer = this.context.newPeer();
        this.peer = peer;
        this.publication = publication;
        const created = peer;
        const tag = this.context.nextOfferTag();
        offer = await peer.step((pc) => this.offer(pc, created, publication, tag));
      } catch (error) {
        if (this.peer === peer) this.drop();
        if (error instanceof PeerClosed || this.closed) return;
        this.context.log.warn({ err: error, sessionId: this.sessionId }, 'live offer to a proctor failed');
        this.link.send({ type: 'error', error: OFFER_FAILED_TO_PROCTOR, fatal: false });
        return;
      }
      if (this.closed || this.peer !== peer) return;
      this.offerMids = mediaIds(offer);
      this.link.send({ type: 'offer', sessionId: this.sessionId, sdp: offer, ...deviceField(this.device) });
    });
  }

  /**
   * Builds the offer on `pc`: a sendonly line for each of the publication's (three, the phone's
   * one), mids marked with `tag`. Returns it, ICE gathered.
   */
  private async offer(
    pc: RTCPeerConnection,
    peer: Peer,
    publication: Publication,
    tag: string,
  ): Promise<string> {
    const transceivers = publication.sources.map((source, index) => {
      const transceiver = pc.addTransceiver(source.kind, { direction: 'sendonly' });
      // The answer repeats the mids: an answer to an offer since replaced is recognised and dropped.
      transceiver.mid = `${tag}${index}`;
      this.relayFeedback(transceiver, source);
      return transceiver;
    });
    pc.connectionStateChange.subscribe((state) => this.connectionChanged(peer, transceivers, state));
    const offer = await pc.createOffer();
    if (!hasStunServer(this.context.config)) withoutFallbackStun(pc);
    await pc.setLocalDescription(offer);
    return pc.localDescription?.sdp ?? '';
  }

  /** The proctor's key frame requests (PLI, FIR) go to the publisher, throttled by the source. */
  private relayFeedback(transceiver: RTCRtpTransceiver, source: Source): void {
    if (source.kind !== 'video') return;
    transceiver.sender.onPictureLossIndication.subscribe(() => source.requestKeyFrame());
    transceiver.sender.onRtcp.subscribe((packet: RtcpPacket) => {
      if (packet.type === PAYLOAD_SPECIFIC_FEEDBACK && packet.feedback.count === FIR_FORMAT) {
        source.requestKeyFrame();
      }
    });
  }

  private connectionChanged(
    peer: Peer,
    transceivers: readonly RTCRtpTransceiver[],
    state: ConnectionState,
  ): void {
    if (this.peer !== peer || this.closed) return;
    const publication = this.publication;
    if (state === 'connected' && publication !== undefined && this.sinks.length === 0) {
      // Media goes out from now on, each video line from its next key frame (asked for now).
      this.sinks = publication.sources.flatMap((source, index) => {
        const sender = transceivers[index]?.sender;
        return sender === undefined ? [] : [{ source, sink: source.addSink(sender) }];
      });
      return;
    }
    if (state !== 'failed') return;
    // The proctor's browser asks for a fresh offer itself when its connection fails (it unsubscribes
    // and subscribes again); the dead connection's sockets go now.
    void this.serial(() => {
      if (this.peer === peer) this.drop();
      return Promise.resolve();
    });
  }

  /** The publication ended: the peer connection goes, and the proctor is told when `notify`. */
  detach(publication: Publication, notify: boolean): Promise<void> {
    return this.serial(() => {
      if (this.publication !== publication) return Promise.resolve();
      this.drop();
      if (notify && !this.closed) {
        this.link.send({ type: 'unpublished', sessionId: this.sessionId, ...deviceField(this.device) });
      }
      return Promise.resolve();
    });
  }

  /** Takes the proctor's answer. Throws ANSWER_UNREADABLE when it cannot be applied. */
  accept(answer: string): Promise<void> {
    return this.serial(async () => {
      const peer = this.peer;
      const mids = mediaIds(answer);
      const current =
        mids.length === this.offerMids.length && mids.every((mid, index) => mid === this.offerMids[index]);
      if (peer === undefined || !current) {
        // An answer to an offer since replaced or withdrawn (the candidate published again or left).
        this.context.log.debug({ sessionId: this.sessionId }, 'stale live answer dropped');
        return;
      }
      this.offerMids = [];
      try {
        await peer.step((pc) =>
          pc.setRemoteDescription({ type: 'answer', sdp: withoutMdnsCandidates(answer) }),
        );
      } catch (error) {
        if (error instanceof PeerClosed) return;
        this.drop();
        throw new RefusedSignal(ANSWER_UNREADABLE, { cause: error });
      }
    });
  }

  /** Stops forwarding and closes the peer connection (not waiting for it). */
  private drop(): void {
    for (const { source, sink } of this.sinks) source.removeSink(sink);
    this.sinks = [];
    this.offerMids = [];
    this.publication = undefined;
    const peer = this.peer;
    this.peer = undefined;
    if (peer !== undefined) void peer.close();
  }

  close(): void {
    this.closed = true;
    this.drop();
  }
}

/** A proctor's link: one watch per candidate (and per candidate's phone) subscribed to. */
class SubscriberLink implements LiveLink {
  readonly join: LiveJoin;
  readonly userId: number;
  /** By deviceKey. */
  private readonly watches = new Map<string, Watch>();
  private closed = false;
  private readonly context: EngineContext;
  private readonly room: Room;
  private readonly who: LiveSubscriberIdentity;
  private readonly channel: LiveChannel;

  constructor(context: EngineContext, room: Room, who: LiveSubscriberIdentity, channel: LiveChannel) {
    this.context = context;
    this.room = room;
    this.who = who;
    this.channel = channel;
    this.join = context.join;
    this.userId = who.userId;
  }

  send(message: ServerMessage): void {
    if (!this.closed) this.channel.send(message);
  }

  async receive(signal: ClientSignal): Promise<void> {
    if (this.closed) return;
    switch (signal.type) {
      case 'subscribe':
        return this.subscribe(signal.sessionId, deviceOf(signal));
      case 'unsubscribe':
        this.unsubscribe(signal.sessionId, deviceOf(signal));
        return;
      case 'answer': {
        const watch = this.watches.get(deviceKey(deviceOf(signal), signal.sessionId));
        if (watch === undefined) throw new RefusedSignal(NOT_WATCHING);
        return watch.accept(signal.sdp);
      }
      default:
        throw new RefusedSignal(NOT_FOR_THIS_SOCKET);
    }
  }

  private async subscribe(sessionId: number, device: LiveDevice): Promise<void> {
    let allowed: boolean;
    try {
      allowed = await this.who.mayWatch(sessionId);
    } catch (error) {
      this.context.log.warn(
        { err: error, userId: this.userId, sessionId },
        'live watch permission not checked',
      );
      this.send({ type: 'error', error: WATCH_NOT_CHECKED, fatal: false });
      return;
    }
    if (this.closed) return;
    if (!allowed) {
      this.send({ type: 'error', error: MAY_NOT_WATCH, fatal: false });
      return;
    }
    // Subscribing again starts over (the browser does so after its connection failed).
    this.unsubscribe(sessionId, device);
    const watch = new Watch(this.context, this, sessionId, device);
    this.watches.set(deviceKey(device, sessionId), watch);
    this.room.addWatch(watch);
    const publication = this.room.publicationsOf(device).get(sessionId);
    if (publication !== undefined) await watch.attach(publication);
  }

  private unsubscribe(sessionId: number, device: LiveDevice): void {
    const key = deviceKey(device, sessionId);
    const watch = this.watches.get(key);
    if (watch === undefined) return;
    this.watches.delete(key);
    this.room.removeWatch(watch);
    watch.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const watch of [...this.watches.values()]) this.unsubscribe(watch.sessionId, watch.device);
    this.room.leave(this);
  }
}

/**
 * The embedded media engine (docs/live-proctoring.md): a selective forwarding unit on werift inside
 * the service. Each candidate's browser publishes over one peer connection (three lines: camera,
 * microphone, screen), and its phone, if any, over another (one line: the phone's camera); each
 * proctor watching a candidate gets one peer connection carrying that candidate's three lines (and
 * one more for its phone when it subscribes to that), and the engine forwards the RTP packets as
 * they come, without decoding: VP8 video and Opus audio only. Offers and answers are complete (no
 * trickle ICE). Media uses UDP ports LIVE_UDP_PORT_MIN..MAX (one per peer connection and local
 * address), advertising LIVE_PUBLIC_IP as an extra host candidate when set; the TURN/STUN servers
 * of TURN_URLS are used by werift too and handed to the browsers.
 *
 * Throws when the UDP port range holds fewer than two ports (werift needs min < max).
 */
export function createEmbeddedEngine(config: EmbeddedConfig, log: EmbeddedEngineLog): LiveEngine {
  if (config.udpPortMax <= config.udpPortMin) {
    throw new Error('The embedded live engine needs at least two UDP ports: raise LIVE_UDP_PORT_MAX');
  }
  if (!useKeyObjectsForSrtp()) log.warn({}, 'werift SRTP ciphers not recognised: live media costs more CPU');
  const rooms = new Map<number, Room>();
  const peers = new Set<Peer>();
  const nextPortRange = portCursor(config);
  let closed = false;
  let offers = 0;
  const iceServers: readonly IceServer[] = config.iceServers;
  const join: LiveJoin = { engine: 'embedded', iceServers };

  const context: EngineContext = {
    config,
    log,
    join,
    newPeer() {
      if (closed) throw new Error(ENGINE_CLOSED);
      const peer = new Peer(newPeerConnection(config, nextPortRange()), log, (done) => peers.delete(done));
      peers.add(peer);
      return peer;
    },
    nextOfferTag() {
      // Base 36, cycling through 36³ tags: mids stay short, and an offer is long answered before
      // its tag comes round again.
      offers = (offers + 1) % 46_656;
      return offers.toString(36);
    },
  };

  const watchdog = setInterval(() => {
    for (const room of rooms.values()) for (const link of room.publishers) link.tick();
  }, WATCHDOG_TICK_MS);
  watchdog.unref();

  function roomOf(examId: number): Room {
    if (closed) throw new Error(ENGINE_CLOSED);
    let room = rooms.get(examId);
    if (room === undefined) {
      room = new Room(examId, (empty) => {
        if (rooms.get(examId) === empty) rooms.delete(examId);
      });
      rooms.set(examId, room);
    }
    return room;
  }

  /** Waits until every peer connection being closed now has closed. */
  async function settled(): Promise<void> {
    await Promise.all([...peers].filter((peer) => peer.closed).map((peer) => peer.close()));
  }

  function closeRoom(room: Room): void {
    rooms.delete(room.examId);
    for (const link of [...room.publishers]) link.close();
    for (const link of [...room.subscribers]) link.close();
  }

  return {
    kind: 'embedded',
    iceServers,

    // eslint-disable-next-line @typescript-eslint/require-await -- async: a closed engine rejects
    async openRoom(examId) {
      roomOf(examId);
    },

    async endRoom(examId) {
      const room = rooms.get(examId);
      if (room === undefined) return;
      closeRoom(room);
      log.info({ examId }, 'live room ended');
      await settled();
    },

    // eslint-disable-next-line @typescript-eslint/require-await -- async: a closed engine rejects
    async publisher(who, channel) {
      const room = roomOf(who.examId);
      const link = new PublisherLink(context, room, who, channel);
      room.publishers.add(link);
      return link;
    },

    // eslint-disable-next-line @typescript-eslint/require-await -- async: a closed engine rejects
    async subscriber(who, channel) {
      const room = roomOf(who.examId);
      const link = new SubscriberLink(context, room, who, channel);
      room.subscribers.add(link);
      return link;
    },

    connected(examId) {
      const room = rooms.get(examId);
      if (room === undefined) return Promise.resolve([]);
      const candidates = new Map<number, boolean>();
      const phones = new Map<number, boolean>();
      for (const link of room.publishers) {
        const publishers = link.device === 'phone' ? phones : candidates;
        publishers.set(link.sessionId, room.publicationsOf(link.device).has(link.sessionId));
      }
      const proctors = new Set([...room.subscribers].map((link) => link.userId));
      const participants: LiveParticipant[] = [
        ...[...candidates].map(([id, publishing]) => ({ role: 'candidate' as const, id, publishing })),
        ...[...phones].map(([id, publishing]) => ({ role: 'phone' as const, id, publishing })),
        ...[...proctors].map((id) => ({ role: 'proctor' as const, id, publishing: false })),
      ];
      return Promise.resolve(participants);
    },

    async close() {
      if (closed) {
        await settled();
        return;
      }
      closed = true;
      clearInterval(watchdog);
      for (const room of [...rooms.values()]) closeRoom(room);
      await Promise.all([...peers].map((peer) => peer.close()));
    },
  };
}
