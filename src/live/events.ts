import type { LiveMessageJson, RoomControl } from './protocol.ts';

/**
 * What the domain tells the live sockets about (in-process): a chat message was posted, or a proctor
 * changed a session in a way the candidate's room must see at once. The signalling hub listens and
 * forwards to the sockets of that session's candidate and of the exam's proctors.
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

/** An in-process bus; a listener that throws does not stop the others. */
export function createLiveEvents(onListenerError: (error: unknown) => void = () => {}): LiveEvents {
  const listeners = new Set<(event: LiveEvent) => void>();
  return {
    emit(event) {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (error) {
          onListenerError(error);
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
