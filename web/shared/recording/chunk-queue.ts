import { ApiError } from '../http.ts';

/**
 * The chunks of one recording that are recorded and not yet acknowledged, sent one at a time, in
 * order, each retried with a growing pause until the server takes it. The queue outlives the
 * recorders that fill it: a camera switched or turned on again goes on with the numbering unbroken.
 * The server's `next_sequence` says where the numbering goes on (also after a reopened page, and
 * after a 409 naming the chunk it expects, when an older page sent some meanwhile).
 */

/** The server's answer to a stored chunk: the sequence of the next one it expects. */
export interface ChunkAck {
  readonly next_sequence: number;
}

/**
 * Sends one chunk (multipart `sequence`, `source`, `file`). Resolves with the server's answer;
 * rejects with ApiError (status 0 when the server could not be reached).
 */
export type UploadChunk = (form: FormData) => Promise<ChunkAck>;

export interface ChunkQueueOptions {
  /** The recording's source, sent with each chunk and naming its file: `webcam`, `screen`, `mobile`. */
  readonly source: string;
  readonly upload: UploadChunk;
  /** The sequence of the first chunk; null (the default) holds the queue until `startAt` is called. */
  readonly sequence?: number | null;
  /** The pause between two tries; a wakeable one (web/shared/http.ts) lets a returning connection cut it short. */
  readonly pause: (ms: number) => Promise<void>;
  /** Called whenever the waiting count or the sequence changes (to redraw the counts). */
  readonly onChange?: () => void;
  /**
   * Called when the server takes no more chunks of this recording (a 409 that names no expected
   * chunk: the exam is over or not started). What waited is dropped and counted in `lost`.
   */
  readonly onClosed?: (error: ApiError) => void;
  /**
   * What a refusal other than 409 and a passing trouble (unreachable, 429, 5xx) does: `retry` tries
   * the same chunk again after a pause (the room); `drop` drops an unreadable chunk so the ones
   * after it can go, and stops sending on a 404, when the recording's address is gone (the phone).
   */
  readonly refused?: 'retry' | 'drop';
}

const FIRST_DELAY_MS = 1000;
const LONGEST_DELAY_MS = 30_000;

/** True for a failure that may pass by itself: no answer, too many requests, a server error. */
function passing(error: unknown): boolean {
  return !(error instanceof ApiError) || error.status === 0 || error.status === 429 || error.status >= 500;
}

/** The file name a chunk is sent under: its source, its sequence and its container. */
function fileName(source: string, sequence: number, chunk: Blob): string {
  return `${source}-${sequence}.${chunk.type.includes('mp4') ? 'mp4' : 'webm'}`;
}

export class ChunkQueue {
  readonly source: string;
  /** Chunks the server refused for good (the exam had ended before they arrived). */
  lost = 0;
  #sequence: number | null;
  readonly #chunks: Blob[] = [];
  #draining: Promise<void> | undefined;
  #stopped = false;
  readonly #options: ChunkQueueOptions;

  constructor(options: ChunkQueueOptions) {
    this.#options = options;
    this.source = options.source;
    this.#sequence = options.sequence ?? null;
  }

  /** The sequence of the next chunk to send: the count the server holds; null until known. */
  get sequence(): number | null {
    return this.#sequence;
  }

  /** Chunks recorded and not yet acknowledged. */
  get waiting(): number {
    return this.#chunks.length;
  }

  /** Sets where the numbering starts, when it was not known yet, and sends what waits. */
  startAt(sequence: number): void {
    if (this.#sequence !== null) return;
    this.#sequence = sequence;
    void this.drain();
  }

  /** Queues a chunk and sends it after the ones before it. */
  push(chunk: Blob): void {
    this.#chunks.push(chunk);
    this.#changed();
    void this.drain();
  }

  /** Stops sending for good (the page's link is gone); what waits stays counted. */
  stop(): void {
    this.#stopped = true;
  }

  /**
   * Sends the queued chunks in order; while a send runs, a call returns that same send. Resolves
   * when the queue is empty, or when nothing more can be sent now (no sequence yet, closed, stopped).
   */
  drain(): Promise<void> {
    this.#draining ??= this.#send().finally(() => {
      this.#draining = undefined;
    });
    return this.#draining;
  }

  #changed(): void {
    this.#options.onChange?.();
  }

  async #send(): Promise<void> {
    const { upload, pause, refused = 'retry' } = this.#options;
    let delay = FIRST_DELAY_MS;
    while (!this.#stopped && this.#sequence !== null) {
      const chunk = this.#chunks[0];
      if (chunk === undefined) return;
      const form = new FormData();
      form.append('sequence', String(this.#sequence));
      form.append('source', this.source);
      form.append('file', chunk, fileName(this.source, this.#sequence, chunk));
      try {
        const ack = await upload(form);
        this.#sequence = ack.next_sequence;
        this.#chunks.shift();
        delay = FIRST_DELAY_MS;
        this.#changed();
        continue;
      } catch (error) {
        if (!passing(error) && error instanceof ApiError) {
          const outcome = this.#refusal(error, refused);
          if (outcome === 'again') continue;
          if (outcome === 'stop') return;
        }
        // Woken early when the connection comes back.
        await pause(delay);
        delay = Math.min(delay * 2, LONGEST_DELAY_MS);
      }
    }
  }

  /** What a refusal means for the send: try `again` at once, `stop`, or `wait` and try again. */
  #refusal(error: ApiError, refused: 'retry' | 'drop'): 'again' | 'stop' | 'wait' {
    if (error.status === 409) {
      const expected = /chunk (\d+)/.exec(error.message);
      if (expected !== null) {
        // Out of turn (an older page sent some meanwhile): go on where the server is.
        this.#sequence = Number(expected[1]);
        return 'again';
      }
      // Not started, or over: the server takes no more, so nothing is kept. (At the end this is the
      // chunk that ran past the finish, which the page hears of a moment later.)
      this.lost += this.#chunks.length;
      this.#chunks.length = 0;
      this.#changed();
      this.#options.onClosed?.(error);
      return 'stop';
    }
    if (refused === 'retry') return 'wait';
    if (error.status === 404) return 'stop';
    // Refused as unreadable: dropped, so the ones after it can still go.
    this.#chunks.shift();
    this.#changed();
    return 'again';
  }
}
