/**
 * Live proctoring as the domain knows it: a candidate's live status, a chat message as every
 * channel answers it, and what the room is told to re-read its view for. The live sockets' wire
 * protocol (src/live/protocol.ts) carries these shapes and re-exports the types for the browsers.
 */

/** Live status of a candidate, as the V3 student record and the wall show it. */
export const LIVE_STATUSES = ['offline', 'connecting', 'live'] as const;
export type LiveStatus = (typeof LIVE_STATUSES)[number];

/** A chat message as the sockets, the room API and V3 answer it. Times are ISO 8601. */
export interface LiveMessageJson {
  readonly id: number;
  readonly student_session_id: number;
  readonly sender: 'proctor' | 'candidate';
  /** The proctor's name for a proctor's message; null for the candidate's. */
  readonly author: string | null;
  readonly body: string;
  readonly created_at: string;
}

/** What the room is told to re-read its view for. */
export const ROOM_CONTROLS = ['admitted', 'paused', 'resumed', 'ended'] as const;
export type RoomControl = (typeof ROOM_CONTROLS)[number];
