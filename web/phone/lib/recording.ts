/**
 * The phone's recording: one chunk queue for the whole page and the recorder that fills it. A
 * camera switched or turned on again gets a new recorder on the same queue, so the numbering goes
 * on unbroken; the queue outlives a dropped connection.
 */
import { ChunkQueue, type ChunkQueueOptions } from '../../shared/recording/chunk-queue.ts';
import { Recorder, TYPES_VIDEO_ONLY } from '../../shared/recording/recorder.ts';

/** Milliseconds of recording per uploaded chunk (as the room's). */
const CHUNK_MS = 4000;
/** The phone's recording bitrate: a side view, sharp enough to read a screen at a metre. */
const BITS_PER_SECOND = 600_000;
/** How long finishing waits for queued chunks before it gives up on them. */
const FLUSH_LIMIT_MS = 30_000;

export interface PhoneRecordingOptions {
  readonly upload: ChunkQueueOptions['upload'];
  readonly pause: ChunkQueueOptions['pause'];
  /** The queue's count or its waiting chunks changed. */
  readonly onQueue: () => void;
  /** The server refused the queue's chunks for good (the exam is over, or the link gone). */
  readonly onClosed: NonNullable<ChunkQueueOptions['onClosed']>;
  /** A recorder really films (its first data is on the way). */
  readonly onFilming: () => void;
}

export class PhoneRecording {
  readonly #queue: ChunkQueue;
  readonly #onFilming: () => void;
  #recorder: Recorder | undefined;

  constructor(options: PhoneRecordingOptions) {
    this.#onFilming = options.onFilming;
    this.#queue = new ChunkQueue({
      source: 'mobile',
      upload: options.upload,
      pause: options.pause,
      refused: 'drop',
      onChange: options.onQueue,
      onClosed: options.onClosed,
    });
  }

  /** The queue's next sequence (the server's count), null before the first start. */
  get sequence(): number | null {
    return this.#queue.sequence;
  }

  /** Chunks not yet taken by the server. */
  get waiting(): number {
    return this.#queue.waiting;
  }

  /** True while a recorder exists. */
  get running(): boolean {
    return this.#recorder !== undefined;
  }

  /** Starts a recorder on `stream`, numbered on from `nextSequence` the first time. */
  start(stream: MediaStream, nextSequence: number): void {
    this.#queue.startAt(nextSequence);
    this.#recorder = new Recorder({
      stream,
      queue: this.#queue,
      mimeTypes: TYPES_VIDEO_ONLY,
      chunkMs: CHUNK_MS,
      videoBitsPerSecond: BITS_PER_SECOND,
      onStart: this.#onFilming,
    });
  }

  /** Stops the recorder (its last chunk joins the queue). */
  async stop(): Promise<void> {
    const running = this.#recorder;
    this.#recorder = undefined;
    await running?.stop();
  }

  /** Waits until the queue is sent, or FLUSH_LIMIT_MS at most. */
  async flush(): Promise<void> {
    await Promise.race([
      this.#queue.drain(),
      new Promise((resolve) => window.setTimeout(resolve, FLUSH_LIMIT_MS)),
    ]);
  }

  /** Gives up on the queue: nothing more goes out. */
  abandon(): void {
    this.#queue.stop();
  }
}
