/**
 * Face analysis on the candidate's camera (docs/automated-flags.md), on this device only. The models
 * run in a Web Worker (detector.worker.ts: Human, with TensorFlow.js on a real graphics card through
 * WebGL, else on WebAssembly, else in plain JavaScript), so the room's page stays responsive. This
 * side, on the page, takes a frame from the camera at the exam's `detection_hz`, hands it to the
 * worker and turns the faces it finds into signals: BlazeFace's count for no_face and
 * multiple_faces, FaceMesh's head turn for looking_away, and every MATCH_EVERY_MS the FaceRes
 * descriptor compared with the face photo taken in setup (face_mismatch, advisory). The models come
 * from the service's own origin (`/room/models/<hash>/`); no frame leaves the device.
 *
 * The rate adapts: each detection is timed, and when detections would take more than a quarter of
 * one processor core (BUDGET) the rate drops (not below MIN_HZ) and the server is told; it goes back
 * up when the device keeps up again.
 */
import type { DetectionResult, FromDetector, HumanFace, ToDetector } from './detector-protocol.ts';
import type { Episodes } from './episodes.ts';
import type { AutomatedFlagSettings } from '../../shared/candidate-api.ts';

export type { HumanFace };
export type FlagSettings = AutomatedFlagSettings;

/** The share of one processor core detection may use. */
export const BUDGET = 0.25;
/** The slowest rate the room goes down to before it stops lowering. */
export const MIN_HZ = 0.5;
/** How often the face in view is compared with the face photo. */
export const MATCH_EVERY_MS = 10_000;
/** Mismatching comparisons in a row before a face_mismatch episode opens. */
const MISMATCHES_TO_FLAG = 2;
/** A head turned further than this (radians, about 35°) left or right counts as looking away. */
const YAW_LIMIT = 0.6;
/** A head tilted further than this (radians, about 35°) up or down counts as looking away. */
const PITCH_LIMIT = 0.6;
/** Detections timed before the rate is judged, and how many are averaged. */
const SAMPLES = 5;
/** How many detections between two console lines with their average time. */
const LOG_EVERY = 10;
/** A face BlazeFace is less sure of than this is not counted. */
const MIN_FACE_SCORE = 0.5;
/** Failed detections in a row after which the detector gives up. */
const MAX_FAILURES = 5;

/** What a detection can look at: a camera's video, a picture, or a frame already taken. */
export type FrameSource = HTMLVideoElement | HTMLImageElement | HTMLCanvasElement | ImageBitmap;

/** The face models as the detector uses them: detection (in the worker) and descriptor comparison. */
export interface FaceModel {
  readonly match: { similarity(a: readonly number[], b: readonly number[]): number };
  detect(frame: ImageBitmap, describe: boolean): Promise<DetectionResult>;
  terminate(): void;
}

/** How the face detector reports to the room. */
export interface FaceOptions {
  base: string;
  settings: FlagSettings;
  episodes: Pick<Episodes, 'set'>;
  facePhoto: string | null;
  reportRate: (hz: number) => void;
  log: (message: string) => void;
}

/**
 * How alike two FaceRes descriptors are, from 0 to 1: Human's own measure (its `match.similarity`
 * with its defaults: the squared distance scaled by 25, its root mapped from 0.2..0.8 onto 0..1),
 * written out here because the comparison runs on the page, next to the signal rules.
 */
export function descriptorSimilarity(a: readonly number[], b: readonly number[]): number {
  let sum = 0;
  for (let index = 0; index < a.length; index += 1) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0);
    sum += difference * difference;
  }
  const distance = Math.round(100 * 25 * sum) / 100;
  if (distance === 0) return 1;
  const normalised = (1 - Math.sqrt(distance) / 100 - 0.2) / (0.8 - 0.2);
  return Math.round(100 * Math.max(Math.min(normalised, 1), 0)) / 100;
}

/**
 * The detector's worker, seen from the page: loads Human there, and answers each frame with the
 * faces found. Frames are transferred, not copied.
 */
class DetectorWorker implements FaceModel {
  readonly match = { similarity: descriptorSimilarity };
  private readonly worker: Worker;
  private readonly pending = new Map<
    number,
    { resolve: (result: DetectionResult) => void; reject: (error: Error) => void }
  >();
  private nextId = 0;
  private loading: { resolve: (backend: string) => void; reject: (error: Error) => void } | null = null;

  constructor(log: (message: string) => void) {
    this.worker = new Worker(new URL('./detector.worker.ts', import.meta.url), { type: 'module' });
    this.worker.addEventListener('message', (event: MessageEvent<FromDetector>) =>
      this.receive(event.data, log),
    );
    // A worker whose script cannot start (refused by a policy, a network error) says so only here.
    this.worker.addEventListener('error', (event) => {
      event.preventDefault();
      this.failAll(new Error(`the detector's worker failed: ${event.message || 'it did not start'}`));
    });
  }

  private send(message: ToDetector, transfer: Transferable[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  private receive(message: FromDetector, log: (message: string) => void): void {
    switch (message.kind) {
      case 'log':
        log(message.message);
        return;
      case 'loaded':
        this.loading?.resolve(message.backend);
        this.loading = null;
        return;
      case 'load-failed':
        this.loading?.reject(new Error(message.error));
        this.loading = null;
        return;
      case 'detected':
        this.pending.get(message.id)?.resolve(message.result);
        this.pending.delete(message.id);
        return;
      case 'failed':
        this.pending.get(message.id)?.reject(new Error(message.error));
        this.pending.delete(message.id);
    }
  }

  private failAll(error: Error): void {
    this.loading?.reject(error);
    this.loading = null;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }

  /** Loads Human and its models in the worker. Returns the TensorFlow.js backend that runs; throws when none does. */
  load(base: string): Promise<string> {
    return new Promise((resolve, reject) => {
      this.loading = { resolve, reject };
      this.send({ kind: 'load', base });
    });
  }

  detect(frame: ImageBitmap, describe: boolean): Promise<DetectionResult> {
    return new Promise((resolve, reject) => {
      const id = (this.nextId += 1);
      this.pending.set(id, { resolve, reject });
      this.send({ kind: 'detect', id, frame, describe }, [frame]);
    });
  }

  terminate(): void {
    this.worker.terminate();
    this.failAll(new Error('stopped'));
  }
}

/**
 * Whether a browser test pinned the detection rate (`globalThis.invigilTestHooks = { pinFaceRate:
 * true }`, set before the page loads). A pinned detector neither slows down nor stops on a loaded
 * machine, so a test's outcome does not hang on the machine's speed; the `flags-cost` benchmark
 * measures the speed instead. Real rooms never set it.
 */
function pinnedByTest(): boolean {
  const scope = globalThis as { invigilTestHooks?: { pinFaceRate?: unknown } };
  return scope.invigilTestHooks?.pinFaceRate === true;
}

export class FaceDetector {
  options: FaceOptions;
  human: FaceModel | null = null;
  /** Where frames are taken from: the camera's video (a test page may put a canvas here). */
  video: HTMLVideoElement | HTMLCanvasElement;
  stream: MediaStream | null = null;
  target: number;
  hz: number;
  pinned: boolean;
  times: number[] = [];
  /** The last detection's time in milliseconds (what the tests and the benchmark read). */
  lastMs = 0;
  reference: number[] | null = null;
  lastMatch = 0;
  mismatches = 0;
  stopped = false;
  failures = 0;
  timer: number | undefined = undefined;
  backend = '';
  /** Detections so far and their total time, for the console line every LOG_EVERY detections. */
  count = 0;
  total = 0;

  constructor(options: FaceOptions) {
    this.options = options;
    const video = document.createElement('video');
    video.muted = true;
    video.playsInline = true;
    this.video = video;
    this.target = Math.max(MIN_HZ, options.settings.detection_hz);
    this.hz = this.target;
    this.pinned = pinnedByTest();
  }

  /**
   * Starts the worker and loads Human and the models there (graphics card first, then the processor),
   * then the face photo's descriptor. Returns when it can detect; throws when it cannot.
   */
  async load(): Promise<void> {
    const worker = new DetectorWorker(this.options.log);
    try {
      this.backend = await worker.load(this.options.base);
    } catch (error) {
      worker.terminate();
      throw error;
    }
    if (this.stopped) {
      // The exam ended while the models loaded.
      worker.terminate();
      return;
    }
    this.human = worker;
    if (this.options.settings.face_match && this.options.facePhoto !== null) {
      try {
        this.reference = await this.descriptorOf(this.options.facePhoto);
      } catch (error) {
        this.options.log(`face photo not usable for matching: ${String(error)}`);
      }
    }
  }

  /**
   * The FaceRes descriptor of the one face in a photo (a data: or blob: address, decoded here since
   * the worker may fetch from the service only). Returns it; throws when the photo shows no face.
   */
  async descriptorOf(address: string): Promise<number[]> {
    const image = new Image();
    image.src = address;
    await image.decode();
    const result = await this.detectWith(image, true);
    const face = result.face.filter((found) => found.score >= MIN_FACE_SCORE)[0];
    if (face?.embedding === undefined || face.embedding.length === 0) throw new Error('no face in the photo');
    return face.embedding;
  }

  /**
   * Takes a frame from `input` and has the worker look at it, with FaceRes descriptors when
   * `describe`. Returns the faces found; throws when the frame cannot be taken or detection fails.
   */
  async detectWith(input: FrameSource, describe: boolean): Promise<DetectionResult> {
    if (this.human === null) throw new Error('not loaded');
    const frame = input instanceof ImageBitmap ? input : await createImageBitmap(input);
    return this.human.detect(frame, describe);
  }

  /** Looks at `stream`'s camera from now on (a resumed recording brings a new stream). */
  useStream(stream: MediaStream): void {
    if (this.stream === stream) return;
    this.stream = stream;
    if (this.video instanceof HTMLVideoElement) {
      this.video.srcObject = new MediaStream(stream.getVideoTracks());
      void this.video.play().catch(() => undefined);
    }
    if (this.timer === undefined && !this.stopped) this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    window.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.video instanceof HTMLVideoElement) this.video.srcObject = null;
    this.human?.terminate();
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = window.setTimeout(() => void this.tick(), delay);
  }

  /** Whether the video has a picture to take. */
  private hasFrame(): boolean {
    const video = this.video;
    if (video instanceof HTMLVideoElement) return video.readyState >= 2 && video.videoWidth > 0;
    return video.width > 0;
  }

  private async tick(): Promise<void> {
    const started = performance.now();
    if (this.hasFrame()) {
      try {
        await this.detectOnce(started);
        this.failures = 0;
      } catch (error) {
        if (this.stopped) return;
        this.failures += 1;
        this.options.log(`face detection failed: ${String(error)}`);
        if (this.failures >= MAX_FAILURES) {
          // Broken for good: stop looking rather than keep failing; the server hears rate 0.
          this.stop();
          this.options.reportRate(0);
          return;
        }
      }
      if (this.stopped) return;
      this.adapt(performance.now() - started);
    }
    this.schedule(Math.max(0, 1000 / this.hz - (performance.now() - started)));
  }

  /** One detection on the current frame, and the signals it raises. `started` is when it began. */
  async detectOnce(started: number): Promise<void> {
    const { settings, episodes } = this.options;
    const describe = this.reference !== null && started - this.lastMatch >= MATCH_EVERY_MS;
    const result = await this.detectWith(this.video, describe);
    const faces = result.face.filter((face) => face.score >= MIN_FACE_SCORE);
    const best = Math.max(0, ...result.face.map((face) => face.score));
    // Thresholds are in seconds; an episode ends after a grace of two detections (at least 1.5 s).
    const grace = Math.max(1500, 2000 / this.hz);
    episodes.set('no_face', faces.length === 0, 1 - best * 0.5, settings.no_face_seconds * 1000, grace);
    const second = faces.length > 1 ? Math.min(...faces.slice(0, 2).map((face) => face.score)) : 0;
    episodes.set('multiple_faces', faces.length > 1, second, settings.multiple_faces_seconds * 1000, grace);
    const angle = faces.length === 1 ? faces[0]?.rotation?.angle : undefined;
    const turn =
      angle === undefined
        ? 0
        : Math.max(Math.abs(angle.yaw) / YAW_LIMIT, Math.abs(angle.pitch) / PITCH_LIMIT);
    episodes.set(
      'looking_away',
      turn > 1,
      Math.min(1, 0.5 + (turn - 1)),
      settings.looking_away_seconds * 1000,
      grace,
    );
    if (describe) this.compare(faces, started);
  }

  /**
   * Compares the one face in view with the face photo. Two mismatches in a row open an advisory
   * face_mismatch episode; a match ends it. No face, or several: no comparison.
   */
  compare(faces: readonly HumanFace[], started: number): void {
    const embedding = faces.length === 1 ? faces[0]?.embedding : undefined;
    if (this.human === null || this.reference === null || embedding === undefined || embedding.length === 0)
      return;
    this.lastMatch = started;
    const similarity = this.human.match.similarity(this.reference, embedding);
    const threshold = this.options.settings.face_match_threshold;
    this.mismatches = similarity < threshold ? this.mismatches + 1 : 0;
    const confidence = threshold > 0 ? Math.min(1, Math.max(0.1, 1 - similarity / threshold + 0.5)) : 0.5;
    // Comparisons are MATCH_EVERY_MS apart: the signal holds until the next one says otherwise.
    this.options.episodes.set('face_mismatch', this.mismatches >= MISMATCHES_TO_FLAG, confidence, 0, 0);
  }

  /**
   * Keeps detection within BUDGET of one core: lowers the rate when the average detection takes more
   * than its share, and raises it back towards the exam's rate when there is room to spare.
   * `took` is the last detection's time in milliseconds.
   */
  adapt(took: number): void {
    this.lastMs = took;
    this.count += 1;
    this.total += took;
    if (this.count === 1) this.options.log(`first detection on ${this.backend}: ${Math.round(took)} ms`);
    if (this.count % LOG_EVERY === 0) {
      this.options.log(
        `${this.count} detections on ${this.backend}, ${Math.round(this.total / this.count)} ms each on average, at ${this.hz} Hz`,
      );
    }
    if (this.pinned) return;
    this.times.push(took);
    if (this.times.length > SAMPLES) this.times.shift();
    if (this.times.length < SAMPLES) return;
    const average = this.times.reduce((sum, time) => sum + time, 0) / this.times.length;
    // The fastest rate whose detections fit the budget, in steps of 0.5 Hz.
    const affordable = Math.floor(((BUDGET * 1000) / average) * 2) / 2;
    const wanted = Math.min(this.target, Math.max(MIN_HZ, affordable));
    if (wanted === MIN_HZ && average * MIN_HZ > BUDGET * 1000 * 2) {
      // Even the slowest rate would take over half a core: this device cannot afford face detection,
      // and the exam comes first. The server hears rate 0.
      this.options.log(
        `face detection stopped on ${this.backend}: ${Math.round(average)} ms a detection is too slow for this device`,
      );
      this.stop();
      this.options.reportRate(0);
      return;
    }
    if (wanted === this.hz) return;
    // Raise only with room to spare, so the rate does not swing between two values.
    if (wanted > this.hz && average * wanted > BUDGET * 1000 * 0.8) return;
    this.hz = wanted;
    this.times = [];
    this.options.reportRate(wanted);
  }
}
