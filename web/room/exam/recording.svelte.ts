/**
 * The exam's recordings on this page (docs/room.md, "Recording"): the camera (with sound) and the
 * screen, each cut by a MediaRecorder into 4-second chunks that a queue sends in order, retrying
 * while the server cannot be reached. One queue per source for the page's life, so a recorder
 * started again (a camera or screen share that stopped) goes on in the same numbering.
 */
import type { RecordingAnswer } from '../../shared/candidate-api';
import { ChunkQueue, type ChunkAck } from '../../shared/recording/chunk-queue.ts';
import { Recorder } from '../../shared/recording/recorder.ts';
import {
  adaptedQuality,
  DEFAULT_QUALITY,
  GROWING_INTERVALS,
  isQuality,
  profileFor,
  type Quality,
} from '../../shared/recording/profile.ts';
import { phrase } from '../../shared/phrase.ts';
import { forgetKept, keeper, keptBefore, NoDeviceStore } from '../state/kept.ts';
import { pause, room, type RoomView } from '../state/room.svelte.ts';

/** What this page records: the camera (with the microphone) or the screen. */
export type Source = 'webcam' | 'screen';

/** True when the candidate is exempt from `check` (docs/accommodations.md): that stream is not recorded. */
export function exempt(view: RoomView | undefined, check: 'webcam' | 'microphone' | 'screen_share'): boolean {
  return view?.accommodations.exemptions.includes(check) === true;
}

/**
 * What of the camera stream is recorded: the whole of it, its sound alone (exempt from the webcam),
 * its picture alone (exempt from the microphone), or nothing (exempt from both). The recording
 * profile picks the container and codecs by the tracks it is given.
 */
function cameraRecording(view: RoomView, stream: MediaStream): MediaStream | undefined {
  const noVideo = exempt(view, 'webcam');
  const noSound = exempt(view, 'microphone');
  if (noVideo && noSound) return undefined;
  if (noVideo) {
    const tracks = stream.getAudioTracks();
    return tracks.length === 0 ? undefined : new MediaStream(tracks);
  }
  if (noSound) return new MediaStream(stream.getVideoTracks());
  return stream;
}

/** Milliseconds of recording per uploaded chunk. */
const CHUNK_MS = 4000;
/**
 * How long finishing waits for queued recording chunks while none is acknowledged before it
 * finishes anyway (a slow line that still moves is waited for: each acknowledgement restarts it).
 */
const FLUSH_LIMIT_MS = 30000;
// Codec, size, frame rate and bitrates come from the recording profile at the exam's level
// (shared/recording/profile.ts, docs/recordings.md "Recording profile"): about 120 kbit/s for the
// webcam and 60 for the screen by default, where this page once asked for 800 and 1 500.

class RoomRecording {
  /** The sources recording now, in the order they started. */
  running: Source[] = $state([]);
  /** Chunks recorded and not yet acknowledged, over every queue. */
  waiting = $state(0);
  /** Their bytes. */
  waitingBytes = $state(0);
  /** Chunks the server refused for good (the exam had ended before they arrived). */
  lost = $state(0);
  /** How many recorders this page ran (each may lose its last chunk when staff end the exam). */
  made = $state(0);

  readonly #recorders = new Map<Source, Recorder>();
  readonly #queues = new Map<Source, ChunkQueue>();

  /**
   * The level recorded at now: the exam's `recording_quality`, or one below it when the line cannot
   * keep up (docs/recordings.md, "Stepping down"). Never below `low`.
   */
  quality: Quality = $state(DEFAULT_QUALITY);
  /** The level the exam asks for, read when the first recorder starts. */
  #asked: Quality | undefined;
  /** Chunks waiting at each of the last samples (one per chunk interval), oldest first. */
  #history: number[] = [];
  /** The timer sampling the queue while recorders run. */
  #monitor: number | undefined;

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
    if (exam.web_cam && camera !== undefined) this.#begin('webcam', camera);
    if (exam.screen_share && !exempt(view, 'screen_share') && room.screenStream !== undefined) {
      this.#begin('screen', room.screenStream);
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

  /**
   * Stops every recorder and sends what is queued, for as long as the server keeps acknowledging
   * chunks, giving up after FLUSH_LIMIT_MS without one (what is left stays kept on the device).
   * Never throws.
   */
  async stop(): Promise<void> {
    this.#unwatch();
    const recorders = [...this.#recorders.values()];
    this.#recorders.clear();
    await Promise.all(recorders.map((recorder) => recorder.stop()));
    this.#changed();
    let flushed = false;
    const flushing = Promise.all([...this.#queues.values()].map((queue) => queue.drain())).then(() => {
      flushed = true;
    });
    let before = this.waiting;
    while (!flushed) {
      await Promise.race([flushing, new Promise((resolve) => window.setTimeout(resolve, FLUSH_LIMIT_MS))]);
      if (flushed || this.waiting >= before) return;
      before = this.waiting;
    }
  }

  /**
   * Sends what pages before this one kept on the device and left unsent (a crash, a reload while
   * offline), before anything this page records: called when the exam stage comes up.
   */
  restore(): void {
    for (const source of ['webcam', 'screen'] as const) this.#queue(source);
  }

  /**
   * Forgets what the device keeps for this exam once the exam is over and nothing waits (what the
   * server did not take by then it will never take). Never throws.
   */
  async forgetWhenSent(): Promise<void> {
    if (this.waiting > 0 && room.view?.session.status === 'exam_started') return;
    await forgetKept();
  }

  /** Sends what waits now (the connection came back). */
  drain(): void {
    for (const queue of this.#queues.values()) void queue.drain();
  }

  /**
   * Starts the recorder of `source` at the level recorded at now, with the picture size of the level
   * the exam asked for (so a step down changes no segment's size).
   */
  #begin(source: Source, stream: MediaStream): void {
    if (this.#recorders.has(source)) return;
    const asked = this.#levelAsked();
    const kinds = { video: stream.getVideoTracks().length > 0, audio: stream.getAudioTracks().length > 0 };
    const recorder = new Recorder({
      stream,
      queue: this.#queue(source),
      profile: profileFor(source, this.quality, MediaRecorder, kinds, asked),
      chunkMs: CHUNK_MS,
    });
    this.#recorders.set(source, recorder);
    this.made += 1;
    this.#watch();
    this.#changed();
  }

  /**
   * The exam's level, read once; the first time, the level recorded at starts one below it when the
   * connection check measured a line too slow for it.
   */
  #levelAsked(): Quality {
    if (this.#asked !== undefined) return this.#asked;
    const view = room.view;
    const asked = isQuality(view?.exam.recording_quality) ? view.exam.recording_quality : DEFAULT_QUALITY;
    this.#asked = asked;
    this.quality = adaptedQuality(asked, {
      measuredMbit: view?.session.bandwidth_speed ?? null,
      waiting: 0,
      history: [],
      recorders: 0,
    });
    return asked;
  }

  /** Samples the queue once per chunk interval while the page records. */
  #watch(): void {
    if (this.#monitor !== undefined) return;
    this.#monitor = window.setInterval(() => this.#sample(), CHUNK_MS);
  }

  #unwatch(): void {
    if (this.#monitor !== undefined) window.clearInterval(this.#monitor);
    this.#monitor = undefined;
    this.#history = [];
  }

  /**
   * One sample of the queue: steps down one level when it grew at each of the last samples. A lost
   * connection is not a slow one (everything waits until it is back), so it restarts the count.
   */
  #sample(): void {
    if (room.lost || this.#recorders.size === 0) {
      this.#history = [];
      return;
    }
    const signals = {
      measuredMbit: null,
      waiting: this.waiting,
      history: this.#history,
      recorders: this.#recorders.size,
    };
    this.#history = [...this.#history, this.waiting].slice(-GROWING_INTERVALS);
    const next = adaptedQuality(this.quality, signals);
    if (next !== this.quality) void this.#stepTo(next);
  }

  /**
   * Restarts the recorders at `next`: each one's last chunk goes into the queue, and the new ones
   * begin new segments on the same queues (as after a rest break), which the finalisation places by
   * their arrival. Tells the candidate quietly (screen readers; nothing to do).
   */
  async #stepTo(next: Quality): Promise<void> {
    this.quality = next;
    this.#history = [];
    const recorders = [...this.#recorders.values()];
    this.#recorders.clear();
    await Promise.all(recorders.map((recorder) => recorder.stop()));
    this.#changed();
    // Finished meanwhile (stop() ends the sampling): nothing starts again.
    if (this.#monitor === undefined) return;
    this.start();
    room.announce(phrase('room.exam.recording.lowered'));
  }

  /**
   * The queue of `source`. Each chunk is kept on the device before it is sent (docs/room.md,
   * "Nothing recorded is lost"). The queue holds its chunks until what an earlier page left unsent
   * is read back and put first; then it numbers on from what the server holds (the server's
   * answers correct a count that moved meanwhile).
   */
  #queue(source: Source): ChunkQueue {
    const existing = this.#queues.get(source);
    if (existing !== undefined) return existing;
    const queue = new ChunkQueue({
      source,
      sequence: null,
      upload: async (form) =>
        (await room.call('POST', '/recordings', form)) as RecordingAnswer satisfies ChunkAck,
      pause,
      onChange: () => this.#changed(),
      // Ended elsewhere (staff, or the learning platform): show it now, not at the next poll.
      onClosed: () => {
        void forgetKept();
        void room.poll();
      },
      keeper,
      onKeepFailed: (error) => {
        if (error instanceof NoDeviceStore) return;
        console.warn(`room: a ${source} chunk cannot be kept on this device`, error);
        room.deviceFull = true;
      },
    });
    this.#queues.set(source, queue);
    void keptBefore().then((items) => {
      queue.restore(items.filter((item) => item.source === source));
      const session = room.view?.session;
      queue.startAt(
        source === 'webcam'
          ? (session?.recording_chunks_count ?? 0)
          : (session?.screen_recording_chunks_count ?? 0),
      );
    });
    return queue;
  }

  #changed(): void {
    const queues = [...this.#queues.values()];
    this.running = [...this.#recorders.keys()];
    this.waiting = queues.reduce((sum, queue) => sum + queue.waiting, 0);
    this.waitingBytes = queues.reduce((sum, queue) => sum + queue.waitingBytes, 0);
    this.lost = queues.reduce((sum, queue) => sum + queue.lost, 0);
    room.setRecording(this.running.length > 0, this.waiting, this.waitingBytes);
  }
}

/** The recordings of this page: one per page. */
export const recording = new RoomRecording();

// The exam is over (finished here, elsewhere, or found finished on opening): nothing kept on the
// device for it can be sent any more.
room.onView((view) => {
  if (view.session.status === 'exam_finished') void recording.forgetWhenSent();
});
