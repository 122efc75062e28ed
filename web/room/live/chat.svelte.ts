/**
 * The conversation with the proctor in a live exam: the messages written so far (loaded when the
 * live socket opens, and again after every reconnect) and the candidate's own. Text only, in the
 * order the server numbered them.
 */
import type { RoomMessage, RoomMessages } from '../../shared/candidate-api';
import { room } from '../state/room.svelte.ts';

class Chat {
  /** The messages shown, by id. */
  messages: RoomMessage[] = $state([]);
  /** The history has been loaded once: from then on the log region reads new messages out. */
  loaded = $state(false);
  readonly #shown = new Set<number>();

  /** Adds the messages not shown yet, in order. Returns how many of them are from the proctor. */
  add(messages: readonly RoomMessage[]): number {
    let fromProctor = 0;
    const added: RoomMessage[] = [];
    for (const message of messages) {
      if (this.#shown.has(message.id)) continue;
      this.#shown.add(message.id);
      added.push(message);
      if (message.sender === 'proctor') fromProctor += 1;
    }
    if (added.length > 0) this.messages = [...this.messages, ...added].sort((a, b) => a.id - b.id);
    return fromProctor;
  }

  /**
   * Loads the history (on opening, and after every reconnect: what was written meanwhile). Hands
   * `notify` the count of new messages from the proctor once the first history is in. Never throws.
   */
  async load(notify: (fromProctor: number) => void): Promise<void> {
    try {
      const answer = (await room.call('GET', '/messages')) as RoomMessages;
      const fresh = this.add(answer.messages);
      if (this.loaded) notify(fresh);
      this.loaded = true;
    } catch (error) {
      console.warn('live: the messages could not be loaded', error);
    }
  }

  /** Sends the candidate's message and shows it. Throws ApiError when it was not taken. */
  async send(body: string): Promise<void> {
    const answer = (await room.call('POST', '/messages', { body })) as RoomMessage | { message: RoomMessage };
    this.add(['message' in answer ? answer.message : answer]);
  }
}

/** The chat of this page: one per page. */
export const chat = new Chat();
