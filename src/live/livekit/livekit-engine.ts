import {
  AccessToken,
  type ParticipantInfo,
  ParticipantInfo_State,
  RoomServiceClient,
  ServerError,
  TrackSource,
  type VideoGrant,
} from 'livekit-server-sdk';
import type { LiveConfig } from '../../config/config.ts';
import {
  candidateIdentity,
  type LiveChannel,
  type LiveEngine,
  type LiveLink,
  type LiveParticipant,
  liveRoomName,
  phoneIdentity,
  proctorIdentity,
} from '../engine.ts';
import type { ClientSignal } from '../protocol.ts';

/**
 * The LiveKit media engine (docs/live-proctoring.md, "LiveKit"): the media flows through an external
 * LiveKit server; this side only mints join tokens and manages rooms over LiveKit's RoomService API.
 *
 * - One LiveKit room per exam (liveRoomName). A candidate joins as candidateIdentity(sessionId) and may
 *   publish its camera, microphone and screen and nothing else (no subscribing, no data). Its phone
 *   joins as phoneIdentity(sessionId), another participant, and may publish a camera only. A proctor
 *   joins hidden as proctorIdentity(userId) and may subscribe, never publish.
 * - Tokens are minted for each link (one WebSocket) and live TOKEN_TTL_SECONDS. When a link closes the
 *   participant is removed from the room, so media does not outlive the socket that authorised it.
 * - A proctor's token admits it to the whole exam room: LiveKit has no server-side grant limiting a
 *   subscriber to some publishers (ParticipantPermission.canSubscribe is all or nothing, and
 *   UpdateSubscriptions moves subscriptions without forbidding any), so which candidates a proctor
 *   sees is decided by the wall (it subscribes only to the sessions the hub lets it watch); the
 *   socket is only opened to people who may proctor in the exam.
 * - The engine cannot see the media: a candidate's browser reports it with ClientSignal `media`.
 * - LiveKit being down or refusing never throws out of the room calls: they log and degrade.
 */

export type LivekitConfig = Extract<LiveConfig, { engine: 'livekit' }>;

/** How the engine logs; pino's Logger fits. */
export interface LivekitLog {
  warn(details: Record<string, unknown>, message: string): void;
}

export interface LivekitEngineOptions {
  /** Where failed LiveKit calls are reported (default: nowhere). */
  readonly log?: LivekitLog;
  /** Lifetime of a join token, in seconds (default TOKEN_TTL_SECONDS). */
  readonly tokenTtlSeconds?: number;
  /** How long one RoomService call may take, in seconds (default REQUEST_TIMEOUT_SECONDS). */
  readonly requestTimeoutSeconds?: number;
}

/**
 * Two hours: long enough for a browser to join (and for livekit-client to rejoin by itself, which it
 * does with tokens the server refreshes while connected), short enough that a leaked token soon stops
 * working. Each new socket gets a new token.
 */
export const TOKEN_TTL_SECONDS = 2 * 60 * 60;

/** A RoomService call that takes longer than this is given up (logged, degraded). */
export const REQUEST_TIMEOUT_SECONDS = 5;

/**
 * Rooms outlive a short gap: LiveKit keeps an empty room this long after the last participant left,
 * so a whole exam reconnecting (an Invigil restart) finds its room; LiveKit recreates it on the next
 * join anyway when room auto-creation is on (its default).
 */
const ROOM_DEPARTURE_TIMEOUT_SECONDS = 120;
/** How long a room opened ahead of its first participant waits for one. */
const ROOM_EMPTY_TIMEOUT_SECONDS = 600;

/** What a candidate may publish: its camera, microphone and screen. */
const CANDIDATE_SOURCES = [TrackSource.CAMERA, TrackSource.MICROPHONE, TrackSource.SCREEN_SHARE];
/** What a candidate's phone may publish: its camera (the page sends its video alone). */
const PHONE_SOURCES = [TrackSource.CAMERA];

/**
 * The RoomService's HTTP address for a LiveKit URL as browsers use it: wss → https, ws → http (the
 * same host, port and path). Returns the address.
 */
export function livekitApiUrl(url: string): string {
  if (url.startsWith('wss://')) return `https://${url.slice('wss://'.length)}`;
  if (url.startsWith('ws://')) return `http://${url.slice('ws://'.length)}`;
  return url;
}

/** Whether `error` is LiveKit saying the thing named does not exist (room or participant). */
function isNotFound(error: unknown): boolean {
  return error instanceof ServerError && (error.code === 'not_found' || error.status === 404);
}

/** What a failed LiveKit call is logged with: status and code of a LiveKit answer, else the error. */
function errorDetails(error: unknown): Record<string, unknown> {
  if (error instanceof ServerError) {
    return { status: error.status, code: error.code, error: error.message };
  }
  return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
}

/**
 * A participant identity read back: a candidate's (or its phone's) session id or a proctor's user id,
 * else undefined.
 */
function participantOf(info: ParticipantInfo): LiveParticipant | undefined {
  if (info.state === ParticipantInfo_State.DISCONNECTED) return undefined;
  const match = /^(candidate|proctor)-([1-9]\d{0,15})(-phone)?$/.exec(info.identity);
  if (match === null) return undefined;
  const id = Number(match[2]);
  if (!Number.isSafeInteger(id)) return undefined;
  const role = match[1] === 'proctor' ? 'proctor' : match[3] === undefined ? 'candidate' : 'phone';
  const identities = { candidate: candidateIdentity, phone: phoneIdentity, proctor: proctorIdentity };
  if (identities[role](id) !== info.identity) return undefined;
  return { role, id, publishing: info.tracks.length > 0 };
}

/**
 * Creates the LiveKit engine for `config`. It holds no connection of its own: every call is one
 * RoomService request. Returns the engine; throws nothing (a wrong address shows on the first call).
 */
export function createLivekitEngine(config: LivekitConfig, options: LivekitEngineOptions = {}): LiveEngine {
  const log = options.log;
  const ttl = options.tokenTtlSeconds ?? TOKEN_TTL_SECONDS;
  const rooms = new RoomServiceClient(livekitApiUrl(config.url), config.apiKey, config.apiSecret, {
    requestTimeout: options.requestTimeoutSeconds ?? REQUEST_TIMEOUT_SECONDS,
  });
  /** The newest link of each room participant (`room identity`), the one whose closing removes it. */
  const newest = new Map<string, object>();
  /** Removals under way, so a new link for the same participant waits for the old one's removal. */
  const removals = new Map<string, Promise<void>>();
  let closed = false;

  const warn = (details: Record<string, unknown>, message: string): void => {
    log?.warn(details, message);
  };

  const removeParticipant = async (room: string, identity: string): Promise<void> => {
    try {
      await rooms.removeParticipant(room, identity);
    } catch (error) {
      // Gone already (left, never joined, room ended): that is what removal wanted.
      if (isNotFound(error)) return;
      warn({ room, identity, ...errorDetails(error) }, 'LiveKit could not remove a participant');
    }
  };

  const link = async (
    room: string,
    identity: string,
    name: string,
    grant: VideoGrant,
    onSignal: (message: ClientSignal) => void,
  ): Promise<LiveLink> => {
    if (closed) throw new Error('The live engine is closed');
    const key = `${room} ${identity}`;
    // A reconnecting browser: its old participant must be gone before the new token is handed out,
    // or the late removal would throw out the new connection.
    await removals.get(key);
    const token = new AccessToken(config.apiKey, config.apiSecret, { identity, name, ttl });
    token.addGrant({ roomJoin: true, room, ...grant });
    const jwt = await token.toJwt();
    const owner = {};
    newest.set(key, owner);
    let open = true;
    return {
      join: { engine: 'livekit', url: config.url, token: jwt, room, iceServers: config.iceServers },
      receive(message) {
        if (open) onSignal(message);
        return Promise.resolve();
      },
      close() {
        if (!open) return;
        open = false;
        // A newer link of the same participant (a reconnect) owns the LiveKit connection now.
        if (newest.get(key) !== owner) return;
        newest.delete(key);
        const removal = removeParticipant(room, identity).finally(() => {
          if (removals.get(key) === removal) removals.delete(key);
        });
        removals.set(key, removal);
      },
    };
  };

  return {
    kind: 'livekit',
    iceServers: config.iceServers,

    async openRoom(examId) {
      const room = liveRoomName(examId);
      try {
        // CreateRoom answers the existing room when there is one.
        await rooms.createRoom({
          name: room,
          emptyTimeout: ROOM_EMPTY_TIMEOUT_SECONDS,
          departureTimeout: ROOM_DEPARTURE_TIMEOUT_SECONDS,
        });
      } catch (error) {
        if (error instanceof ServerError && error.code === 'already_exists') return;
        warn({ room, ...errorDetails(error) }, 'LiveKit could not open a room');
      }
    },

    async endRoom(examId) {
      const room = liveRoomName(examId);
      try {
        await rooms.deleteRoom(room);
      } catch (error) {
        if (isNotFound(error)) return;
        warn({ room, ...errorDetails(error) }, 'LiveKit could not end a room');
      }
    },

    publisher(who, channel: LiveChannel) {
      const phone = who.device === 'phone';
      return link(
        liveRoomName(who.examId),
        phone ? phoneIdentity(who.sessionId) : candidateIdentity(who.sessionId),
        phone ? `${who.name} (phone)` : who.name,
        {
          canPublish: true,
          canPublishSources: phone ? PHONE_SOURCES : CANDIDATE_SOURCES,
          canSubscribe: false,
          canPublishData: false,
        },
        (message) => {
          // The only thing a candidate's browser (or phone) tells this engine: whether its media flows.
          if (message.type === 'media') channel.mediaState(message.state);
        },
      );
    },

    subscriber(who) {
      return link(
        liveRoomName(who.examId),
        proctorIdentity(who.userId),
        who.name,
        { hidden: true, canPublish: false, canSubscribe: true, canPublishData: false },
        // A proctor's browser subscribes with LiveKit directly; nothing to do here.
        () => undefined,
      );
    },

    async connected(examId) {
      const room = liveRoomName(examId);
      try {
        const participants = await rooms.listParticipants(room);
        return participants.flatMap((info) => participantOf(info) ?? []);
      } catch (error) {
        // No room: nobody has joined it yet (or it ended).
        if (!isNotFound(error)) warn({ room, ...errorDetails(error) }, 'LiveKit could not list a room');
        return [];
      }
    },

    async close() {
      closed = true;
      await Promise.allSettled([...removals.values()]);
    },
  };
}
