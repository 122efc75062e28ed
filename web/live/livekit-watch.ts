/**
 * A proctor watching candidates through LiveKit (livekit.ts): one connection to the exam's room per
 * join token, shared by every watch, each watch subscribing to one candidate's tracks only.
 */
import type { RemoteParticipant, RemoteTrack, Room } from 'livekit-client';
import {
  connectOptions,
  isFinal,
  isRefused,
  livekitClient,
  newRoom,
  retryDelay,
  type LivekitClient,
} from './livekit-room.ts';
import type { LiveDevice, LiveStats, LivekitJoin, LiveWatch, StreamKind, WatchState } from './types.ts';

/** How long a proctor's room stays connected after its last watch stopped (a wall re-rendering). */
const IDLE_DISCONNECT_MS = 30000;

const UNKNOWN_STATS: LiveStats = { fps: null, lossPercent: null, rttMs: null };

// ---------------------------------------------------------------------------------------------
// Proctor: watching

/** One watch of one candidate: told to re-read the room whenever something in it changed. */
interface Watcher {
  readonly identity: string;
  update(): void;
}

/**
 * A proctor's connection to the exam's room, shared by every watch made with the same join token
 * (LiveKit lets an identity in once; a second connection would throw the first out).
 */
interface SharedRoom {
  room: Room | undefined;
  starting: boolean;
  connected: boolean;
  dead: boolean;
  readonly watchers: Set<Watcher>;
  idleTimer: ReturnType<typeof setTimeout> | undefined;
  retryTimer: ReturnType<typeof setTimeout> | undefined;
  attempt: number;
}

const sharedRooms = new Map<string, SharedRoom>();

function updateAll(shared: SharedRoom): void {
  for (const watcher of shared.watchers) watcher.update();
}

/** Connects a shared room (again), retrying until connected, given up or no longer watched. */
async function connectShared(join: LivekitJoin, shared: SharedRoom): Promise<void> {
  if (shared.starting || shared.room !== undefined) return;
  shared.starting = true;
  let lk: LivekitClient;
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
  room
    .on(lk.RoomEvent.ParticipantConnected, changed)
    .on(lk.RoomEvent.ParticipantDisconnected, changed)
    .on(lk.RoomEvent.TrackPublished, changed)
    .on(lk.RoomEvent.TrackUnpublished, changed)
    .on(lk.RoomEvent.TrackSubscribed, changed)
    .on(lk.RoomEvent.TrackUnsubscribed, changed)
    .on(lk.RoomEvent.TrackSubscriptionFailed, changed)
    .on(lk.RoomEvent.Reconnecting, changed)
    .on(lk.RoomEvent.Reconnected, changed);
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

function retryShared(join: LivekitJoin, shared: SharedRoom): void {
  if (shared.dead || shared.watchers.size === 0) return;
  shared.retryTimer = setTimeout(() => void connectShared(join, shared), retryDelay(shared.attempt));
  shared.attempt += 1;
}

/** The shared room of `join`, created when there is none (the caller connects it). */
function sharedRoom(join: LivekitJoin): SharedRoom {
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

/** Leaves a shared room once nothing has watched through it for a while. */
function releaseShared(token: string, shared: SharedRoom): void {
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

/** The candidate `identity` in `room`, when it is there. */
function remoteParticipant(room: Room, identity: string): RemoteParticipant | undefined {
  for (const participant of room.remoteParticipants.values()) {
    if (participant.identity === identity) return participant;
  }
  return undefined;
}

interface ReceivedStats {
  readonly fps: number | null;
  readonly lost: number | null;
  readonly received: number | null;
  readonly rttMs: number | null;
}

/** The numbers of one received video track's inbound stream and connection. */
async function receivedStats(track: RemoteTrack): Promise<ReceivedStats> {
  const report = await track.getRTCStatsReport();
  let fps: number | null = null;
  let lost: number | null = null;
  let received: number | null = null;
  let selectedPair: string | undefined;
  const pairs: RTCIceCandidatePairStats[] = [];
  report?.forEach((stat: RTCStats) => {
    if (stat.type === 'inbound-rtp') {
      const inbound = stat as RTCInboundRtpStreamStats;
      if (inbound.kind !== 'video') return;
      fps = inbound.framesPerSecond ?? null;
      lost = inbound.packetsLost ?? null;
      received = inbound.packetsReceived ?? null;
    } else if (stat.type === 'transport') {
      selectedPair = (stat as RTCTransportStats).selectedCandidatePairId ?? selectedPair;
    } else if (stat.type === 'candidate-pair') {
      pairs.push(stat as RTCIceCandidatePairStats);
    }
  });
  const pair =
    pairs.find((candidate) => candidate.id === selectedPair) ??
    pairs.find((candidate) => candidate.nominated === true && candidate.state === 'succeeded');
  const rtt = pair?.currentRoundTripTime;
  return {
    fps: fps === null ? null : Math.round(fps),
    lost,
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
 * Returns the watch.
 */
export function watchLivekit(
  join: LivekitJoin,
  sessionId: number,
  {
    onStream,
    onState,
  }: {
    onStream: (kind: StreamKind, stream: MediaStream) => void;
    onState: (state: WatchState) => void;
  },
  device: LiveDevice = 'computer',
): LiveWatch {
  const identity = device === 'phone' ? `candidate-${sessionId}-phone` : `candidate-${sessionId}`;
  const shared = sharedRoom(join);
  let stopped = false;
  let reported: WatchState | undefined;
  /** The track ids each stream was last handed out with. */
  const handedOut: Record<StreamKind, string> = { camera: '', screen: '' };
  let lastSample: { track: RemoteTrack; lost: number; received: number } | undefined;

  const report = (state: WatchState) => {
    if (state === reported) return;
    reported = state;
    onState(state);
  };

  /** The subscribed tracks of the candidate by stream, subscribing to what it publishes on the way. */
  const subscribedTracks = (lk: LivekitClient, participant: RemoteParticipant) => {
    const { Source } = lk.Track;
    const tracks: Record<StreamKind, RemoteTrack[]> = { camera: [], screen: [] };
    for (const publication of participant.trackPublications.values()) {
      const kind: StreamKind | undefined =
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

  const update = (lk: LivekitClient) => {
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
    for (const kind of ['camera', 'screen'] as const) {
      const ids = tracks[kind].map((track) => track.mediaStreamTrack.id).join(' ');
      if (ids === handedOut[kind]) continue;
      handedOut[kind] = ids;
      if (ids !== '') onStream(kind, new MediaStream(tracks[kind].map((track) => track.mediaStreamTrack)));
    }
    if (tracks.camera.length > 0 || tracks.screen.length > 0) report('live');
    else report(participant.trackPublications.size > 0 ? 'connecting' : 'waiting');
  };

  const watcher: Watcher = {
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
      const room = shared.room;
      if (stopped || room === undefined) return { ...UNKNOWN_STATS };
      const participant = remoteParticipant(room, identity);
      if (participant === undefined) return { ...UNKNOWN_STATS };
      const lk = await livekitClient();
      const videos: RemoteTrack[] = [];
      for (const publication of participant.trackPublications.values()) {
        if (publication.track?.kind === lk.Track.Kind.Video) videos.push(publication.track);
      }
      const track = videos.find((video) => video.source === lk.Track.Source.Camera) ?? videos[0];
      if (track === undefined) return { ...UNKNOWN_STATS };
      const sample = await receivedStats(track);
      let lossPercent: number | null = null;
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
