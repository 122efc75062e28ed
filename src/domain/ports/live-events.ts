import type { LiveMessageJson, RoomControl } from '../live/live.ts';

/**
 * A port: what the domain tells the live sockets about (in-process): a chat message was posted, or a
 * proctor changed a session in a way the candidate's room must see at once. The signalling hub
 * (src/live/hub.ts) listens and forwards to the sockets of that session's candidate and of the
 * exam's proctors. The in-process bus is src/live/events.ts; app.ts builds it and hands it to the
 * services that emit.
 */
export type LiveEvent =
  | {
      readonly kind: 'message';
      readonly examId: number;
      readonly sessionId: number;
      readonly message: LiveMessageJson;
    }
  | {
      readonly kind: 'control';
      readonly examId: number;
      readonly sessionId: number;
      readonly action: RoomControl;
    };

export interface LiveEvents {
  emit(event: LiveEvent): void;
  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: (event: LiveEvent) => void): () => void;
}
