/**
 * Speech presence on the candidate's microphone, only in exams that forbid talking
 * (docs/automated-flags.md). vad-web's audio worklet cuts a copy of the microphone track the room
 * already records into 16 kHz frames; the page passes each frame on to a Web Worker
 * (speech.worker.ts), where the Silero voice-activity model runs in onnxruntime-web's WebAssembly
 * build behind vad-web's frame logic and says when speech starts and stops. Everything comes from
 * the service's origin; no sound leaves the device for analysis.
 */
import type { Episodes } from './episodes.ts';
import { FRAME_SAMPLES, type FromSpeech, type ToSpeech } from './speech-protocol.ts';

/** Silence that ends a speech episode: people pause between sentences. */
const SPEECH_END_GRACE_MS = 2000;
/** The name vad-web's worklet registers its processor under. */
const WORKLET_PROCESSOR = 'vad-helper-worklet';
/** What vad-web's worklet calls a frame message, and the message that makes it stop. */
const AUDIO_FRAME = 'AUDIO_FRAME';
const SPEECH_STOP = 'SPEECH_STOP';

export interface SpeechOptions {
  base: string;
  seconds: number;
  episodes: Pick<Episodes, 'set'>;
  log: (message: string) => void;
}

/** The audio path of one stream: the tracks copied for it and the nodes fed from them. */
interface Listening {
  tracks: MediaStreamTrack[];
  source: MediaStreamAudioSourceNode;
  node: AudioWorkletNode;
}

export class SpeechDetector {
  private readonly options: SpeechOptions;
  private worker: Worker | null = null;
  private context: AudioContext | null = null;
  private listening: Listening | null = null;
  private stream: MediaStream | null = null;
  private speaking = false;
  private timer: number | undefined = undefined;
  private stopped = false;

  constructor(options: SpeechOptions) {
    this.options = options;
  }

  /**
   * Starts the worker and loads the model there (onnxruntime-web, vad-web and the Silero model).
   * Returns when loaded; throws when they cannot load.
   */
  async load(): Promise<void> {
    const worker = new Worker(new URL('./speech.worker.ts', import.meta.url), { type: 'module' });
    this.worker = worker;
    const send = (message: ToSpeech, transfer: Transferable[] = []) => worker.postMessage(message, transfer);
    await new Promise<void>((resolve, reject) => {
      worker.addEventListener('error', (event) => {
        event.preventDefault();
        reject(new Error(`the speech worker failed: ${event.message || 'it did not start'}`));
      });
      worker.addEventListener('message', (event: MessageEvent<FromSpeech>) => {
        const message = event.data;
        if (message.kind === 'loaded') resolve();
        else if (message.kind === 'load-failed') reject(new Error(message.error));
        else if (message.kind === 'log') this.options.log(message.message);
        else this.speaking = message.speaking;
      });
      send({ kind: 'load', base: this.options.base });
    }).catch((error: unknown) => {
      worker.terminate();
      this.worker = null;
      throw error;
    });
  }

  /**
   * Listens to the microphone of `stream`, through a copy of its audio track so that stopping the
   * detector never stops the recording. Returns once listening; throws when the audio cannot start.
   */
  async useStream(stream: MediaStream): Promise<void> {
    const worker = this.worker;
    if (this.stopped || worker === null || this.stream === stream || stream.getAudioTracks().length === 0)
      return;
    this.stream = stream;
    this.unplug();
    if (this.context === null) {
      const context = new AudioContext();
      this.context = context;
      await context.audioWorklet.addModule(`${this.options.base}vad.worklet.bundle.min.js`);
    }
    const context = this.context;
    const tracks = stream.getAudioTracks().map((track) => track.clone());
    const source = context.createMediaStreamSource(new MediaStream(tracks));
    const node = new AudioWorkletNode(context, WORKLET_PROCESSOR, {
      processorOptions: { frameSamples: FRAME_SAMPLES },
    });
    node.port.onmessage = (event: MessageEvent<unknown>) => {
      const data = event.data;
      if (typeof data !== 'object' || data === null || !('message' in data) || data.message !== AUDIO_FRAME)
        return;
      if (!('data' in data) || !(data.data instanceof ArrayBuffer)) return;
      const samples = new Float32Array(data.data);
      const message: ToSpeech = { kind: 'frame', samples };
      worker.postMessage(message, [samples.buffer]);
    };
    source.connect(node);
    this.listening = { tracks, source, node };
    if (context.state === 'suspended') await context.resume();
    this.options.log('speech detection on the microphone (the model runs in a worker)');
    // Speech starts and stops when it does; the episode's threshold is judged twice a second.
    window.clearInterval(this.timer);
    const { episodes, seconds } = this.options;
    this.timer = window.setInterval(() => {
      episodes.set('speech', this.speaking, 0.8, seconds * 1000, SPEECH_END_GRACE_MS);
    }, 500);
  }

  /** Takes the current stream's audio path apart and stops its copied tracks. */
  private unplug(): void {
    const listening = this.listening;
    if (listening === null) return;
    this.listening = null;
    listening.node.port.postMessage(SPEECH_STOP);
    listening.node.port.onmessage = null;
    listening.source.disconnect();
    listening.node.disconnect();
    for (const track of listening.tracks) track.stop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    window.clearInterval(this.timer);
    this.unplug();
    this.worker?.terminate();
    this.worker = null;
    this.speaking = false;
    await this.context?.close();
    this.context = null;
  }
}
