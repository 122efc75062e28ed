/**
 * The face detector's worker (docs/automated-flags.md): Human (@vladmandic/human) and its face models,
 * loaded from the service's hashed models path, run here so that detection never holds up the room's
 * page. The page sends camera frames as ImageBitmaps at the detector's rate and gets back, for each,
 * the faces found (score, head turn, FaceRes descriptor when asked for); it keeps the signal rules
 * and the rate (face.ts). Nothing here leaves the device.
 *
 * The worker's script is a built asset, served with its own policy (src/http/web-build.ts,
 * ASSET_POLICY): scripts and fetches from the service only, and WebAssembly may compile.
 */
import type { DetectionResult, FromDetector, HumanFace, ToDetector } from './detector-protocol.ts';

/** The part of Human's result read here. */
interface HumanResult {
  face: {
    score: number;
    embedding?: number[];
    rotation?: { angle: { yaw: number; pitch: number; roll: number } } | null;
  }[];
}

/** The part of a Human instance used here. */
interface HumanInstance {
  load(): Promise<void>;
  detect(input: ImageBitmap | OffscreenCanvas, config?: object): Promise<HumanResult>;
  tf: { getBackend(): string; env(): { set(flag: string, value: boolean): void } };
}

interface HumanModule {
  Human: new (config: object) => HumanInstance;
}

/** The worker's global scope, typed from what this file uses (web/tsconfig.json has the DOM library only). */
interface WorkerScope {
  postMessage(message: FromDetector, transfer?: Transferable[]): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<ToDetector>) => void): void;
}

const scope = globalThis as unknown as WorkerScope;

let human: HumanInstance | null = null;

function post(message: FromDetector): void {
  scope.postMessage(message);
}

function log(message: string): void {
  post({ kind: 'log', message });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Human's configuration: faces only. BlazeFace finds up to three faces, so a second one is seen;
 * FaceMesh gives the angles; FaceRes runs only when a comparison is asked for. No caching between
 * frames, so each detection judges the frame it is given.
 */
function humanConfig(base: string, backend: string): object {
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

/** Whether the service serves `address` (a HEAD request; false when that cannot be told). */
async function served(address: string): Promise<boolean> {
  try {
    return (await fetch(address, { method: 'HEAD' })).ok;
  } catch {
    return false;
  }
}

/** Whether WebGL here is drawn in software (SwiftShader, llvmpipe) or missing altogether. */
function softwareWebGl(): boolean {
  try {
    const gl =
      new OffscreenCanvas(1, 1).getContext('webgl2') ?? new OffscreenCanvas(1, 1).getContext('webgl');
    if (gl === null) return true;
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    const renderer = String(gl.getParameter(info === null ? gl.RENDERER : info.UNMASKED_RENDERER_WEBGL));
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    return /swiftshader|llvmpipe|softpipe|software|microsoft basic render/i.test(renderer);
  } catch {
    return true;
  }
}

/**
 * Loads Human and the models, the graphics card first, then the processor. Returns the backend
 * that runs; throws when none does.
 */
async function load(base: string): Promise<string> {
  const module = (await import(/* @vite-ignore */ `${base}human.esm.js`)) as HumanModule;
  // WebGL drawn in software is no graphics card: there the WebAssembly backend detects in some
  // 30-50 ms where software WebGL takes 2 s and plain JavaScript 3 s. The HEAD request lets a page
  // that does not serve the binary fall back to plain JavaScript.
  const wasm = await served(`${base}tfjs-backend-wasm-simd.wasm`);
  const backends = [...(softwareWebGl() ? [] : ['webgl']), ...(wasm ? ['wasm'] : []), 'cpu'];
  let lastError: unknown = new Error('no backend');
  for (const backend of backends) {
    try {
      const candidate = new module.Human(humanConfig(base, backend));
      // Threads would need cross-origin isolation, which the room lacks: the single-threaded SIMD
      // binary is the one served.
      if (backend === 'wasm') candidate.tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
      await candidate.load();
      // Human falls back on its own when a backend cannot start; what runs is what tf says.
      const running = candidate.tf.getBackend();
      if (running !== backend) throw new Error(`${backend} did not start`);
      human = candidate;
      await warmUp(running);
      return running;
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/**
 * One detection on a blank picture, so the first camera frames are not timed with the backend's
 * start-up (which would lower the rate for nothing). Human's own warm-up is not used: it reads its
 * sample face from a data: address, which the policy refuses, and then never returns.
 */
async function warmUp(backend: string): Promise<void> {
  const started = performance.now();
  try {
    const blank = new OffscreenCanvas(320, 240);
    blank.getContext('2d')?.fillRect(0, 0, blank.width, blank.height);
    await human?.detect(blank, { face: { description: { enabled: false } } });
    log(`warm-up on ${backend}: ${Math.round(performance.now() - started)} ms`);
  } catch (error) {
    log(`warm-up failed: ${messageOf(error)}`);
  }
}

/** The faces in `frame`, reduced to what the page reads (plain data, cheap to post). Closes the frame. */
async function detect(frame: ImageBitmap, describe: boolean): Promise<DetectionResult> {
  try {
    if (human === null) throw new Error('not loaded');
    const result = await human.detect(frame, { face: { description: { enabled: describe } } });
    const face = result.face.map((found): HumanFace => {
      const seen: HumanFace = { score: found.score };
      const angle = found.rotation?.angle;
      if (angle !== undefined)
        seen.rotation = { angle: { yaw: angle.yaw, pitch: angle.pitch, roll: angle.roll } };
      if (describe && found.embedding !== undefined) seen.embedding = Array.from(found.embedding);
      return seen;
    });
    return { face };
  } finally {
    frame.close();
  }
}

scope.addEventListener('message', (event) => {
  const message = event.data;
  if (message.kind === 'load') {
    load(message.base).then(
      (backend) => post({ kind: 'loaded', backend }),
      (error: unknown) => post({ kind: 'load-failed', error: messageOf(error) }),
    );
    return;
  }
  const { id } = message;
  detect(message.frame, message.describe).then(
    (result) => post({ kind: 'detected', id, result }),
    (error: unknown) => post({ kind: 'failed', id, error: messageOf(error) }),
  );
});
