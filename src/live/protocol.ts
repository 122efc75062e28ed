import type { IceServer } from '../config/config.ts';
import type { LiveMessageJson, LiveStatus, RoomControl } from '../domain/live/live.ts';

/**
 * The messages of the live-proctoring WebSockets (docs/live-proctoring.md), one JSON object per text
 * frame, each with a `type`. Three sockets:
 *
 * - `/live/room/:token`: the candidate's room page; the room token in the path is the credential.
 * - `/live/exams/:examId`: the proctor wall; the staff session cookie is the credential and the
 *   `Origin` header must be the service's own.
 * - `/live/mobile/:token`: the candidate's phone (a `mobile_cam` exam's second camera); the pairing
 *   token in the path is the credential. The phone only publishes.
 *
 * Embedded engine media layout: a candidate's peer connection carries exactly three m-lines in this
 * order: 0 the camera's video, 1 the microphone's audio, 2 the screen's video (a line whose track is
 * missing simply carries nothing). A proctor's peer connection for one candidate carries the same
 * three lines in the same order. The phone's peer connection carries one m-line, its camera's video;
 * a proctor watches it over a peer connection of its own (the same single line), subscribed to with
 * `device: "phone"`, so the computer's and the phone's connections never disturb each other. Offers
 * and answers are complete (ICE gathered, no trickle).
 */

/**
 * Which of a candidate's devices a signal is about: the computer (the exam room; the field is left
 * out) or the phone (`"phone"`).
 */
export type LiveDevice = 'computer' | 'phone';

/**
 * The domain's live vocabulary (src/domain/live/live.ts), which these messages carry; re-exported
 * for the browsers' code, which reads the protocol from this one module.
 */
export type { LiveMessageJson, LiveStatus, RoomControl } from '../domain/live/live.ts';

/** What a browser needs to reach the media: our own signalling, or a LiveKit address and token. */
export type LiveJoin =
  | { readonly engine: 'embedded'; readonly iceServers: readonly IceServer[] }
  | {
      readonly engine: 'livekit';
      readonly iceServers: readonly IceServer[];
      readonly url: string;
      readonly token: string;
      /** The LiveKit room of the exam. */
      readonly room: string;
    };

/** Server → browser. */
export type ServerMessage =
  /** First message on every socket: who the browser is to the engine and how to reach the media. */
  | { readonly type: 'hello'; readonly role: 'candidate' | 'proctor' | 'phone'; readonly join: LiveJoin }
  /** Candidate and phone: the answer to its publishing offer. */
  | { readonly type: 'answer'; readonly sdp: string }
  /**
   * Proctor: an offer carrying one candidate's media (sent after `subscribe`, again after the
   * candidate republishes); with `device: "phone"`, the media of the candidate's phone.
   */
  | { readonly type: 'offer'; readonly sessionId: number; readonly sdp: string; readonly device?: 'phone' }
  /**
   * Proctor: the candidate's (with `device: "phone"`, its phone's) publication ended; it is offered
   * again when back.
   */
  | { readonly type: 'unpublished'; readonly sessionId: number; readonly device?: 'phone' }
  /** Proctor: a candidate's live status changed. */
  | { readonly type: 'live'; readonly sessionId: number; readonly liveStatus: LiveStatus }
  /** Both: a chat message of the session (either side's, the sender's own included). */
  | { readonly type: 'message'; readonly message: LiveMessageJson }
  /** Candidate: the proctor changed the session; the room re-reads its view. Phone: `ended` only. */
  | { readonly type: 'control'; readonly action: RoomControl }
  /** Both: a refused request; `fatal` ones are followed by the socket closing. */
  | { readonly type: 'error'; readonly error: string; readonly fatal: boolean }
  /**
   * Both: sent with every ping (LIVE_HUB_TIMING.pingMs). Pages cannot see WebSocket pings, so this
   * is how a browser notices a socket whose network died without a word (it gives up on a socket
   * silent for KEEPALIVE_LIMIT_MS of the browser live client, web/live and opens a new one).
   */
  | { readonly type: 'keepalive' };

/** Browser → server. */
export type ClientSignal =
  /** Candidate and phone: publish (or republish) its media; answered by `answer`. */
  | { readonly type: 'offer'; readonly sdp: string }
  /**
   * Proctor: watch one candidate (with `device: "phone"`, its phone); answered by `offer` once it
   * publishes.
   */
  | { readonly type: 'subscribe'; readonly sessionId: number; readonly device?: 'phone' }
  /** Proctor: stop watching one candidate (or its phone). */
  | { readonly type: 'unsubscribe'; readonly sessionId: number; readonly device?: 'phone' }
  /** Proctor: the answer to an `offer` (of the phone when `device` says so). */
  | { readonly type: 'answer'; readonly sessionId: number; readonly sdp: string; readonly device?: 'phone' }
  /** Candidate or phone on an engine the server cannot see into (LiveKit): whether its media flows. */
  | { readonly type: 'media'; readonly state: 'connecting' | 'live' };

/** The device a proctor's signal or an engine's offer is about: the computer when `device` is absent. */
export function deviceOf(message: { readonly device?: 'phone' }): LiveDevice {
  return message.device === 'phone' ? 'phone' : 'computer';
}

/** The longest frame a browser may send (a complete SDP offer with three m-lines is a few KB). */
export const MAX_CLIENT_FRAME_BYTES = 64 * 1024;

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function sessionIdOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** `{}` for a field left out, `{device: 'phone'}` for the phone, undefined for anything else. */
function deviceField(value: Record<string, unknown>): { device?: 'phone' } | undefined {
  if (!Object.hasOwn(value, 'device') || value.device === undefined) return {};
  return value.device === 'phone' ? { device: 'phone' } : undefined;
}

function sdpOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_CLIENT_FRAME_BYTES
    ? value
    : undefined;
}

/**
 * Reads one frame from a browser. Returns the message, or undefined for anything that is not one of
 * ClientSignal's shapes exactly (bad JSON, unknown type, wrong field types); the hub answers those
 * with a non-fatal `error`.
 */
export function parseClientSignal(frame: string): ClientSignal | undefined {
  if (frame.length > MAX_CLIENT_FRAME_BYTES) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(frame);
  } catch {
    return undefined;
  }
  const value = record(parsed);
  if (value === undefined) return undefined;
  const type = Object.hasOwn(value, 'type') ? value.type : undefined;
  switch (type) {
    case 'offer': {
      const sdp = sdpOf(value.sdp);
      return sdp === undefined ? undefined : { type, sdp };
    }
    case 'subscribe':
    case 'unsubscribe': {
      const sessionId = sessionIdOf(value.sessionId);
      const device = deviceField(value);
      return sessionId === undefined || device === undefined ? undefined : { type, sessionId, ...device };
    }
    case 'answer': {
      const sessionId = sessionIdOf(value.sessionId);
      const sdp = sdpOf(value.sdp);
      const device = deviceField(value);
      return sessionId === undefined || sdp === undefined || device === undefined
        ? undefined
        : { type, sessionId, sdp, ...device };
    }
    case 'media':
      return value.state === 'connecting' || value.state === 'live'
        ? { type, state: value.state }
        : undefined;
    default:
      return undefined;
  }
}
