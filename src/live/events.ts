import type { LiveEvent, LiveEvents } from '../domain/ports/live-events.ts';

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
