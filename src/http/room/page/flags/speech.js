// @ts-check
/**
 * Speech presence on the candidate's microphone, only in exams that forbid talking
 * (docs/automated-flags.md): vad-web's MicVAD runs the Silero voice-activity model (the "legacy"
 * one, the smallest) in onnxruntime-web's WebAssembly build, in an audio worklet fed from the
 * microphone track the room already records. Everything comes from the service's origin; no sound
 * leaves the page for analysis.
 */

/**
 * @typedef {import('./episodes.js').Episodes} Episodes
 * @typedef {{ env: { wasm: { numThreads: number, proxy: boolean }, logLevel: string } }} OrtModule
 * @typedef {{ start: () => Promise<void> | void, pause: () => Promise<void> | void,
 *   destroy: () => Promise<void> | void }} MicVad
 * @typedef {{ MicVAD: { new: (options: object) => Promise<MicVad> } }} VadModule
 */

/** Seconds of silence that end a speech episode: people pause between sentences. */
const SPEECH_END_GRACE_MS = 2000;

export class SpeechDetector {
  /**
   * @param {{ base: string, seconds: number, episodes: Episodes, log: (message: string) => void }} options
   */
  constructor(options) {
    this.options = options;
    /** @type {MicVad | null} */
    this.vad = null;
    /** @type {MediaStream | null} */
    this.stream = null;
    this.speaking = false;
    /** @type {number | undefined} */
    this.timer = undefined;
    this.stopped = false;
  }

  /**
   * Loads onnxruntime-web and vad-web (a UMD bundle that reads `ort` from the global object and
   * puts `vad` there). Returns when loaded; throws when they cannot load.
   */
  async load() {
    const { base } = this.options;
    const ort = await /** @type {Promise<OrtModule>} */ (import(`${base}ort.wasm.min.mjs`));
    const global = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (globalThis));
    global.ort = ort;
    await import(`${base}vad.bundle.min.js`);
    if (global.vad === undefined) throw new Error('vad-web did not load');
  }

  /**
   * Listens to the microphone of `stream` (a copy of its audio track, so stopping the detector
   * never stops the recording). Returns once listening; throws when the model cannot start.
   * @param {MediaStream} stream
   */
  async useStream(stream) {
    if (this.stopped || this.stream === stream || stream.getAudioTracks().length === 0) return;
    this.stream = stream;
    await this.vad?.destroy();
    const global = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (globalThis));
    const vad = /** @type {VadModule} */ (global.vad);
    const { base, episodes, seconds } = this.options;
    const tracks = stream.getAudioTracks().map((track) => track.clone());
    this.vad = await vad.MicVAD.new({
      model: 'legacy',
      baseAssetPath: base,
      onnxWASMBasePath: base,
      /** @param {OrtModule} ort */
      ortConfig: (ort) => {
        // One thread, no proxy worker: no SharedArrayBuffer, no worker script to allow.
        ort.env.wasm.numThreads = 1;
        ort.env.wasm.proxy = false;
        ort.env.logLevel = 'error';
      },
      getStream: () => Promise.resolve(new MediaStream(tracks)),
      pauseStream: () => Promise.resolve(),
      resumeStream: (/** @type {MediaStream} */ paused) => Promise.resolve(paused),
      startOnLoad: true,
      onSpeechStart: () => {
        this.speaking = true;
      },
      onSpeechEnd: () => {
        this.speaking = false;
      },
      onVADMisfire: () => {
        this.speaking = false;
      },
    });
    await this.vad.start();
    // Speech events come when they come; the episode's threshold is judged twice a second.
    window.clearInterval(this.timer);
    this.timer = window.setInterval(() => {
      episodes.set('speech', this.speaking, 0.8, seconds * 1000, SPEECH_END_GRACE_MS);
    }, 500);
  }

  async stop() {
    this.stopped = true;
    window.clearInterval(this.timer);
    await this.vad?.destroy();
    this.vad = null;
  }
}
