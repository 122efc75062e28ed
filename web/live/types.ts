/**
 * The types of the live client (live-client.ts re-exports them): what pages pass in and get back,
 * and what the publishers, the watches and the LiveKit adapter share. The messages on the socket are
 * the service's own types (src/live/protocol.ts), imported as types only.
 */
import type {
  ClientSignal,
  LiveJoin,
  LiveMessageJson,
  LiveStatus,
  RoomControl,
  ServerMessage,
} from '../../src/live/protocol.ts';

export type { ClientSignal, LiveJoin, LiveMessageJson, LiveStatus, RoomControl, ServerMessage };

/** A TURN or STUN server as the service hands it out. */
export type IceServer = LiveJoin['iceServers'][number];
export type EmbeddedJoin = Extract<LiveJoin, { engine: 'embedded' }>;
export type LivekitJoin = Extract<LiveJoin, { engine: 'livekit' }>;
/** A chat message of the session. */
export type LiveMessage = LiveMessageJson;
/** What the server says that concerns the page (the client handles the signalling itself). */
export type AppMessage = Extract<ServerMessage, { readonly type: 'message' | 'control' | 'live' | 'error' }>;
/** The socket's state: opening (or reopening after a drop), open, or closed for good. */
export type SocketStatus = 'connecting' | 'open' | 'closed';
/** off: nothing to publish; connecting: media not (yet, or no longer) reaching the server; live: flowing. */
export type PublishState = 'off' | 'connecting' | 'live';
/** waiting: the candidate publishes nothing now; connecting: media on its way; live: flowing. */
export type WatchState = 'waiting' | 'connecting' | 'live';
/** Which of a candidate's devices: the computer (the exam room) or the phone. */
export type LiveDevice = 'computer' | 'phone';
/** Which of a candidate's streams a MediaStream is: the camera (with the microphone) or the screen. */
export type StreamKind = 'camera' | 'screen';
export interface Media {
  readonly camera: MediaStream | null;
  readonly screen: MediaStream | null;
}
export interface LiveStats {
  readonly fps: number | null;
  readonly lossPercent: number | null;
  readonly rttMs: number | null;
}
/**
 * onStream/onState: the computer's media. onPhone, when given, also watches the candidate's phone:
 * called with its video while it flows, and with null when it stops (or never came).
 */
export interface WatchHandlers {
  onStream?: (kind: StreamKind, stream: MediaStream) => void;
  onState?: (state: WatchState) => void;
  onPhone?: (stream: MediaStream | null) => void;
}
export interface LiveWatch {
  stop(): void;
  stats(): Promise<LiveStats>;
}
export interface LiveConnection {
  publish(media: Media): void;
  watch(sessionId: number, handlers?: WatchHandlers): LiveWatch;
  close(): void;
  readonly status: SocketStatus;
}
export interface LiveOptions {
  url: string;
  /** Publish the camera's video alone, on one m-line (the phone's socket). */
  cameraOnly?: boolean;
  onMessage?: (message: AppMessage) => void;
  onStatus?: (status: SocketStatus) => void;
  onPublishState?: (state: PublishState) => void;
}
export interface LivekitPublication {
  close(): void;
}
/** The LiveKit adapter's API (livekit.ts). */
export interface LivekitModule {
  publishLivekit(
    join: LivekitJoin,
    media: Media,
    onState: (state: 'connecting' | 'live') => void,
  ): LivekitPublication | Promise<LivekitPublication>;
  watchLivekit(
    join: LivekitJoin,
    sessionId: number,
    handlers: Required<Omit<WatchHandlers, 'onPhone'>>,
    device?: LiveDevice,
  ): LiveWatch | Promise<LiveWatch>;
}

/** What publishes the page's media over one socket, on one engine. */
export interface Publisher {
  setMedia(media: Media): void;
  answer(sdp: string): void;
  close(): void;
}
