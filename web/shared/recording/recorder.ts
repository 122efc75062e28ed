import type { ChunkQueue } from './chunk-queue.ts';
import { constraintsFor, type RecordingProfile } from './profile.ts';

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
  /**
   * The recording profile (profile.ts profileFor): codec, bitrates, key frames, and the picture's
   * size and frame rate, applied to a clone of the video track so the page's own track (the preview,
   * the detectors) keeps its size. Without it: `mimeTypes` and `videoBitsPerSecond`.
   */
  readonly profile?: RecordingProfile;
  /** The container and codecs, by preference (TYPES_WITH_SOUND, TYPES_VIDEO_ONLY); ignored with a profile. */
  readonly mimeTypes?: readonly string[];
  /** Milliseconds of recording per chunk. */
  readonly chunkMs: number;
  /** Ignored with a profile. */
  readonly videoBitsPerSecond?: number;
  /** Called when the recorder has started (the page can say "Recording"). */
  readonly onStart?: () => void;
}

/** Chromium's option for the key frame interval (ignored elsewhere). */
type RecorderInit = MediaRecorderOptions & { videoKeyFrameIntervalDuration?: number };

/** What a MediaRecorder is asked for without a profile: a key frame every 2 s. */
const PLAIN_KEY_FRAME_MS = 2000;

/**
 * The stream a profile records: its video track cloned and shaped (size, frame rate, content hint),
 * its audio tracks as they are. Resolves with the stream and the clones to stop afterwards; a shape
 * the browser refuses leaves the clone as it came (recorded at the profile's bitrate all the same).
 */
async function shapedStream(
  stream: MediaStream,
  profile: RecordingProfile,
): Promise<{ stream: MediaStream; clones: MediaStreamTrack[] }> {
  const shape = profile.video;
  const videos = stream.getVideoTracks();
  if (shape === undefined || videos.length === 0) return { stream, clones: [] };
  const clones = videos.map((track) => track.clone());
  for (const clone of clones) {
    try {
      clone.contentHint = shape.contentHint;
    } catch {
      // An older browser without content hints: the encoder guesses.
    }
    try {
      await clone.applyConstraints(constraintsFor(shape));
    } catch {
      // Refused (an old browser, a camera without scaling): the picture stays as it is.
    }
  }
  return { stream: new MediaStream([...clones, ...stream.getAudioTracks()]), clones };
}

/** The MediaRecorder options of a profile, or of the plain mime types and bitrate. */
function recorderInit(options: RecorderOptions): RecorderInit {
  const profile = options.profile;
  if (profile === undefined) {
    const type = pickMimeType(options.mimeTypes ?? []);
    return {
      ...(type === undefined ? {} : { mimeType: type }),
      ...(options.videoBitsPerSecond === undefined ? {} : { videoBitsPerSecond: options.videoBitsPerSecond }),
      // A key frame every 2 s: the finalised recording seeks to within 2 s, and a damaged chunk
      // costs no more than the seconds up to the next key frame.
      videoKeyFrameIntervalDuration: PLAIN_KEY_FRAME_MS,
    };
  }
  return {
    ...(profile.mimeType === undefined ? {} : { mimeType: profile.mimeType }),
    ...(profile.videoBitsPerSecond > 0 ? { videoBitsPerSecond: profile.videoBitsPerSecond } : {}),
    ...(profile.audioBitsPerSecond > 0 ? { audioBitsPerSecond: profile.audioBitsPerSecond } : {}),
    videoKeyFrameIntervalDuration: profile.keyFrameIntervalMs,
  };
}

/**
 * Starts recording at once (with a profile: as soon as the picture is shaped, a few milliseconds
 * later).
 */
export class Recorder {
  readonly queue: ChunkQueue;
  /** The profile recorded at; undefined for a plain recorder. */
  readonly profile: RecordingProfile | undefined;
  #recorder: MediaRecorder | undefined;
  #clones: MediaStreamTrack[] = [];
  #stopped = false;
  readonly #started: Promise<void>;
  #done: Promise<void> = Promise.resolve();

  constructor(options: RecorderOptions) {
    this.queue = options.queue;
    this.profile = options.profile;
    const begin = (stream: MediaStream): void => {
      if (this.#stopped) return;
      const recorder = new MediaRecorder(stream, recorderInit(options));
      recorder.addEventListener('dataavailable', (event) => {
        if (event.data.size > 0) this.queue.push(event.data);
      });
      this.#done = new Promise((resolve) => recorder.addEventListener('stop', () => resolve()));
      if (options.onStart !== undefined) recorder.addEventListener('start', options.onStart);
      this.#recorder = recorder;
      recorder.start(options.chunkMs);
    };
    if (options.profile === undefined) {
      begin(options.stream);
      this.#started = Promise.resolve();
      return;
    }
    this.#started = shapedStream(options.stream, options.profile).then(({ stream, clones }) => {
      this.#clones = clones;
      begin(stream);
    });
  }

  /** True while the recorder films. */
  get recording(): boolean {
    return this.#recorder?.state === 'recording';
  }

  /** Stops the recorder. Resolves once its last chunk is in the queue (not yet sent). */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#started.catch(() => undefined);
    const recorder = this.#recorder;
    if (recorder !== undefined && recorder.state !== 'inactive') recorder.stop();
    await this.#done;
    // The clones only: the page's own tracks go on (the preview, the detectors, the next recorder).
    for (const clone of this.#clones) clone.stop();
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
