// @ts-check
/* global console, MediaStream, setTimeout, clearTimeout */
/**
 * Live proctoring through a LiveKit server, in the browser (docs/live-proctoring.md, "LiveKit"). The
 * live client (live-client.js) loads this module when the socket's `hello` names the LiveKit engine;
 * this module loads livekit-client itself, from the service (/live/assets/livekit-client.mjs), only
 * then, so pages on the embedded engine never download it.
 *
 * - A candidate publishes its camera (source camera), microphone (microphone) and screen
 *   (screen_share) into the exam's room with its join token; the tracks stay the page's own (the
 *   recorder uses them too), so nothing here ever stops them.
 * - A candidate's phone publishes the same way, as participant `candidate-<sessionId>-phone`, its
 *   camera's video alone (source camera).
 * - A proctor joins the exam's room once per join token (hidden, subscribing to nothing by itself) and
 *   each watch subscribes to one candidate's tracks only, by identity `candidate-<sessionId>` (or its
 *   phone's, `candidate-<sessionId>-phone`).
 * - Both sides reconnect by themselves (backoff 1 s → 5 s) unless LiveKit refused the token, removed
 *   the participant (its socket closed; a new `hello` brings a new token), ended the room, or another
 *   connection took over the identity.
 */

/** Where the service serves livekit-client's ES module build (src/http/live/assets.routes.ts). */
const LIVEKIT_CLIENT = '/live/assets/livekit-client.mjs';

/** First and longest wait before connecting again. */
const RETRY_FIRST_MS = 1000;
const RETRY_LONGEST_MS = 5000;
/** How long a proctor's room stays connected after its last watch stopped (a wall re-rendering). */
const IDLE_DISCONNECT_MS = 30000;

/**
 * @typedef {typeof import('livekit-client')} LivekitClient
 * @typedef {import('livekit-client').Room} LivekitRoom
 * @typedef {import('livekit-client').RemoteParticipant} RemoteParticipant
 * @typedef {import('livekit-client').RemoteTrack} RemoteTrack
 * @typedef {import('livekit-client').DisconnectReason} DisconnectReason
 * @typedef {{ urls: string, username?: string, credential?: string }} IceServer
 * @typedef {{ engine: 'livekit', url: string, token: string, room: string, iceServers: readonly IceServer[] }} LivekitJoin
 * @typedef {'connecting' | 'live'} PublishState
 * @typedef {'waiting' | 'connecting' | 'live'} WatchState
 * @typedef {'camera' | 'screen'} StreamKind
 * @typedef {'computer' | 'phone'} LiveDevice
 * @typedef {{ fps: number | null, lossPercent: number | null, rttMs: number | null }} WatchStats
 */

/** @type {Promise<LivekitClient> | undefined} */
let clientModule;

/**
 * livekit-client, loaded on first use (again after a failed load).
 * @returns {Promise<LivekitClient>}
 */
function livekitClient() {
  clientModule ??= /** @type {Promise<LivekitClient>} */ (import(LIVEKIT_CLIENT)).catch((error) => {
    clientModule = undefined;
    throw error;
  });
  return clientModule;
}

/**
 * The options for Room.connect: no automatic subscriptions, and the service's TURN servers when it
 * has any (an empty list would hide the LiveKit server's own).
 * @param {LivekitJoin} join
 * @returns {import('livekit-client').RoomConnectOptions}
 */
function connectOptions(join) {
  if (join.iceServers.length === 0) return { autoSubscribe: false };
  const iceServers = join.iceServers.map((server) => ({ ...server }));
  return { autoSubscribe: false, rtcConfig: { iceServers } };
}

/**
 * A new Room: tracks handed in are never stopped by LiveKit, no adaptive stream (watches hand a
 * MediaStream to the page, not an element LiveKit could measure, so it would pause the video).
 * @param {LivekitClient} lk
 * @returns {LivekitRoom}
 */
function newRoom(lk) {
  return new lk.Room({
    adaptiveStream: false,
    dynacast: true,
    stopLocalTrackOnUnpublish: false,
    disconnectOnPageLeave: true,
  });
}

/**
 * Whether connecting again after this disconnection is pointless or harmful: LiveKit removed the
 * participant (its socket's link closed), ended the room, let a newer connection of the same identity
 * in (connecting again would throw that one out), or we left ourselves.
 * @param {LivekitClient} lk
 * @param {DisconnectReason | undefined} reason
 * @returns {boolean}
 */
function isFinal(lk, reason) {
  const { DisconnectReason: Reason } = lk;
  return (
    reason === Reason.CLIENT_INITIATED ||
    reason === Reason.DUPLICATE_IDENTITY ||
    reason === Reason.PARTICIPANT_REMOVED ||
    reason === Reason.ROOM_DELETED
  );
}

/**
 * Whether a failed connect should not be tried again: LiveKit refused the token (expired, wrong).
 * @param {LivekitClient} lk
 * @param {unknown} error
 * @returns {boolean}
 */
function isRefused(lk, error) {
  return error instanceof lk.ConnectionError && error.reason === lk.ConnectionErrorReason.NotAllowed;
}

/**
 * The wait before connect attempt number `attempt` (0 for the first retry).
 * @param {number} attempt
 * @returns {number}
 */
function retryDelay(attempt) {
  return Math.min(RETRY_FIRST_MS * 2 ** attempt, RETRY_LONGEST_MS);
}

// ---------------------------------------------------------------------------------------------
// Candidate: publishing

/**
 * Publishes a candidate's media into its exam's LiveKit room and keeps it published (reconnecting
 * by itself) until `close()`. `onState('live')` once connected with every track published,
 * `onState('connecting')` before that and whenever the connection is lost. The streams' tracks are
 * the caller's: they are published as they are and never stopped here.
 * @param {LivekitJoin} join
 * @param {{ camera: MediaStream | null, screen: MediaStream | null }} streams
 * @param {(state: PublishState) => void} onState
 * @returns {{ close(): void }}
 */
export function publishLivekit(join, { camera, screen }, onState) {
  let stopped = false;
  let attempt = 0;
  /** @type {LivekitRoom | undefined} */
  let room;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let retryTimer;
  /** @type {PublishState | undefined} */
  let reported;

  /** @param {PublishState} state */
  const report = (state) => {
    if (stopped || state === reported) return;
    reported = state;
    onState(state);
  };

  const retry = () => {
    if (stopped) return;
    report('connecting');
    retryTimer = setTimeout(() => void connect(), retryDelay(attempt));
    attempt += 1;
  };

  const connect = async () => {
    /** @type {LivekitClient} */
    let lk;
    try {
      lk = await livekitClient();
    } catch (error) {
      console.warn('live: could not load livekit-client', error);
      retry();
      return;
    }
    if (stopped) return;
    const current = newRoom(lk);
    room = current;
    current.on(lk.RoomEvent.Reconnecting, () => report('connecting'));
    current.on(lk.RoomEvent.Reconnected, () => report('live'));
    current.on(lk.RoomEvent.Disconnected, (reason) => {
      if (stopped || room !== current) return;
      report('connecting');
      if (!isFinal(lk, reason)) retry();
    });
    try {
      await current.connect(join.url, join.token, connectOptions(join));
      const { Source } = lk.Track;
      /** @type {[MediaStreamTrack | undefined, import('livekit-client').Track.Source, string][]} */
      const tracks = [
        [camera?.getVideoTracks()[0], Source.Camera, 'camera'],
        [camera?.getAudioTracks()[0], Source.Microphone, 'microphone'],
        [screen?.getVideoTracks()[0], Source.ScreenShare, 'screen'],
      ];
      for (const [track, source, name] of tracks) {
        if (track === undefined || track.readyState !== 'live') continue;
        await current.localParticipant.publishTrack(track, { source, name });
        if (stopped || room !== current) return;
      }
      attempt = 0;
      report('live');
    } catch (error) {
      if (stopped || room !== current) return;
      console.warn('live: could not publish to LiveKit', error);
      room = undefined;
      void current.disconnect(false);
      if (isRefused(lk, error)) {
        report('connecting');
        return;
      }
      retry();
    }
  };

  report('connecting');
  void connect();
  return {
    close() {
      if (stopped) return;
      stopped = true;
      clearTimeout(retryTimer);
      const current = room;
      room = undefined;
      void current?.disconnect(false);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Proctor: watching

/**
 * One watch of one candidate: told to re-read the room whenever something in it changed.
 * @typedef {{ identity: string, update(): void }} Watcher
 */

/**
 * A proctor's connection to the exam's room, shared by every watch made with the same join token
 * (LiveKit lets an identity in once; a second connection would throw the first out).
 * @typedef {{
 *   room: LivekitRoom | undefined,
 *   starting: boolean,
 *   connected: boolean,
 *   dead: boolean,
 *   watchers: Set<Watcher>,
 *   idleTimer: ReturnType<typeof setTimeout> | undefined,
 *   retryTimer: ReturnType<typeof setTimeout> | undefined,
 *   attempt: number,
 * }} SharedRoom
 */

/** @type {Map<string, SharedRoom>} */
const sharedRooms = new Map();

/** @param {SharedRoom} shared */
function updateAll(shared) {
  for (const watcher of shared.watchers) watcher.update();
}

/**
 * Connects a shared room (again), retrying until connected, given up or no longer watched.
 * @param {LivekitJoin} join
 * @param {SharedRoom} shared
 */
async function connectShared(join, shared) {
  if (shared.starting || shared.room !== undefined) return;
  shared.starting = true;
  /** @type {LivekitClient} */
  let lk;
  try {
    lk = await livekitClient();
  } catch (error) {
    shared.starting = false;
    console.warn('live: could not load livekit-client', error);
    retryShared(join, shared);
    return;
  }
  shared.starting = false;
  if (shared.dead || shared.watchers.size === 0) return;
  const room = newRoom(lk);
  shared.room = room;
  const changed = () => updateAll(shared);
  for (const event of [
    lk.RoomEvent.ParticipantConnected,
    lk.RoomEvent.ParticipantDisconnected,
    lk.RoomEvent.TrackPublished,
    lk.RoomEvent.TrackUnpublished,
    lk.RoomEvent.TrackSubscribed,
    lk.RoomEvent.TrackUnsubscribed,
    lk.RoomEvent.TrackSubscriptionFailed,
    lk.RoomEvent.Reconnecting,
    lk.RoomEvent.Reconnected,
  ]) {
    room.on(event, changed);
  }
  room.on(lk.RoomEvent.Disconnected, (reason) => {
    if (shared.room !== room) return;
    shared.room = undefined;
    shared.connected = false;
    if (isFinal(lk, reason)) shared.dead = true;
    updateAll(shared);
    if (!shared.dead) retryShared(join, shared);
  });
  try {
    await room.connect(join.url, join.token, connectOptions(join));
  } catch (error) {
    if (shared.room !== room) return;
    console.warn('live: could not join LiveKit to watch', error);
    shared.room = undefined;
    void room.disconnect();
    if (isRefused(lk, error)) {
      shared.dead = true;
      updateAll(shared);
      return;
    }
    retryShared(join, shared);
    return;
  }
  if (shared.room !== room) return;
  shared.connected = true;
  shared.attempt = 0;
  updateAll(shared);
}

/**
 * @param {LivekitJoin} join
 * @param {SharedRoom} shared
 */
function retryShared(join, shared) {
  if (shared.dead || shared.watchers.size === 0) return;
  shared.retryTimer = setTimeout(() => void connectShared(join, shared), retryDelay(shared.attempt));
  shared.attempt += 1;
}

/**
 * The shared room of `join`, connecting it when it is not.
 * @param {LivekitJoin} join
 * @returns {SharedRoom}
 */
function sharedRoom(join) {
  let shared = sharedRooms.get(join.token);
  if (shared === undefined) {
    shared = {
      room: undefined,
      starting: false,
      connected: false,
      dead: false,
      watchers: new Set(),
      idleTimer: undefined,
      retryTimer: undefined,
      attempt: 0,
    };
    sharedRooms.set(join.token, shared);
  }
  clearTimeout(shared.idleTimer);
  shared.idleTimer = undefined;
  return shared;
}

/**
 * Leaves a shared room once nothing has watched through it for a while.
 * @param {string} token
 * @param {SharedRoom} shared
 */
function releaseShared(token, shared) {
  if (shared.watchers.size > 0) return;
  clearTimeout(shared.idleTimer);
  shared.idleTimer = setTimeout(() => {
    if (shared.watchers.size > 0) return;
    clearTimeout(shared.retryTimer);
    sharedRooms.delete(token);
    const room = shared.room;
    shared.room = undefined;
    shared.connected = false;
    void room?.disconnect();
  }, IDLE_DISCONNECT_MS);
}

/**
 * The candidate `identity` in `room`, when it is there.
 * @param {LivekitRoom} room
 * @param {string} identity
 * @returns {RemoteParticipant | undefined}
 */
function remoteParticipant(room, identity) {
  for (const participant of room.remoteParticipants.values()) {
    if (participant.identity === identity) return participant;
  }
  return undefined;
}

/**
 * The numbers of one received video track's inbound stream and connection.
 * @param {RemoteTrack} track
 * @returns {Promise<{ fps: number | null, lost: number | null, received: number | null, rttMs: number | null }>}
 */
async function receivedStats(track) {
  const report = await track.getRTCStatsReport();
  const found = { fps: /** @type {number | null} */ (null), lost: /** @type {number | null} */ (null) };
  /** @type {number | null} */
  let received = null;
  /** @type {string | undefined} */
  let selectedPair;
  /** @type {RTCIceCandidatePairStats[]} */
  const pairs = [];
  report?.forEach((/** @type {RTCStats} */ stat) => {
    if (stat.type === 'inbound-rtp') {
      const inbound = /** @type {RTCInboundRtpStreamStats} */ (stat);
      if (inbound.kind !== 'video') return;
      found.fps = inbound.framesPerSecond ?? null;
      found.lost = inbound.packetsLost ?? null;
      received = inbound.packetsReceived ?? null;
    } else if (stat.type === 'transport') {
      selectedPair = /** @type {RTCTransportStats} */ (stat).selectedCandidatePairId ?? selectedPair;
    } else if (stat.type === 'candidate-pair') {
      pairs.push(/** @type {RTCIceCandidatePairStats} */ (stat));
    }
  });
  const pair =
    pairs.find((candidate) => candidate.id === selectedPair) ??
    pairs.find((candidate) => candidate.nominated === true && candidate.state === 'succeeded');
  const rtt = pair?.currentRoundTripTime;
  return {
    fps: found.fps === null ? null : Math.round(found.fps),
    lost: found.lost,
    received,
    rttMs: rtt === undefined ? null : Math.round(rtt * 1000),
  };
}

/**
 * Watches one candidate of the exam through LiveKit: subscribes to its camera, microphone and
 * screen (and nobody else's); with `device` `phone`, to the camera of the candidate's phone instead
 * (handed out as `camera`). `onStream('camera', stream)` carries the camera's video with the
 * microphone's audio, `onStream('screen', stream)` the screen; each is called again with a new
 * MediaStream whenever its tracks change (the candidate republished). `onState`: 'connecting' until
 * the room is joined, 'waiting' while the candidate is not there or publishes nothing, 'live' while
 * its media arrives. `stats()` reads the received video (camera, else screen): frames per second,
 * packet loss since the previous call (in percent) and the round-trip time, null when unknown.
 * @param {LivekitJoin} join
 * @param {number} sessionId
 * @param {{ onStream: (kind: StreamKind, stream: MediaStream) => void, onState: (state: WatchState) => void }} handlers
 * @param {LiveDevice} [device] the candidate's computer (the default) or its phone
 * @returns {{ stop(): void, stats(): Promise<WatchStats> }}
 */
export function watchLivekit(join, sessionId, { onStream, onState }, device = 'computer') {
  const identity = device === 'phone' ? `candidate-${sessionId}-phone` : `candidate-${sessionId}`;
  const shared = sharedRoom(join);
  let stopped = false;
  /** @type {WatchState | undefined} */
  let reported;
  /** The track ids each stream was last handed out with. @type {Record<StreamKind, string>} */
  const handedOut = { camera: '', screen: '' };
  /** @type {{ track: RemoteTrack, lost: number, received: number } | undefined} */
  let lastSample;

  /** @param {WatchState} state */
  const report = (state) => {
    if (state === reported) return;
    reported = state;
    onState(state);
  };

  /**
   * The subscribed tracks of the candidate by stream, subscribing to what it publishes on the way.
   * @param {LivekitClient} lk
   * @param {RemoteParticipant} participant
   * @returns {Record<StreamKind, RemoteTrack[]>}
   */
  const subscribedTracks = (lk, participant) => {
    const { Source } = lk.Track;
    /** @type {Record<StreamKind, RemoteTrack[]>} */
    const tracks = { camera: [], screen: [] };
    for (const publication of participant.trackPublications.values()) {
      /** @type {StreamKind | undefined} */
      const kind =
        publication.source === Source.Camera || publication.source === Source.Microphone
          ? 'camera'
          : publication.source === Source.ScreenShare
            ? 'screen'
            : undefined;
      if (kind === undefined) continue;
      if (!publication.isSubscribed) publication.setSubscribed(true);
      if (publication.track !== undefined) tracks[kind].push(publication.track);
    }
    return tracks;
  };

  /** @param {LivekitClient} lk */
  const update = (lk) => {
    if (stopped) return;
    const room = shared.room;
    if (room === undefined || !shared.connected || room.state !== lk.ConnectionState.Connected) {
      report('connecting');
      return;
    }
    const participant = remoteParticipant(room, identity);
    if (participant === undefined) {
      handedOut.camera = '';
      handedOut.screen = '';
      report('waiting');
      return;
    }
    const tracks = subscribedTracks(lk, participant);
    for (const kind of /** @type {const} */ (['camera', 'screen'])) {
      const ids = tracks[kind].map((track) => track.mediaStreamTrack.id).join(' ');
      if (ids === handedOut[kind]) continue;
      handedOut[kind] = ids;
      if (ids !== '') onStream(kind, new MediaStream(tracks[kind].map((track) => track.mediaStreamTrack)));
    }
    if (tracks.camera.length > 0 || tracks.screen.length > 0) report('live');
    else report(participant.trackPublications.size > 0 ? 'connecting' : 'waiting');
  };

  /** @type {Watcher} */
  const watcher = {
    identity,
    update() {
      livekitClient().then(update, () => {
        if (!stopped) report('connecting');
      });
    },
  };
  shared.watchers.add(watcher);
  report('connecting');
  if (shared.room === undefined && !shared.starting && !shared.dead) {
    // Not connected and nothing under way (or only a retry waiting): connect now.
    clearTimeout(shared.retryTimer);
    void connectShared(join, shared);
  } else {
    watcher.update();
  }

  return {
    stop() {
      if (stopped) return;
      stopped = true;
      shared.watchers.delete(watcher);
      const room = shared.room;
      const stillWatched = [...shared.watchers].some((other) => other.identity === identity);
      const participant = room === undefined ? undefined : remoteParticipant(room, identity);
      if (!stillWatched && participant !== undefined) {
        for (const publication of participant.trackPublications.values()) publication.setSubscribed(false);
      }
      releaseShared(join.token, shared);
    },

    async stats() {
      /** @type {WatchStats} */
      const unknown = { fps: null, lossPercent: null, rttMs: null };
      const room = shared.room;
      if (stopped || room === undefined) return unknown;
      const participant = remoteParticipant(room, identity);
      if (participant === undefined) return unknown;
      const lk = await livekitClient();
      /** @type {RemoteTrack[]} */
      const videos = [];
      for (const publication of participant.trackPublications.values()) {
        if (publication.track?.kind === lk.Track.Kind.Video) videos.push(publication.track);
      }
      const track = videos.find((video) => video.source === lk.Track.Source.Camera) ?? videos[0];
      if (track === undefined) return unknown;
      const sample = await receivedStats(track);
      let lossPercent = null;
      if (sample.lost !== null && sample.received !== null) {
        const since = lastSample?.track === track ? lastSample : { lost: 0, received: 0 };
        const lost = Math.max(0, sample.lost - since.lost);
        const total = lost + Math.max(0, sample.received - since.received);
        lossPercent = total === 0 ? null : Math.round((lost / total) * 1000) / 10;
        lastSample = { track, lost: sample.lost, received: sample.received };
      }
      return { fps: sample.fps, lossPercent, rttMs: sample.rttMs };
    },
  };
}
