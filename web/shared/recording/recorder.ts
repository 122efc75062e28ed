import type { ChunkQueue } from './chunk-queue.ts';

/**
 * One MediaRecorder of a stream, cutting a chunk every `chunkMs` into a ChunkQueue (which sends
 * them). A page may run several over the same queue one after another (a camera switched during
 * the exam): the queue keeps the numbering.
 */

/** The room's camera: WebM with sound first, MP4 where only that is written (Safari). */
export const TYPES_WITH_SOUND = [
  'video/webm;codecs=vp8,opus',
  'video/webm;codecs=vp8',
  'video/webm',
  'video/mp4',
] as const;

/** Sound only (the camera's microphone of a candidate exempt from the webcam): WebM with Opus first. */
export const TYPES_SOUND_ONLY = [
  'video/webm;codecs=opus',
  'audio/webm;codecs=opus',
  'video/webm',
  'video/mp4',
] as const;

/** Video only (the screen, the phone): WebM first, MP4 for Safari. */
export const TYPES_VIDEO_ONLY = [
  'video/webm;codecs=vp8',
  'video/webm;codecs=vp9',
  'video/webm',
  'video/mp4',
] as const;

/** The first of `candidates` this browser's MediaRecorder writes; undefined: let it choose. */
export function pickMimeType(candidates: readonly string[]): string | undefined {
  return candidates.find((candidate) => MediaRecorder.isTypeSupported(candidate));
}

export interface RecorderOptions {
  readonly stream: MediaStream;
  /** Where the chunks go. */
  readonly queue: ChunkQueue;
  /** The container and codecs, by preference (TYPES_WITH_SOUND, TYPES_VIDEO_ONLY). */
  readonly mimeTypes: readonly string[];
  /** Milliseconds of recording per chunk. */
  readonly chunkMs: number;
  readonly videoBitsPerSecond: number;
  /** Called when the recorder has started (the page can say "Recording"). */
  readonly onStart?: () => void;
}

/** Chromium's option for the key frame interval (ignored elsewhere). */
type RecorderInit = MediaRecorderOptions & { videoKeyFrameIntervalDuration?: number };

/** Starts recording at once. */
export class Recorder {
  readonly queue: ChunkQueue;
  readonly #recorder: MediaRecorder;
  readonly #done: Promise<void>;

  constructor(options: RecorderOptions) {
    this.queue = options.queue;
    const type = pickMimeType(options.mimeTypes);
    const init: RecorderInit = {
      ...(type === undefined ? {} : { mimeType: type }),
      videoBitsPerSecond: options.videoBitsPerSecond,
      // A key frame every 2 s: the finalised recording seeks to within 2 s, and a damaged chunk
      // costs no more than the seconds up to the next key frame.
      videoKeyFrameIntervalDuration: 2000,
    };
    this.#recorder = new MediaRecorder(options.stream, init);
    this.#recorder.addEventListener('dataavailable', (event) => {
      if (event.data.size > 0) this.queue.push(event.data);
    });
    this.#done = new Promise((resolve) => this.#recorder.addEventListener('stop', () => resolve()));
    if (options.onStart !== undefined) this.#recorder.addEventListener('start', options.onStart);
    this.#recorder.start(options.chunkMs);
  }

  /** True while the recorder films. */
  get recording(): boolean {
    return this.#recorder.state === 'recording';
  }

  /** Stops the recorder. Resolves once its last chunk is in the queue (not yet sent). */
  async stop(): Promise<void> {
    if (this.#recorder.state !== 'inactive') this.#recorder.stop();
    await this.#done;
  }
}

/**
 * Films `ms` of `stream` as one clip (a check's sample). Returns the clip, typed by what the
 * browser wrote.
 */
export async function recordClip(
  stream: MediaStream,
  ms: number,
  mimeTypes: readonly string[],
): Promise<Blob> {
  const type = pickMimeType(mimeTypes);
  const recorder = new MediaRecorder(stream, type === undefined ? {} : { mimeType: type });
  const pieces: Blob[] = [];
  recorder.addEventListener('dataavailable', (event) => {
    if (event.data.size > 0) pieces.push(event.data);
  });
  const stopped = new Promise((resolve) => recorder.addEventListener('stop', resolve));
  recorder.start();
  await new Promise((resolve) => window.setTimeout(resolve, ms));
  recorder.stop();
  await stopped;
  return new Blob(pieces, { type: recorder.mimeType || type || 'video/webm' });
}
