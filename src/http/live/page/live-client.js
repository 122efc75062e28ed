// @ts-check
/* global window, console, location, performance */
/**
 * The browser's side of live proctoring (docs/live-proctoring.md), shared by the candidate's exam
 * room (publishes its camera, microphone and screen), the candidate's phone in a `mobile_cam` exam
 * (publishes its camera's video alone, `cameraOnly`; src/http/mobile/page/mobile-live.js) and the
 * proctor wall in the console (watches candidates, and their phones when asked with `onPhone`).
 * One WebSocket to the service carries the signalling (src/live/protocol.ts); the media goes to the
 * embedded engine over one RTCPeerConnection per publication or watched candidate (or phone), or
 * through LiveKit (`/live/assets/livekit.js`) when the server says so in `hello`.
 *
 * Everything reconnects by itself: the socket with a backoff of 1 s growing to 5 s, then the
 * publication and every watch again over the new socket; a peer connection that fails is offered
 * anew. A dependency-free ES module with JSDoc types, no globals: the room loads it from
 * /live/assets/live-client.js, the console bundles it through Vite.
 *
 * Media layout (embedded engine): three m-lines in a fixed order, 0 camera video, 1 microphone
 * audio, 2 screen video; a line without a track carries nothing. The phone publishes one m-line, its
 * camera's video, and a proctor watches it over a peer connection of its own (signals with
 * `device: "phone"`). Offers and answers are complete (ICE gathered, no trickle).
 */

/**
 * @typedef {{ urls: string, username?: string, credential?: string }} IceServer
 * @typedef {{ engine: 'embedded', iceServers: readonly IceServer[] }} EmbeddedJoin
 * @typedef {{ engine: 'livekit', iceServers: readonly IceServer[], url: string, token: string, room: string }} LivekitJoin
 * @typedef {EmbeddedJoin | LivekitJoin} LiveJoin
 * @typedef {'offline' | 'connecting' | 'live'} LiveStatus
 * @typedef {'admitted' | 'paused' | 'resumed' | 'ended'} RoomControl
 * @typedef {{
 *   id: number, student_session_id: number, sender: 'proctor' | 'candidate',
 *   author: string | null, body: string, created_at: string
 * }} LiveMessage
 * @typedef {{ type: 'hello', role: 'candidate' | 'proctor' | 'phone', join: LiveJoin }
 *   | { type: 'answer', sdp: string }
 *   | { type: 'offer', sessionId: number, sdp: string, device?: 'phone' }
 *   | { type: 'unpublished', sessionId: number, device?: 'phone' }
 *   | { type: 'live', sessionId: number, liveStatus: LiveStatus }
 *   | { type: 'message', message: LiveMessage }
 *   | { type: 'control', action: RoomControl }
 *   | { type: 'error', error: string, fatal: boolean }
 *   | { type: 'keepalive' }} ServerMessage
 * @typedef {{ type: 'offer', sdp: string }
 *   | { type: 'subscribe', sessionId: number, device?: 'phone' }
 *   | { type: 'unsubscribe', sessionId: number, device?: 'phone' }
 *   | { type: 'answer', sessionId: number, sdp: string, device?: 'phone' }
 *   | { type: 'media', state: 'connecting' | 'live' }} ClientSignal
 * @typedef {Extract<ServerMessage, { type: 'message' | 'control' | 'live' | 'error' }>} AppMessage
 * @typedef {'connecting' | 'open' | 'closed'} SocketStatus
 * @typedef {'off' | 'connecting' | 'live'} PublishState
 *   off: nothing to publish; connecting: media not (yet, or no longer) reaching the server; live: flowing.
 * @typedef {'waiting' | 'connecting' | 'live'} WatchState
 *   waiting: the candidate publishes nothing now; connecting: media on its way; live: flowing.
 * @typedef {'computer' | 'phone'} LiveDevice
 *   Which of a candidate's devices: the computer (the exam room) or the phone.
 * @typedef {'camera' | 'screen'} StreamKind
 * @typedef {{ camera: MediaStream | null, screen: MediaStream | null }} Media
 * @typedef {{ fps: number | null, lossPercent: number | null, rttMs: number | null }} LiveStats
 * @typedef {{
 *   onStream?: (kind: StreamKind, stream: MediaStream) => void,
 *   onState?: (state: WatchState) => void,
 *   onPhone?: (stream: MediaStream | null) => void
 * }} WatchHandlers
 *   onStream/onState: the computer's media. onPhone, when given, also watches the candidate's phone:
 *   called with its video while it flows, and with null when it stops (or never came).
 * @typedef {{ stop(): void, stats(): Promise<LiveStats> }} LiveWatch
 * @typedef {{
 *   publish(media: Media): void,
 *   watch(sessionId: number, handlers?: WatchHandlers): LiveWatch,
 *   close(): void,
 *   readonly status: SocketStatus
 * }} LiveConnection
 * @typedef {{
 *   url: string,
 *   cameraOnly?: boolean,
 *   onMessage?: (message: AppMessage) => void,
 *   onStatus?: (status: SocketStatus) => void,
 *   onPublishState?: (state: PublishState) => void
 * }} LiveOptions
 *   cameraOnly: publish the camera's video alone, on one m-line (the phone's socket).
 * @typedef {{ close(): void }} LivekitPublication
 * @typedef {{ stop(): void, stats(): Promise<LiveStats> }} LivekitWatch
 * @typedef {{
 *   publishLivekit(join: LivekitJoin, media: Media, onState: (state: 'connecting' | 'live') => void):
 *     LivekitPublication | Promise<LivekitPublication>,
 *   watchLivekit(join: LivekitJoin, sessionId: number,
 *     handlers: Required<Omit<WatchHandlers, 'onPhone'>>, device?: LiveDevice):
 *     LivekitWatch | Promise<LivekitWatch>
 * }} LivekitModule
 */

/** The first wait before reconnecting (the socket, a failed peer connection); doubles up to the next. */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 5000;
/** How long an offer or answer waits for ICE gathering; after it, it goes with what was gathered. */
const GATHERING_LIMIT_MS = 4000;
/** A publication whose offer got no answer in this time is offered again. */
const ANSWER_LIMIT_MS = 15000;
/** A socket that brings nothing for this long (the server sends a keepalive every 15 s) is dead. */
const KEEPALIVE_LIMIT_MS = 40000;
/** A peer connection `disconnected` for this long is treated as failed. */
const DISCONNECTED_LIMIT_MS = 5000;
/** The LiveKit adapter (src/http/live/page/livekit.js), loaded only when the server uses LiveKit. */
const LIVEKIT_MODULE = '/live/assets/livekit.js';

/** The camera as the proctor gets it: about 640×360 at 15 frames a second. */
const CAMERA_HEIGHT = 360;
const CAMERA_FPS = 15;
const CAMERA_BITRATE = 600_000;
/** The screen at a low frame rate (text stays sharp; motion does not matter). */
const SCREEN_WIDTH = 1280;
const SCREEN_FPS = 2;
const SCREEN_BITRATE = 400_000;

/** @type {LiveStats} */
const NO_STATS = { fps: null, lossPercent: null, rttMs: null };

/** @type {Promise<LivekitModule> | undefined} */
let livekitModule;

/** Loads the LiveKit adapter once. Returns it; rejects when it cannot be loaded. */
function loadLivekit() {
  livekitModule ??= /** @type {Promise<LivekitModule>} */ (import(/* @vite-ignore */ LIVEKIT_MODULE));
  return livekitModule;
}

/** The wait before retry number `attempt` (0, 1, …): 1 s, 2 s, 4 s, then 5 s. */
function retryDelay(/** @type {number} */ attempt) {
  return Math.min(RETRY_FIRST_MS * 2 ** attempt, RETRY_MAX_MS);
}

/** Runs a caller's callback; a mistake in it must not break the connection. */
function safely(/** @type {() => void} */ callback) {
  try {
    callback();
  } catch (error) {
    console.error('live: a callback failed', error);
  }
}

/** The socket's address for a path like /live/room/TOKEN (ws:// or wss:// like the page). */
function socketAddress(/** @type {string} */ path) {
  const address = new URL(path, location.href);
  address.protocol = address.protocol === 'https:' ? 'wss:' : 'ws:';
  return address.toString();
}

/** Reads one server frame; undefined for anything that is not a JSON object with a `type`. */
function parseServerMessage(/** @type {unknown} */ data) {
  if (typeof data !== 'string') return undefined;
  try {
    const value = /** @type {unknown} */ (JSON.parse(data));
    if (typeof value !== 'object' || value === null || !('type' in value) || typeof value.type !== 'string') {
      return undefined;
    }
    return /** @type {ServerMessage} */ (value);
  } catch {
    return undefined;
  }
}

/** @param {readonly IceServer[]} iceServers */
function newPeerConnection(iceServers) {
  return new RTCPeerConnection({
    iceServers: iceServers.map((server) => ({ ...server })),
    bundlePolicy: 'max-bundle',
  });
}

/**
 * Waits until the connection has gathered its ICE candidates, or GATHERING_LIMIT_MS (a TURN server
 * that does not answer must not hold the offer back). Returns the local description's SDP.
 * @param {RTCPeerConnection} pc
 */
async function gatheredSdp(pc) {
  if (pc.iceGatheringState !== 'complete') {
    await new Promise((resolve) => {
      const done = () => {
        window.clearTimeout(timer);
        pc.removeEventListener('icegatheringstatechange', changed);
        resolve(undefined);
      };
      const changed = () => {
        if (pc.iceGatheringState === 'complete') done();
      };
      const timer = window.setTimeout(done, GATHERING_LIMIT_MS);
      pc.addEventListener('icegatheringstatechange', changed);
    });
  }
  return pc.localDescription?.sdp ?? '';
}

/**
 * Own copies of the tracks to publish: the proctor's copy can be stopped, scaled and hinted without
 * touching the streams the room records (and the LiveKit client stops what it unpublishes).
 * @param {Media} media
 * @returns {Media}
 */
function cloneMedia(media) {
  /** @param {MediaStream | null} stream */
  const copy = (stream) => {
    const tracks = stream?.getTracks().filter((track) => track.readyState === 'live') ?? [];
    return tracks.length === 0 ? null : new MediaStream(tracks.map((track) => track.clone()));
  };
  const screen = copy(media.screen);
  for (const track of screen?.getVideoTracks() ?? []) track.contentHint = 'detail';
  return { camera: copy(media.camera), screen };
}

/** Stops the copies cloneMedia made. */
function stopMedia(/** @type {Media} */ media) {
  for (const stream of [media.camera, media.screen]) stream?.getTracks().forEach((track) => track.stop());
}

/** True when `media` has a track to send. */
function hasTracks(/** @type {Media} */ media) {
  return (media.camera?.getTracks().length ?? 0) + (media.screen?.getTracks().length ?? 0) > 0;
}

/** A key naming the original tracks, so publishing the same streams again changes nothing. */
function mediaKey(/** @type {Media} */ media) {
  return [media.camera, media.screen]
    .map((stream) =>
      (stream?.getTracks() ?? [])
        .filter((track) => track.readyState === 'live')
        .map((track) => track.id)
        .join('+'),
    )
    .join('|');
}

/**
 * The encoding of the camera (about 640×360 at 15 fps) or the screen (at most 1280 wide, 2 fps),
 * scaled from what the track delivers; the capture itself is left as the recording wants it.
 * @param {'camera' | 'screen'} kind
 * @param {MediaStreamTrack | null} track
 * @returns {RTCRtpEncodingParameters}
 */
function encodingFor(kind, track) {
  const settings = track?.getSettings() ?? {};
  if (kind === 'camera') {
    const height = settings.height ?? CAMERA_HEIGHT;
    return {
      maxFramerate: CAMERA_FPS,
      maxBitrate: CAMERA_BITRATE,
      scaleResolutionDownBy: Math.max(1, height / CAMERA_HEIGHT),
    };
  }
  const width = settings.width ?? SCREEN_WIDTH;
  return {
    maxFramerate: SCREEN_FPS,
    maxBitrate: SCREEN_BITRATE,
    scaleResolutionDownBy: Math.max(1, width / SCREEN_WIDTH),
  };
}

/** The three tracks in m-line order: camera video, microphone, screen video. */
function tracksInOrder(/** @type {Media} */ media) {
  return /** @type {const} */ ([
    media.camera?.getVideoTracks()[0] ?? null,
    media.camera?.getAudioTracks()[0] ?? null,
    media.screen?.getVideoTracks()[0] ?? null,
  ]);
}

/** What the phone publishes of `media`: its camera's video alone (no sound, no screen). */
function cameraVideoOnly(/** @type {Media} */ media) {
  const video = media.camera?.getVideoTracks() ?? [];
  return { camera: video.length === 0 ? null : new MediaStream(video), screen: null };
}

/** A number field of a stats entry, or undefined. */
function statNumber(/** @type {Record<string, unknown>} */ stat, /** @type {string} */ field) {
  const value = stat[field];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * @typedef {{
 *   pc: RTCPeerConnection | undefined,
 *   failures: number,
 *   disconnectedTimer: number | undefined,
 *   report(state: 'connecting' | 'live'): void
 * }} PeerOwner
 *   What holds one peer connection at a time and replaces it when it fails: the embedded publisher
 *   and a watch.
 */

/**
 * Follows `pc`'s connection state for `owner` while it is the owner's current connection: connected
 * reports `live` and ends the run of failures; disconnected (often a moment's loss that ICE rides
 * out) reports `connecting` and calls `replace` if it lasts DISCONNECTED_LIMIT_MS; failed calls
 * `replace` at once. Returns nothing.
 * @param {PeerOwner} owner
 * @param {RTCPeerConnection} pc
 * @param {() => void} replace
 */
function followConnection(owner, pc, replace) {
  pc.addEventListener('connectionstatechange', () => {
    if (pc !== owner.pc) return;
    window.clearTimeout(owner.disconnectedTimer);
    switch (pc.connectionState) {
      case 'connected':
        owner.failures = 0;
        owner.report('live');
        return;
      case 'disconnected':
        owner.report('connecting');
        owner.disconnectedTimer = window.setTimeout(() => {
          if (owner.pc === pc && pc.connectionState === 'disconnected') replace();
        }, DISCONNECTED_LIMIT_MS);
        return;
      case 'failed':
        replace();
        return;
      default:
        return;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Publishing (candidate)

/**
 * @typedef {{
 *   setMedia(media: Media): void,
 *   answer(sdp: string): void,
 *   close(): void
 * }} Publisher
 */

/**
 * Publishes to the embedded engine: one peer connection with the three sendonly lines (the phone's
 * one, `cameraOnly`), offered complete; a failed connection (or an offer left unanswered) is
 * replaced and offered again.
 * @implements {Publisher}
 */
class EmbeddedPublisher {
  /**
   * @param {readonly IceServer[]} iceServers
   * @param {(signal: ClientSignal) => void} signal
   * @param {(state: PublishState) => void} report
   * @param {boolean} cameraOnly
   */
  constructor(iceServers, signal, report, cameraOnly) {
    this.iceServers = iceServers;
    this.cameraOnly = cameraOnly;
    this.signal = signal;
    this.report = report;
    /** @type {Media} */
    this.media = { camera: null, screen: null };
    /** @type {RTCPeerConnection | undefined} */
    this.pc = undefined;
    /** Peer connections whose offers await their answer, oldest first (the server answers in order). */
    /** @type {RTCPeerConnection[]} */
    this.awaiting = [];
    this.failures = 0;
    this.closed = false;
    /** @type {number | undefined} */
    this.retryTimer = undefined;
    /** @type {number | undefined} */
    this.answerTimer = undefined;
    /** @type {number | undefined} */
    this.disconnectedTimer = undefined;
  }

  /** @param {Media} media */
  setMedia(media) {
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
  lineTracks() {
    const tracks = tracksInOrder(this.media);
    return this.cameraOnly ? [tracks[0]] : [...tracks];
  }

  /** @param {RTCPeerConnection} pc */
  async replaceTracks(pc) {
    const tracks = this.lineTracks();
    const transceivers = pc.getTransceivers();
    if (transceivers.length !== tracks.length) throw new Error('unexpected transceivers');
    for (const [index, track] of tracks.entries()) {
      const sender = transceivers[index]?.sender;
      if (sender === undefined) continue;
      await sender.replaceTrack(track);
      if (index === 1 || track === null) continue;
      const parameters = sender.getParameters();
      const encoding = parameters.encodings?.[0];
      if (encoding === undefined) continue;
      Object.assign(encoding, encodingFor(index === 0 ? 'camera' : 'screen', track));
      await sender.setParameters(parameters);
    }
  }

  /** Replaces the peer connection now (or drops it when there is nothing to send). */
  restart() {
    this.dropConnection();
    if (this.closed) return;
    if (!hasTracks(this.media)) {
      this.report('off');
      return;
    }
    const pc = newPeerConnection(this.iceServers);
    this.pc = pc;
    this.connect(pc).catch((/** @type {unknown} */ error) => {
      // A connection replaced meanwhile fails as it is closed; only the current one is retried.
      if (this.pc !== pc) return;
      console.warn('live: the offer failed', error);
      this.retry();
    });
  }

  /** Replaces the peer connection after a wait that grows with each failure in a row. */
  retry() {
    this.dropConnection();
    if (this.closed) return;
    this.report(hasTracks(this.media) ? 'connecting' : 'off');
    const delay = retryDelay(this.failures);
    this.failures += 1;
    this.retryTimer = window.setTimeout(() => this.restart(), delay);
  }

  dropConnection() {
    window.clearTimeout(this.retryTimer);
    window.clearTimeout(this.answerTimer);
    window.clearTimeout(this.disconnectedTimer);
    this.pc?.close();
    this.pc = undefined;
  }

  /**
   * Offers `pc` with the three lines (the phone: the camera's alone) and sends the offer once ICE is
   * gathered. @param {RTCPeerConnection} pc
   */
  async connect(pc) {
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

  /** @param {string} sdp */
  answer(sdp) {
    const pc = this.awaiting.shift();
    // An answer to an offer of a connection since replaced: dropped.
    if (pc === undefined || pc !== this.pc || pc.signalingState !== 'have-local-offer') return;
    window.clearTimeout(this.answerTimer);
    pc.setRemoteDescription({ type: 'answer', sdp }).catch((/** @type {unknown} */ error) => {
      console.warn('live: the answer was refused', error);
      if (this.pc === pc) this.retry();
    });
  }

  close() {
    this.closed = true;
    this.dropConnection();
    this.awaiting = [];
  }
}

/**
 * Publishes through LiveKit (the adapter in livekit.js) and tells the server whether the media
 * flows (`media`), which it cannot see on that engine.
 * @implements {Publisher}
 */
class LivekitPublisher {
  /**
   * @param {LivekitJoin} join
   * @param {(signal: ClientSignal) => void} signal
   * @param {(state: PublishState) => void} report
   */
  constructor(join, signal, report) {
    this.join = join;
    this.signal = signal;
    this.report = report;
    /** @type {Media} */
    this.media = { camera: null, screen: null };
    /** @type {LivekitPublication | undefined} */
    this.publication = undefined;
    /** Counts the publications started; a late one of an older count is closed at once. */
    this.generation = 0;
    this.failures = 0;
    this.closed = false;
    /** @type {number | undefined} */
    this.retryTimer = undefined;
  }

  /** @param {Media} media */
  setMedia(media) {
    this.media = media;
    this.restart();
  }

  answer() {}

  restart() {
    window.clearTimeout(this.retryTimer);
    this.generation += 1;
    this.publication?.close();
    this.publication = undefined;
    if (this.closed) return;
    if (!hasTracks(this.media)) {
      this.report('off');
      return;
    }
    const generation = this.generation;
    this.report('connecting');
    this.signal({ type: 'media', state: 'connecting' });
    this.start(generation).catch((/** @type {unknown} */ error) => {
      console.warn('live: LiveKit publishing failed', error);
      if (generation !== this.generation || this.closed) return;
      this.retryTimer = window.setTimeout(() => this.restart(), retryDelay(this.failures));
      this.failures += 1;
    });
  }

  /** @param {number} generation */
  async start(generation) {
    const livekit = await loadLivekit();
    if (generation !== this.generation) return;
    const publication = await livekit.publishLivekit(this.join, this.media, (state) => {
      if (generation !== this.generation) return;
      if (state === 'live') this.failures = 0;
      this.report(state);
      this.signal({ type: 'media', state });
    });
    if (generation !== this.generation) {
      publication.close();
      return;
    }
    this.publication = publication;
  }

  close() {
    this.closed = true;
    this.restart();
  }
}

// ---------------------------------------------------------------------------------------------
// Watching (proctor)

/**
 * Watching one candidate's computer (or its phone, `device` phone). Lives across reconnects: each
 * new socket subscribes again. On the embedded engine every `offer` for the device replaces the peer
 * connection; on LiveKit the adapter does the watching.
 */
class Watch {
  /**
   * @param {number} sessionId
   * @param {WatchHandlers} handlers
   * @param {(signal: ClientSignal) => boolean} signal
   * @param {LiveDevice} device
   */
  constructor(sessionId, handlers, signal, device = 'computer') {
    this.sessionId = sessionId;
    this.handlers = handlers;
    this.signal = signal;
    this.device = device;
    /** What the signals about this device carry besides the session: nothing for the computer. */
    /** @type {{ device?: 'phone' }} */
    this.target = device === 'phone' ? { device: 'phone' } : {};
    /** @type {LiveJoin | undefined} */
    this.join = undefined;
    /** @type {RTCPeerConnection | undefined} */
    this.pc = undefined;
    /** @type {LivekitWatch | undefined} */
    this.livekit = undefined;
    this.generation = 0;
    this.failures = 0;
    this.stopped = false;
    /** @type {WatchState | undefined} */
    this.state = undefined;
    /** @type {number | undefined} */
    this.retryTimer = undefined;
    /** @type {number | undefined} */
    this.disconnectedTimer = undefined;
    /** The previous sample of the counters, for loss and frame rate over the last interval. */
    /** @type {{ received: number, lost: number, frames: number | undefined, at: number } | undefined} */
    this.previous = undefined;
  }

  /** @param {WatchState} state */
  report(state) {
    if (this.state === state) return;
    this.state = state;
    safely(() => this.handlers.onState?.(state));
  }

  /** @param {StreamKind} kind @param {MediaStream} stream */
  emit(kind, stream) {
    safely(() => this.handlers.onStream?.(kind, stream));
  }

  /** The socket said hello: subscribe over it. @param {LiveJoin} join */
  start(join) {
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

  /** @param {LivekitJoin} join */
  startLivekit(join) {
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
      .catch((/** @type {unknown} */ error) => {
        console.warn('live: LiveKit watching failed', error);
        if (generation !== this.generation || this.stopped) return;
        this.retryTimer = window.setTimeout(() => this.start(join), retryDelay(this.failures));
        this.failures += 1;
      });
  }

  /** The socket closed: what came over it is gone. */
  disconnected() {
    this.teardown();
    this.join = undefined;
    if (!this.stopped) this.report('connecting');
  }

  teardown() {
    this.generation += 1;
    window.clearTimeout(this.retryTimer);
    window.clearTimeout(this.disconnectedTimer);
    this.pc?.close();
    this.pc = undefined;
    this.livekit?.stop();
    this.livekit = undefined;
    this.previous = undefined;
  }

  /** The candidate's media, offered (again): a new peer connection answers it. @param {string} sdp */
  offer(sdp) {
    if (this.stopped || this.join === undefined) return;
    this.teardown();
    const pc = newPeerConnection(this.join.iceServers);
    this.pc = pc;
    this.answerOffer(pc, sdp).catch((/** @type {unknown} */ error) => {
      // A connection replaced by a newer offer fails as it is closed; that is no failure.
      if (this.pc !== pc) return;
      console.warn('live: the offer could not be answered', error);
      this.resubscribe();
    });
  }

  /**
   * Answers the offer on `pc` (receive only) and hands the streams to the page.
   * @param {RTCPeerConnection} pc
   * @param {string} sdp
   */
  async answerOffer(pc, sdp) {
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
    const receiving = (/** @type {RTCRtpTransceiver | undefined} */ transceiver) =>
      transceiver !== undefined && transceiver.currentDirection === 'recvonly'
        ? [transceiver.receiver.track]
        : [];
    const camera = [...receiving(transceivers[0]), ...receiving(transceivers[1])];
    const screen = receiving(transceivers[2]);
    if (camera.length > 0) this.emit('camera', new MediaStream(camera));
    if (screen.length > 0) this.emit('screen', new MediaStream(screen));
  }

  /** The connection failed: after a wait, ask the server for a fresh offer. */
  resubscribe() {
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
  unpublished() {
    this.teardown();
    if (!this.stopped) this.report('waiting');
  }

  stop() {
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
   * @returns {Promise<LiveStats>}
   */
  async stats() {
    if (this.livekit !== undefined) return this.livekit.stats();
    const pc = this.pc;
    if (pc === undefined || pc.connectionState === 'closed') return { ...NO_STATS };
    const cameraTrack = pc.getTransceivers()[0]?.receiver.track.id;
    const report = await pc.getStats();
    let received = 0;
    let lost = 0;
    /** @type {number | undefined} */
    let fps;
    /** @type {number | undefined} */
    let frames;
    /** @type {number | undefined} */
    let rtt;
    /** @type {number} */
    let at = performance.now();
    report.forEach((/** @type {Record<string, unknown>} */ stat) => {
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

// ---------------------------------------------------------------------------------------------
// The connection

/**
 * Opens the live socket at `url` (a path like /live/room/TOKEN or /live/exams/7), reconnecting by
 * itself (1 s, 2 s, 4 s, then every 5 s) and publishing / watching again after every reconnect.
 * `onMessage` gets the chat, control, live-status and error messages; `onStatus` the socket's state
 * (`open` once the server said hello); `onPublishState` whether the published media reaches the
 * server. A fatal `error` ends the connection (status `closed`, no reconnect). With `cameraOnly`
 * (the phone's socket) only the camera's video is published, on one line. Returns the connection;
 * never throws.
 * @param {LiveOptions} options
 * @returns {LiveConnection}
 */
export function connectLive({ url, cameraOnly = false, onMessage, onStatus, onPublishState }) {
  const address = socketAddress(url);
  /** @type {WebSocket | undefined} */
  let socket;
  /** @type {LiveJoin | undefined} */
  let join;
  /** @type {SocketStatus} */
  let status = 'connecting';
  let closed = false;
  let fatal = false;
  let attempts = 0;
  /** @type {number | undefined} */
  let reconnectTimer;
  /** When the current socket last brought a frame (the server sends one at least every 15 s). */
  let heardAt = Date.now();
  /** What the page wants published (own copies), and the publisher for the current socket. */
  /** @type {Media} */
  let media = { camera: null, screen: null };
  let publishedKey = '';
  /** @type {Publisher | undefined} */
  let publisher;
  /** @type {PublishState | undefined} */
  let publishState;
  /** @type {Map<number, Watch>} */
  const watches = new Map();
  /** The watches of candidates' phones (those watched with `onPhone`), by session id. */
  /** @type {Map<number, Watch>} */
  const phoneWatches = new Map();

  /** Every watch, computers' and phones'. */
  function allWatches() {
    return [...watches.values(), ...phoneWatches.values()];
  }

  /** @param {SocketStatus} next */
  function setStatus(next) {
    if (status === next) return;
    status = next;
    safely(() => onStatus?.(next));
  }

  /** @param {PublishState} next */
  function reportPublish(next) {
    if (publishState === next) return;
    publishState = next;
    safely(() => onPublishState?.(next));
  }

  /** Sends a signal over the open socket. Returns false when there is none (it is sent again on hello). */
  function signal(/** @type {ClientSignal} */ message) {
    if (socket?.readyState !== WebSocket.OPEN || join === undefined) return false;
    socket.send(JSON.stringify(message));
    return true;
  }

  function startPublisher() {
    publisher?.close();
    publisher = undefined;
    if (join === undefined || !hasTracks(media)) {
      reportPublish(hasTracks(media) ? 'connecting' : 'off');
      return;
    }
    publisher =
      join.engine === 'livekit'
        ? new LivekitPublisher(join, signal, reportPublish)
        : new EmbeddedPublisher(join.iceServers, signal, reportPublish, cameraOnly);
    publisher.setMedia(media);
  }

  function connect() {
    if (closed) return;
    setStatus('connecting');
    let opened;
    try {
      opened = new WebSocket(address);
    } catch (error) {
      console.warn('live: the socket could not be opened', error);
      scheduleReconnect();
      return;
    }
    socket = opened;
    heardAt = Date.now();
    opened.addEventListener('message', (event) => {
      if (socket !== opened) return;
      heardAt = Date.now();
      receive(parseServerMessage(event.data));
    });
    opened.addEventListener('close', () => {
      if (socket === opened) lost();
    });
  }

  /** The socket closed (or was given up on): everything over it is gone; reconnect unless closed. */
  function lost() {
    socket = undefined;
    join = undefined;
    publisher?.close();
    publisher = undefined;
    if (hasTracks(media)) reportPublish('connecting');
    for (const watch of allWatches()) watch.disconnected();
    if (closed || fatal) {
      setStatus('closed');
      return;
    }
    scheduleReconnect();
  }

  function scheduleReconnect() {
    setStatus('connecting');
    window.clearTimeout(reconnectTimer);
    reconnectTimer = window.setTimeout(connect, retryDelay(attempts));
    attempts += 1;
  }

  /** @param {ServerMessage | undefined} message */
  function receive(message) {
    if (message === undefined) return;
    switch (message.type) {
      case 'hello':
        join = message.join;
        attempts = 0;
        setStatus('open');
        startPublisher();
        for (const watch of allWatches()) watch.start(message.join);
        return;
      case 'answer':
        publisher?.answer(message.sdp);
        return;
      case 'offer':
        (message.device === 'phone' ? phoneWatches : watches).get(message.sessionId)?.offer(message.sdp);
        return;
      case 'unpublished':
        (message.device === 'phone' ? phoneWatches : watches).get(message.sessionId)?.unpublished();
        return;
      case 'error':
        if (message.fatal) fatal = true;
        safely(() => onMessage?.(message));
        return;
      case 'message':
      case 'control':
      case 'live':
        safely(() => onMessage?.(message));
        return;
      default:
        return;
    }
  }

  /**
   * A watch of the phone of session `sessionId`, registered, telling `onPhone` its video while it
   * flows (the phone's connection is up) and null whenever it does not. Returns the watch.
   * @param {number} sessionId
   * @param {(stream: MediaStream | null) => void} onPhone
   */
  function watchPhone(sessionId, onPhone) {
    /** @type {MediaStream | undefined} */
    let stream;
    /** @type {WatchState | undefined} */
    let state;
    /** @type {MediaStream | null | undefined} */
    let told;
    const tell = () => {
      const shown = state === 'live' && stream !== undefined ? stream : null;
      if (shown === told) return;
      told = shown;
      safely(() => onPhone(shown));
    };
    const phone = new Watch(
      sessionId,
      {
        onStream: (kind, next) => {
          if (kind !== 'camera') return;
          stream = next;
          tell();
        },
        onState: (next) => {
          state = next;
          tell();
        },
      },
      signal,
      'phone',
    );
    phoneWatches.set(sessionId, phone);
    return phone;
  }

  // The browser knows first when the network is gone or back; a socket waiting on a dead line
  // would otherwise notice only when the server's pings stop reaching it.
  const offline = () => {
    if (socket !== undefined) {
      const old = socket;
      lost();
      old.close();
    }
  };
  const online = () => {
    if (closed || fatal || socket !== undefined) return;
    attempts = 0;
    window.clearTimeout(reconnectTimer);
    connect();
  };
  window.addEventListener('offline', offline);
  window.addEventListener('online', online);
  // A network that dies without the browser noticing leaves the socket open and silent: the server's
  // keepalives stop arriving, and the socket is given up on and opened anew.
  const watchdog = window.setInterval(() => {
    if (socket?.readyState === WebSocket.OPEN && Date.now() - heardAt > KEEPALIVE_LIMIT_MS) offline();
  }, KEEPALIVE_LIMIT_MS / 8);
  connect();

  return {
    get status() {
      return status;
    },

    publish(wanted) {
      if (closed) return;
      const next = cameraOnly ? cameraVideoOnly(wanted) : wanted;
      const key = mediaKey(next);
      if (key === publishedKey) return;
      publishedKey = key;
      const old = media;
      media = cloneMedia(next);
      if (publisher === undefined) startPublisher();
      else publisher.setMedia(media);
      if (!hasTracks(media)) reportPublish('off');
      stopMedia(old);
    },

    watch(sessionId, handlers = {}) {
      watches.get(sessionId)?.stop();
      phoneWatches.get(sessionId)?.stop();
      phoneWatches.delete(sessionId);
      const watch = new Watch(sessionId, handlers, signal);
      watches.set(sessionId, watch);
      const phone = handlers.onPhone === undefined ? undefined : watchPhone(sessionId, handlers.onPhone);
      for (const each of phone === undefined ? [watch] : [watch, phone]) {
        if (join !== undefined) each.start(join);
        else each.report('connecting');
      }
      return {
        stop() {
          watch.stop();
          if (watches.get(sessionId) === watch) watches.delete(sessionId);
          if (phone === undefined) return;
          phone.stop();
          if (phoneWatches.get(sessionId) === phone) phoneWatches.delete(sessionId);
        },
        stats: () => watch.stats(),
      };
    },

    close() {
      if (closed) return;
      closed = true;
      window.removeEventListener('offline', offline);
      window.removeEventListener('online', online);
      window.clearInterval(watchdog);
      window.clearTimeout(reconnectTimer);
      for (const watch of allWatches()) watch.stop();
      watches.clear();
      phoneWatches.clear();
      publisher?.close();
      publisher = undefined;
      stopMedia(media);
      media = { camera: null, screen: null };
      publishedKey = '';
      const old = socket;
      socket = undefined;
      join = undefined;
      old?.close(1000);
      setStatus('closed');
    },
  };
}
