import { ApiError } from '../http.ts';

/**
 * The chunks of one recording that are recorded and not yet acknowledged, sent one at a time, in
 * order, each retried with a growing pause until the server takes it. The queue outlives the
 * recorders that fill it: a camera switched or turned on again goes on with the numbering unbroken.
 * The server's `next_sequence` says where the numbering goes on (also after a reopened page, and
 * after a 409 naming the chunk it expects, when an older page sent some meanwhile).
 *
 * With a keeper (web/shared/recording/chunk-store.ts) each chunk is written to the device before it
 * is sent, the sequence it is sent under is noted first, and it is forgotten only once the server
 * acknowledged it: a page opened after a crash hands what was kept to `restore`, and sends it again
 * under the same sequence (the server answers 200 for one it already holds, so nothing is doubled).
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

/**
 * Where a queue keeps its chunks on the device until they are acknowledged. Each method rejects
 * with the browser's error (a full device: QuotaExceededError).
 */
export interface ChunkKeeper {
  /** Keeps a chunk of `source` made at `madeAt` (epoch ms); resolves with its key. */
  add(source: string, chunk: Blob, madeAt: number): Promise<number>;
  /** Notes the sequence the chunk is about to be sent under. */
  setSequence(key: number, sequence: number): Promise<void>;
  /** Forgets a chunk the server acknowledged (or refused for good). */
  remove(key: number): Promise<void>;
}

/** A chunk kept by an earlier page, handed to `restore`. */
export interface KeptChunk {
  readonly key: number;
  readonly blob: Blob;
  /** The sequence it was last sent under; null when it was never sent. */
  readonly sequence: number | null;
  /** When it was made (epoch ms); absent when the earlier page did not note it. */
  readonly madeAt?: number | undefined;
}

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
  /** Keeps the chunks on the device until acknowledged; without one they live in memory only. */
  readonly keeper?: ChunkKeeper;
  /** Called when a chunk could not be kept on the device (it waits in memory instead). */
  readonly onKeepFailed?: (error: unknown) => void;
  /** The clock chunks are dated by (epoch ms); Date.now by default. */
  readonly now?: () => number;
}

/** A chunk waiting: its bytes, its key on the device, the sequence it was last sent under. */
interface Entry {
  readonly blob: Blob;
  key: number | undefined;
  sequence: number | null;
  /** When it was made (epoch ms); undefined for a restored chunk whose page did not note it. */
  readonly madeAt: number | undefined;
  /** Settles once the chunk is on the device (or could not be put there). */
  stored: Promise<void>;
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
  readonly #chunks: Entry[] = [];
  #draining: Promise<void> | undefined;
  /** A drain was asked for while a send ran: send again once it ends. */
  #again = false;
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

  /** The bytes of the chunks recorded and not yet acknowledged. */
  get waitingBytes(): number {
    return this.#chunks.reduce((sum, entry) => sum + entry.blob.size, 0);
  }

  /** Sets where the numbering starts, when it was not known yet, and sends what waits. */
  startAt(sequence: number): void {
    if (this.#sequence !== null) return;
    this.#sequence = sequence;
    void this.drain();
  }

  /**
   * Queues a chunk and sends it after the ones before it, once the keeper has it on the device
   * (a chunk the device cannot keep is sent from memory, and onKeepFailed says so).
   */
  push(chunk: Blob): void {
    const madeAt = this.#now();
    const entry: Entry = { blob: chunk, key: undefined, sequence: null, madeAt, stored: Promise.resolve() };
    const keeper = this.#options.keeper;
    if (keeper !== undefined) {
      entry.stored = keeper.add(this.source, chunk, madeAt).then(
        (key) => {
          entry.key = key;
        },
        (error: unknown) => this.#options.onKeepFailed?.(error),
      );
    }
    this.#chunks.push(entry);
    this.#changed();
    void this.drain();
  }

  /**
   * Puts chunks an earlier page kept (and left unsent) before every chunk of this page, in their
   * order. Call it before `startAt`, while the queue is held.
   */
  restore(kept: readonly KeptChunk[]): void {
    if (kept.length === 0) return;
    const entries = kept.map((chunk): Entry => ({
      blob: chunk.blob,
      key: chunk.key,
      sequence: chunk.sequence,
      madeAt: chunk.madeAt,
      stored: Promise.resolve(),
    }));
    this.#chunks.unshift(...entries);
    this.#changed();
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
    if (this.#draining !== undefined) {
      // A send that is ending may have missed what changed just now (a sequence, a chunk).
      this.#again = true;
      return this.#draining;
    }
    this.#draining = this.#sendWhileAsked().finally(() => {
      this.#draining = undefined;
    });
    return this.#draining;
  }

  async #sendWhileAsked(): Promise<void> {
    do {
      this.#again = false;
      await this.#send();
    } while (this.#again && !this.#stopped);
  }

  #changed(): void {
    this.#options.onChange?.();
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  async #send(): Promise<void> {
    const { upload, pause, refused = 'retry' } = this.#options;
    let delay = FIRST_DELAY_MS;
    while (!this.#stopped && this.#sequence !== null) {
      const entry = this.#chunks[0];
      if (entry === undefined) return;
      await entry.stored;
      // Sent before (by this page or one that crashed) under a sequence the server may hold
      // already: the same sequence again, which the server answers 200 for a chunk it has.
      const sequence = entry.sequence === null ? this.#sequence : Math.min(entry.sequence, this.#sequence);
      await this.#noteSequence(entry, sequence);
      const form = new FormData();
      form.append('sequence', String(sequence));
      form.append('source', this.source);
      // How long ago it was made, so the server places a chunk that waited here at its own time.
      if (entry.madeAt !== undefined) {
        form.append('age_ms', String(Math.max(0, Math.round(this.#now() - entry.madeAt))));
      }
      form.append('file', entry.blob, fileName(this.source, sequence, entry.blob));
      try {
        const ack = await upload(form);
        this.#sequence = ack.next_sequence;
        this.#forget(this.#chunks.splice(0, 1));
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
        const head = this.#chunks[0];
        if (head !== undefined) head.sequence = null;
        return 'again';
      }
      // Not started, or over: the server takes no more, so nothing is kept. (At the end this is the
      // chunk that ran past the finish, which the page hears of a moment later.)
      this.lost += this.#chunks.length;
      this.#forget(this.#chunks.splice(0));
      this.#changed();
      this.#options.onClosed?.(error);
      return 'stop';
    }
    if (refused === 'retry') return 'wait';
    if (error.status === 404) return 'stop';
    // Refused as unreadable: dropped, so the ones after it can still go.
    this.#forget(this.#chunks.splice(0, 1));
    this.#changed();
    return 'again';
  }

  /** Notes on the device the sequence `entry` goes under (a failure only costs a resend's check). */
  async #noteSequence(entry: Entry, sequence: number): Promise<void> {
    const keeper = this.#options.keeper;
    if (entry.sequence === sequence) return;
    entry.sequence = sequence;
    if (keeper === undefined || entry.key === undefined) return;
    await keeper.setSequence(entry.key, sequence).catch(() => undefined);
  }

  /** Forgets `entries` on the device (what stays there is sent again, and answered 200, later). */
  #forget(entries: readonly Entry[]): void {
    const keeper = this.#options.keeper;
    if (keeper === undefined) return;
    for (const entry of entries) {
      if (entry.key !== undefined) void keeper.remove(entry.key).catch(() => undefined);
    }
  }
}
