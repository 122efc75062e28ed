/**
 * The exam's recordings on this page (docs/room.md, "Recording"): the camera (with sound) and the
 * screen, each cut by a MediaRecorder into 4-second chunks that a queue sends in order, retrying
 * while the server cannot be reached. One queue per source for the page's life, so a recorder
 * started again (a camera or screen share that stopped) goes on in the same numbering.
 */
import type { RecordingAnswer } from '../../shared/candidate-api';
import { ChunkQueue, type ChunkAck } from '../../shared/recording/chunk-queue.ts';
import {
  Recorder,
  TYPES_SOUND_ONLY,
  TYPES_VIDEO_ONLY,
  TYPES_WITH_SOUND,
} from '../../shared/recording/recorder.ts';
import { pause, room, type RoomView } from '../state/room.svelte.ts';

/** What this page records: the camera (with the microphone) or the screen. */
export type Source = 'webcam' | 'screen';

/** True when the candidate is exempt from `check` (docs/accommodations.md): that stream is not recorded. */
export function exempt(view: RoomView | undefined, check: 'webcam' | 'microphone' | 'screen_share'): boolean {
  return view?.accommodations.exemptions.includes(check) === true;
}

/**
 * What of the camera stream is recorded: the whole of it, its sound alone (exempt from the webcam),
 * its picture alone (exempt from the microphone), or nothing (exempt from both). Returns the stream
 * to record and its types, or undefined.
 */
function cameraRecording(
  view: RoomView,
  stream: MediaStream,
): { stream: MediaStream; mimeTypes: readonly string[] } | undefined {
  const noVideo = exempt(view, 'webcam');
  const noSound = exempt(view, 'microphone');
  if (noVideo && noSound) return undefined;
  if (noVideo) {
    const tracks = stream.getAudioTracks();
    return tracks.length === 0 ? undefined : { stream: new MediaStream(tracks), mimeTypes: TYPES_SOUND_ONLY };
  }
  if (noSound) return { stream: new MediaStream(stream.getVideoTracks()), mimeTypes: TYPES_VIDEO_ONLY };
  return { stream, mimeTypes: TYPES_WITH_SOUND };
}

/** Milliseconds of recording per uploaded chunk. */
const CHUNK_MS = 4000;
/** How long finishing waits for queued recording chunks before it finishes anyway. */
const FLUSH_LIMIT_MS = 30000;
const BITS_PER_SECOND: Record<Source, number> = { webcam: 800_000, screen: 1_500_000 };

class RoomRecording {
  /** The sources recording now, in the order they started. */
  running: Source[] = $state([]);
  /** Chunks recorded and not yet acknowledged, over every queue. */
  waiting = $state(0);
  /** Chunks the server refused for good (the exam had ended before they arrived). */
  lost = $state(0);
  /** How many recorders this page ran (each may lose its last chunk when staff end the exam). */
  made = $state(0);

  readonly #recorders = new Map<Source, Recorder>();
  readonly #queues = new Map<Source, ChunkQueue>();

  /** The recorders stand paused (a rest break of an exam that does not record during breaks). */
  paused = $state(false);

  /**
   * Starts a recorder for each source the exam records and this page has a stream for, leaving out
   * what the candidate is exempt from (exempt).
   */
  start(): void {
    const view = room.view;
    if (view === undefined || this.paused) return;
    const { exam } = view;
    const camera = room.cameraStream === undefined ? undefined : cameraRecording(view, room.cameraStream);
    if (exam.web_cam && camera !== undefined) this.#begin('webcam', camera.stream, camera.mimeTypes);
    if (exam.screen_share && !exempt(view, 'screen_share') && room.screenStream !== undefined) {
      this.#begin('screen', room.screenStream, TYPES_VIDEO_ONLY);
    }
  }

  /**
   * Stops the recorders for a rest break (their last chunks still go out) or starts them again after
   * it, on the same queues: the numbering goes on, and the new recorders begin new WebM segments,
   * which the finalisation places by their arrival, the break showing as a gap in the recording
   * (docs/recordings.md) rather than shifting what follows it. A MediaRecorder pause would leave the
   * break out of the media time and misplace everything recorded after it.
   */
  setPaused(paused: boolean): void {
    if (paused === this.paused) return;
    this.paused = paused;
    if (!paused) {
      this.start();
      return;
    }
    const recorders = [...this.#recorders.values()];
    this.#recorders.clear();
    for (const recorder of recorders) void recorder.stop();
    this.#changed();
  }

  /** Stops one source's recorder (its stream ended); what it queued is still sent. */
  stopSource(source: Source): void {
    const recorder = this.#recorders.get(source);
    if (recorder === undefined) return;
    this.#recorders.delete(source);
    void recorder.stop();
    this.#changed();
  }

  /** Stops every recorder and sends what is queued, waiting at most FLUSH_LIMIT_MS. Never throws. */
  async stop(): Promise<void> {
    const recorders = [...this.#recorders.values()];
    this.#recorders.clear();
    await Promise.all(recorders.map((recorder) => recorder.stop()));
    this.#changed();
    const flushed = Promise.all([...this.#queues.values()].map((queue) => queue.drain()));
    await Promise.race([flushed, new Promise((resolve) => window.setTimeout(resolve, FLUSH_LIMIT_MS))]);
  }

  /** Sends what waits now (the connection came back). */
  drain(): void {
    for (const queue of this.#queues.values()) void queue.drain();
  }

  #begin(source: Source, stream: MediaStream, mimeTypes: readonly string[]): void {
    if (this.#recorders.has(source)) return;
    const recorder = new Recorder({
      stream,
      queue: this.#queue(source),
      mimeTypes,
      chunkMs: CHUNK_MS,
      videoBitsPerSecond: BITS_PER_SECOND[source],
    });
    this.#recorders.set(source, recorder);
    this.made += 1;
    this.#changed();
  }

  /** The queue of `source`, numbered on from what the server holds when it is first needed. */
  #queue(source: Source): ChunkQueue {
    const existing = this.#queues.get(source);
    if (existing !== undefined) return existing;
    const session = room.view?.session;
    const queue = new ChunkQueue({
      source,
      sequence:
        source === 'webcam'
          ? (session?.recording_chunks_count ?? 0)
          : (session?.screen_recording_chunks_count ?? 0),
      upload: async (form) =>
        (await room.call('POST', '/recordings', form)) as RecordingAnswer satisfies ChunkAck,
      pause,
      onChange: () => this.#changed(),
      // Ended elsewhere (staff, or the learning platform): show it now, not at the next poll.
      onClosed: () => void room.poll(),
    });
    this.#queues.set(source, queue);
    return queue;
  }

  #changed(): void {
    const queues = [...this.#queues.values()];
    this.running = [...this.#recorders.keys()];
    this.waiting = queues.reduce((sum, queue) => sum + queue.waiting, 0);
    this.lost = queues.reduce((sum, queue) => sum + queue.lost, 0);
    room.setRecording(this.running.length > 0, this.waiting);
  }
}

/** The recordings of this page: one per page. */
export const recording = new RoomRecording();
