/**
 * What the LiveKit adapter's publishing and watching share: livekit-client, loaded on first use, and
 * how a room is made, joined and retried.
 */
import type * as LivekitClientModule from 'livekit-client';
import type { DisconnectReason, Room, RoomConnectOptions } from 'livekit-client';
import type { LivekitJoin } from './types.ts';

/** livekit-client's exports, as the dynamic import gives them. */
export type LivekitClient = typeof LivekitClientModule;

/** First and longest wait before connecting again. */
const RETRY_FIRST_MS = 1000;
const RETRY_LONGEST_MS = 5000;

let clientModule: Promise<LivekitClient> | undefined;

/** livekit-client, loaded on first use (again after a failed load). Returns the module. */
export function livekitClient(): Promise<LivekitClient> {
  clientModule ??= import('livekit-client').catch((error: unknown) => {
    clientModule = undefined;
    throw error;
  });
  return clientModule;
}

/**
 * The options for Room.connect: no automatic subscriptions, and the service's TURN servers when it
 * has any (an empty list would hide the LiveKit server's own).
 */
export function connectOptions(join: LivekitJoin): RoomConnectOptions {
  if (join.iceServers.length === 0) return { autoSubscribe: false };
  const iceServers = join.iceServers.map((server) => ({ ...server }));
  return { autoSubscribe: false, rtcConfig: { iceServers } };
}

/**
 * A new Room: tracks handed in are never stopped by LiveKit, no adaptive stream (watches hand a
 * MediaStream to the page, not an element LiveKit could measure, so it would pause the video).
 */
export function newRoom(lk: LivekitClient): Room {
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
 */
export function isFinal(lk: LivekitClient, reason: DisconnectReason | undefined): boolean {
  const { DisconnectReason: Reason } = lk;
  return (
    reason === Reason.CLIENT_INITIATED ||
    reason === Reason.DUPLICATE_IDENTITY ||
    reason === Reason.PARTICIPANT_REMOVED ||
    reason === Reason.ROOM_DELETED
  );
}

/** Whether a failed connect should not be tried again: LiveKit refused the token (expired, wrong). */
export function isRefused(lk: LivekitClient, error: unknown): boolean {
  return error instanceof lk.ConnectionError && error.reason === lk.ConnectionErrorReason.NotAllowed;
}

/** The wait before connect attempt number `attempt` (0 for the first retry). */
export function retryDelay(attempt: number): number {
  return Math.min(RETRY_FIRST_MS * 2 ** attempt, RETRY_LONGEST_MS);
}
