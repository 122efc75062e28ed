// @ts-check
/**
 * Face analysis on the candidate's camera (docs/automated-flags.md), on this device only: Human
 * (@vladmandic/human: TensorFlow.js on a real graphics card through WebGL, else its WebAssembly
 * backend, else plain JavaScript) runs BlazeFace to find and count faces and FaceMesh for the head's turn, at the exam's
 * `detection_hz`. Every tenth second or so (MATCH_EVERY_MS) it also computes the FaceRes descriptor
 * and compares it with the face photo taken in setup (advisory only). The models come from the
 * service's own origin (`/room/models/<hash>/`); no frame leaves the page.
 *
 * The rate adapts: each detection is timed, and when detections would take more than a quarter of
 * one processor core (BUDGET) the rate drops (not below MIN_HZ) and the server is told; it goes back
 * up when the device keeps up again.
 */

/**
 * @typedef {import('./episodes.js').Episodes} Episodes
 * @typedef {{ yaw: number, pitch: number, roll: number }} Angles
 * @typedef {{ score: number, boxScore?: number, embedding?: number[],
 *   rotation?: { angle: Angles } | null }} HumanFace
 * @typedef {{ face: HumanFace[], error?: string | null }} HumanResult
 * @typedef {{
 *   load: () => Promise<void>,
 *   detect: (input: HTMLVideoElement | HTMLImageElement | HTMLCanvasElement | ImageBitmap, config?: object) => Promise<HumanResult>,
 *   match: { similarity: (a: number[], b: number[]) => number },
 *   tf: { getBackend: () => string, env: () => { set: (flag: string, value: boolean) => void } },
 *   config: { backend: string }
 * }} HumanInstance
 * @typedef {{ Human: new (config: object) => HumanInstance }} HumanModule
 * @typedef {{
 *   no_face_seconds: number, looking_away_seconds: number, multiple_faces_seconds: number,
 *   speech_forbidden: boolean, speech_seconds: number, face_match: boolean,
 *   face_match_threshold: number, detection_hz: number
 * }} FlagSettings
 */

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

/**
 * Human's configuration: faces only; BlazeFace (up to three faces, so a second one is seen),
 * FaceMesh for the angles, FaceRes only when asked for a comparison; no caching between frames,
 * so each detection looks at the frame in front of it.
 * @param {string} base the models' base path
 * @param {string} backend
 */
function humanConfig(base, backend) {
  return {
    modelBasePath: base,
    backend,
    wasmPath: base,
    wasmPlatformFetch: false,
    debug: false,
    async: true,
    warmup: 'none',
    cacheSensitivity: 0,
    skipAllowed: false,
    filter: { enabled: false },
    gesture: { enabled: false },
    body: { enabled: false },
    hand: { enabled: false },
    object: { enabled: false },
    segmentation: { enabled: false },
    face: {
      enabled: true,
      detector: {
        modelPath: 'blazeface.json',
        rotation: false,
        maxDetected: 3,
        minConfidence: 0.3,
        skipFrames: 0,
        skipTime: 0,
        return: false,
      },
      mesh: { enabled: true, modelPath: 'facemesh.json' },
      iris: { enabled: false },
      attention: { enabled: false },
      emotion: { enabled: false },
      antispoof: { enabled: false },
      liveness: { enabled: false },
      gear: { enabled: false },
      description: { enabled: false, modelPath: 'faceres.json', skipFrames: 0, skipTime: 0 },
    },
  };
}

/** Whether the service serves `address` (a HEAD request; false when it cannot tell). */
async function served(/** @type {string} */ address) {
  try {
    return (await fetch(address, { method: 'HEAD' })).ok;
  } catch {
    return false;
  }
}

/** Whether the browser's WebGL is drawn in software (SwiftShader, llvmpipe) or missing. */
export function softwareWebGl() {
  try {
    const gl =
      document.createElement('canvas').getContext('webgl2') ??
      document.createElement('canvas').getContext('webgl');
    if (gl === null) return true;
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    const renderer = String(gl.getParameter(info === null ? gl.RENDERER : info.UNMASKED_RENDERER_WEBGL));
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    return /swiftshader|llvmpipe|softpipe|software|microsoft basic render/i.test(renderer);
  } catch {
    return true;
  }
}

/** How the face detector reports to the room. */
/**
 * @typedef {{
 *   base: string, settings: FlagSettings, episodes: Episodes, facePhoto: string | null,
 *   reportRate: (hz: number) => void, log: (message: string) => void
 * }} FaceOptions
 */

/**
 * Whether a browser test pinned the detection rate (`globalThis.invigilTestHooks = { pinFaceRate:
 * true }`, set before the page loads). A pinned detector neither slows down nor stops on a loaded
 * machine, so a test's outcome does not depend on the machine's speed; the `flags-cost` benchmark
 * measures the speed instead. Real rooms never set it.
 * @returns {boolean}
 */
function pinnedByTest() {
  const scope = /** @type {{ invigilTestHooks?: { pinFaceRate?: unknown } }} */ (
    /** @type {unknown} */ (globalThis)
  );
  return scope.invigilTestHooks?.pinFaceRate === true;
}

export class FaceDetector {
  /** @param {FaceOptions} options */
  constructor(options) {
    this.options = options;
    /** @type {HumanInstance | null} */
    this.human = null;
    this.video = document.createElement('video');
    this.video.muted = true;
    this.video.playsInline = true;
    /** @type {MediaStream | null} */
    this.stream = null;
    this.target = Math.max(MIN_HZ, options.settings.detection_hz);
    this.hz = this.target;
    this.pinned = pinnedByTest();
    /** @type {number[]} */
    this.times = [];
    /** The last detection's time in milliseconds (what the tests and the benchmark read). */
    this.lastMs = 0;
    /** @type {number[] | null} */
    this.reference = null;
    this.lastMatch = 0;
    this.mismatches = 0;
    this.stopped = false;
    this.failures = 0;
    /** @type {number | undefined} */
    this.timer = undefined;
    this.backend = '';
    /** Detections so far and their total time, for the console line every LOG_EVERY detections. */
    this.count = 0;
    this.total = 0;
  }

  /**
   * Loads Human and the models (trying the graphics card first, then the processor) and the face
   * photo's descriptor. Returns when it can detect; throws when it cannot.
   */
  async load() {
    const { base } = this.options;
    const module = await /** @type {Promise<HumanModule>} */ (import(`${base}human.esm.js`));
    /** @type {Error | undefined} */
    let lastError;
    // A graphics card first. WebGL drawn in software (no card, or one the browser will not use) is
    // no card: there the WebAssembly backend detects in some 30-50 ms where software WebGL takes 2 s
    // and plain JavaScript 3 s (docs/automated-flags.md). The HEAD request lets a page that does
    // not serve the binary (a test harness) fall back to plain JavaScript.
    const wasm = await served(`${base}tfjs-backend-wasm-simd.wasm`);
    const backends = [...(softwareWebGl() ? [] : ['webgl']), ...(wasm ? ['wasm'] : []), 'cpu'];
    for (const backend of backends) {
      try {
        const human = new module.Human(humanConfig(base, backend));
        // Threads would need cross-origin isolation, which the room does not have: the
        // single-threaded SIMD binary is the one served.
        if (backend === 'wasm') human.tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
        await human.load();
        // Human falls back by itself when a backend cannot start; what runs is what tf says.
        this.backend = human.tf.getBackend();
        if (this.backend !== backend) throw new Error(`${backend} did not start`);
        this.human = human;
        break;
      } catch (error) {
        lastError = error instanceof Error ? error : new Error(String(error));
      }
    }
    if (this.human === null) throw lastError ?? new Error('no backend');
    // One detection on a blank picture, so the first camera frames are not timed with the
    // backend's start-up (which would lower the rate for nothing). Not Human's own warm-up: it
    // fetches its sample face from a data: address, which the room's CSP refuses, and then never
    // returns.
    const warming = performance.now();
    try {
      const blank = document.createElement('canvas');
      blank.width = 320;
      blank.height = 240;
      blank.getContext('2d')?.fillRect(0, 0, blank.width, blank.height);
      await this.detectWith(blank, false);
      this.options.log(`warm-up on ${this.backend}: ${Math.round(performance.now() - warming)} ms`);
    } catch (error) {
      this.options.log(`warm-up failed: ${String(error)}`);
    }
    if (this.options.settings.face_match && this.options.facePhoto !== null) {
      try {
        this.reference = await this.descriptorOf(this.options.facePhoto);
      } catch (error) {
        this.options.log(`face photo not usable for matching: ${String(error)}`);
      }
    }
  }

  /**
   * The FaceRes descriptor of the one face in a photo. Returns it; throws when the photo shows no
   * face.
   * @param {string} address the photo (a data: or blob: address)
   */
  async descriptorOf(address) {
    const image = new Image();
    image.src = address;
    await image.decode();
    const result = await this.detectWith(image, true);
    const face = result.face.filter((found) => found.score >= MIN_FACE_SCORE)[0];
    if (face?.embedding === undefined || face.embedding.length === 0) throw new Error('no face in the photo');
    return face.embedding;
  }

  /**
   * @param {HTMLVideoElement | HTMLImageElement | HTMLCanvasElement} input
   * @param {boolean} describe whether to compute FaceRes descriptors too
   */
  detectWith(input, describe) {
    if (this.human === null) throw new Error('not loaded');
    return this.human.detect(input, { face: { description: { enabled: describe } } });
  }

  /**
   * Looks at `stream`'s camera picture from now on (a resumed recording brings a new stream).
   * @param {MediaStream} stream
   */
  useStream(stream) {
    if (this.stream === stream) return;
    this.stream = stream;
    this.video.srcObject = new MediaStream(stream.getVideoTracks());
    void this.video.play().catch(() => undefined);
    if (this.timer === undefined && !this.stopped) this.schedule(0);
  }

  stop() {
    this.stopped = true;
    window.clearTimeout(this.timer);
    this.timer = undefined;
    this.video.srcObject = null;
  }

  /** @param {number} delay */
  schedule(delay) {
    if (this.stopped) return;
    this.timer = window.setTimeout(() => void this.tick(), delay);
  }

  async tick() {
    const started = performance.now();
    if (this.video.readyState >= 2 && this.video.videoWidth > 0) {
      try {
        await this.detectOnce(started);
        this.failures = 0;
      } catch (error) {
        this.failures += 1;
        this.options.log(`face detection failed: ${String(error)}`);
        if (this.failures >= 5) {
          // Something is broken for good: stop looking rather than keep failing; the server hears rate 0.
          this.stop();
          this.options.reportRate(0);
          return;
        }
      }
      this.adapt(performance.now() - started);
    }
    this.schedule(Math.max(0, 1000 / this.hz - (performance.now() - started)));
  }

  /** @param {number} started */
  async detectOnce(started) {
    const { settings, episodes } = this.options;
    const describe = this.reference !== null && started - this.lastMatch >= MATCH_EVERY_MS;
    const result = await this.detectWith(this.video, describe);
    const faces = result.face.filter((face) => face.score >= MIN_FACE_SCORE);
    const best = Math.max(0, ...result.face.map((face) => face.score));
    // Thresholds are in seconds; episodes end after a grace of two detections (at least 1.5 s).
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
   * face_mismatch episode; a match ends it. No face or several faces: no comparison.
   * @param {HumanFace[]} faces
   * @param {number} started
   */
  compare(faces, started) {
    const embedding = faces.length === 1 ? faces[0]?.embedding : undefined;
    if (this.human === null || this.reference === null || embedding === undefined || embedding.length === 0)
      return;
    this.lastMatch = started;
    const similarity = this.human.match.similarity(this.reference, embedding);
    const threshold = this.options.settings.face_match_threshold;
    const mismatch = similarity < threshold;
    this.mismatches = mismatch ? this.mismatches + 1 : 0;
    const confidence = threshold > 0 ? Math.min(1, Math.max(0.1, 1 - similarity / threshold + 0.5)) : 0.5;
    // Comparisons are MATCH_EVERY_MS apart: the signal holds until the next one says otherwise.
    this.options.episodes.set('face_mismatch', this.mismatches >= MISMATCHES_TO_FLAG, confidence, 0, 0);
  }

  /**
   * Keeps detection within BUDGET of one core: lowers the rate when the average detection takes
   * more than its share, raises it back towards the exam's rate when there is room to spare.
   * @param {number} took milliseconds of the last detection
   */
  adapt(took) {
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
    // The fastest rate whose detections fit in the budget, in steps of 0.5 Hz.
    const affordable = Math.floor(((BUDGET * 1000) / average) * 2) / 2;
    const wanted = Math.min(this.target, Math.max(MIN_HZ, affordable));
    if (wanted === MIN_HZ && average * MIN_HZ > BUDGET * 1000 * 2) {
      // Even the slowest rate would take over half a core: this device cannot afford face
      // detection, and the exam comes first. The server hears rate 0.
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
