/**
 * The speech detector's worker (docs/automated-flags.md): the Silero voice-activity model ("legacy",
 * the smallest) in onnxruntime-web's WebAssembly build, with vad-web's own frame logic (its
 * FrameProcessor: the thresholds, the short pauses it bridges, the misfires it drops), all loaded
 * from the service's hashed models path. The page's audio worklet cuts the microphone into frames;
 * this worker says when speech starts and stops. No sound leaves the device.
 */
import type { FromSpeech, ToSpeech } from './speech-protocol.ts';

interface OrtModule {
  env: { wasm: { numThreads: number; proxy: boolean; wasmPaths: string }; logLevel: string };
}

interface FrameEvent {
  msg: string;
}

interface FrameProcessor {
  process(frame: Float32Array, handle: (event: FrameEvent) => void): Promise<void>;
}

interface VadModule {
  NonRealTimeVAD: { new: (options: object) => Promise<{ frameProcessor: FrameProcessor }> };
}

/** The worker's global scope, where vad-web's bundle reads `ort` and leaves `vad`. */
interface SpeechScope {
  ort?: OrtModule;
  vad?: VadModule;
  postMessage(message: FromSpeech): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<ToSpeech>) => void): void;
}

const scope = globalThis as unknown as SpeechScope;

/** vad-web's event names (its `Message` enum). */
const SPEECH_START = 'SPEECH_START';
const SPEECH_END = 'SPEECH_END';
const VAD_MISFIRE = 'VAD_MISFIRE';

let processor: FrameProcessor | null = null;
/** Frames are judged one after another: the model carries its state from each to the next. */
let queue: Promise<void> = Promise.resolve();
let failures = 0;
/** Frames judged so far; the first one's time goes to the console, like the face detector's. */
let judged = 0;

function post(message: FromSpeech): void {
  scope.postMessage(message);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Loads onnxruntime-web and vad-web (a UMD bundle that takes `ort` from the global object) and the
 * model. vad-web's NonRealTimeVAD is used for its model and frame processor only, fed frame by frame.
 * Returns when ready; throws when anything cannot load.
 */
async function load(base: string): Promise<void> {
  const ort = (await import(/* @vite-ignore */ `${base}ort.wasm.min.mjs`)) as OrtModule;
  // One thread and no proxy worker: no SharedArrayBuffer (the room is not cross-origin isolated).
  ort.env.wasm.wasmPaths = base;
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  scope.ort = ort;
  await import(/* @vite-ignore */ `${base}vad.bundle.min.js`);
  const vad = scope.vad;
  if (vad === undefined) throw new Error('vad-web did not load');
  const detector = await vad.NonRealTimeVAD.new({ modelURL: `${base}silero_vad_legacy.onnx` });
  processor = detector.frameProcessor;
}

function handle(event: FrameEvent): void {
  if (event.msg === SPEECH_START) post({ kind: 'speaking', speaking: true });
  if (event.msg === SPEECH_END || event.msg === VAD_MISFIRE) post({ kind: 'speaking', speaking: false });
}

function judge(samples: Float32Array): void {
  const current = processor;
  if (current === null) return;
  queue = queue
    .then(async () => {
      const started = performance.now();
      await current.process(samples, handle);
      judged += 1;
      if (judged === 1)
        post({
          kind: 'log',
          message: `first speech frame judged: ${Math.round(performance.now() - started)} ms`,
        });
      failures = 0;
    })
    .catch((error: unknown) => {
      failures += 1;
      // One line for the first failure of a run, not one per frame.
      if (failures === 1) post({ kind: 'log', message: `speech frame failed: ${messageOf(error)}` });
    });
}

scope.addEventListener('message', (event) => {
  const message = event.data;
  if (message.kind === 'frame') {
    judge(message.samples);
    return;
  }
  load(message.base).then(
    () => post({ kind: 'loaded' }),
    (error: unknown) => post({ kind: 'load-failed', error: messageOf(error) }),
  );
});
