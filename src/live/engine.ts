import type { IceServer } from '../config/config.ts';
import type { ClientSignal, LiveDevice, LiveJoin, ServerMessage } from './protocol.ts';

/**
 * The live media engine behind live proctoring (docs/live-proctoring.md): it carries each candidate's
 * camera, microphone and screen to the proctors watching the exam. Two implementations: `embedded`, a
 * selective forwarding unit inside the service (src/live/embedded), and `livekit`, an external LiveKit
 * server (src/live/livekit). The signalling hub (src/live/hub.ts) owns the WebSockets and calls the
 * engine; the engine never sees HTTP.
 *
 * Rooms: one per exam, named by the exam id. A candidate publishes into its exam's room; a proctor
 * subscribes to the candidates of that room the wall shows. In a `mobile_cam` exam the candidate's
 * phone is a second publisher of the same session (`device: 'phone'`): its camera's video only,
 * watched apart from the computer's media, so either may come, go or publish again without the
 * other's connection being touched.
 */
export interface LiveEngine {
  readonly kind: 'embedded' | 'livekit';
  /** TURN/STUN servers the browsers are given (TURN_URLS). */
  readonly iceServers: readonly IceServer[];
  /** Makes sure the exam's room exists (idempotent). */
  openRoom(examId: number): Promise<void>;
  /** Ends the exam's room: every publisher and subscriber in it is disconnected. Idempotent. */
  endRoom(examId: number): Promise<void>;
  /**
   * A candidate's publishing link, for one WebSocket connection of the room page (or, with
   * `who.device` `phone`, of the candidate's phone: its camera's video only).
   */
  publisher(who: LivePublisherIdentity, channel: LiveChannel): Promise<LiveLink>;
  /** A proctor's subscribing link, for one WebSocket connection of the wall. */
  subscriber(who: LiveSubscriberIdentity, channel: LiveChannel): Promise<LiveLink>;
  /** Who is connected to the exam's room now. */
  connected(examId: number): Promise<readonly LiveParticipant[]>;
  /** Stops the engine: closes every connection and socket. */
  close(): Promise<void>;
}

export interface LivePublisherIdentity {
  readonly examId: number;
  readonly sessionId: number;
  /** The candidate's name, for engines that show one (LiveKit participant name). */
  readonly name: string;
  /** `phone` for the candidate's phone; left out for the computer (the exam room). */
  readonly device?: LiveDevice;
}

export interface LiveSubscriberIdentity {
  readonly examId: number;
  readonly userId: number;
  readonly name: string;
  /**
   * The sessions this proctor may watch in the exam (assigned to them, or all for a manager).
   * A subscribe request naming another session is refused.
   */
  readonly mayWatch: (sessionId: number) => Promise<boolean>;
}

/** How the engine talks back to the browser on the other end of a WebSocket, and reports state. */
export interface LiveChannel {
  /** Sends one message to the browser (dropped when the socket has closed). */
  send(message: ServerMessage): void;
  /**
   * Reports that a publisher's media is flowing (`live`) or is not yet / no longer (`connecting`).
   * Called by engines that see the media themselves (embedded); the LiveKit engine's browsers report
   * it over the socket instead (ClientSignal `media`).
   */
  mediaState(state: 'connecting' | 'live'): void;
}

/** One browser's link to the engine, alive as long as its WebSocket. */
export interface LiveLink {
  /** What the browser needs to join, sent in the `hello` message. */
  readonly join: LiveJoin;
  /** Handles a signalling message from the browser (embedded: offers, answers, subscriptions). */
  receive(message: ClientSignal): Promise<void>;
  /** Tears the link down (socket closed, session finished, room ended). Idempotent. */
  close(): void;
}

export interface LiveParticipant {
  /** `phone`: a candidate's phone, apart from its computer (`candidate`). */
  readonly role: 'candidate' | 'proctor' | 'phone';
  /** The student session id of a candidate or its phone, the user id of a proctor. */
  readonly id: number;
  readonly publishing: boolean;
}

/** The LiveKit room name of an exam, and the participant identities used in it. */
export function liveRoomName(examId: number): string {
  return `invigil-exam-${examId}`;
}
export function candidateIdentity(sessionId: number): string {
  return `candidate-${sessionId}`;
}
export function phoneIdentity(sessionId: number): string {
  return `candidate-${sessionId}-phone`;
}
export function proctorIdentity(userId: number): string {
  return `proctor-${userId}`;
}
