/**
 * The automated flags in the room (docs/automated-flags.md), loaded by the room only when its view
 * says `automated_flags.enabled`. It runs the face detector (face.ts, whose models run in a Web
 * Worker), the speech detector when the exam forbids talking (speech.ts) and the browser signals
 * (signals.ts), turns what they see into episodes (episodes.ts), and reports each episode with
 * `POST /api/room/:token/flags` (at its start, and again with its end) and the detection rate with
 * `POST /api/room/:token/flags/rate`. The models themselves come from `base`, the view's
 * `automated_flags.models` (`/room/models/<hash>/`).
 *
 * Nothing here may disturb the exam: every failure is caught and written to the console; a detector
 * that cannot load stays off (the server hears rate 0 once) and the rest goes on.
 */
import { Episodes, type FlagReport } from './episodes.ts';
import { FaceDetector, type FlagSettings } from './face.ts';
import { BrowserSignals } from './signals.ts';
import { SpeechDetector } from './speech.ts';

export type { FlagReport, FlagSettings };

/** What the room hands the flags. */
export interface FlagsOptions {
  /** The room's API base, `/api/room/<token>`. */
  api: string;
  /** Where the models are served, `/room/models/<hash>/`. */
  base: string;
  settings: FlagSettings;
  /** The face photo taken in setup (a data: address), or null: then nothing is compared. */
  facePhoto: string | null;
  /** Seconds since the exam's start, now (undefined before the start is known). */
  offsetNow: () => number | undefined;
  /** Whether the exam still runs: reports stop when it does not. */
  running: () => boolean;
}

interface Pending {
  path: string;
  body: object;
}

/** How long a report waits before it is tried again after the connection failed. */
const RETRY_MS = 5000;

/** Console lines of the detectors (never shown to the candidate). */
function log(message: string): void {
  console.info(`[automated flags] ${message}`);
}

/**
 * Reports, sent one at a time and in order. One that could not reach the server (or got 429 or a
 * 5xx) is tried again later; one the server refused (the exam is over, a bad value) is dropped.
 */
class Reporter {
  private readonly api: string;
  private readonly running: () => boolean;
  private readonly queue: Pending[] = [];
  private sending: Promise<void> = Promise.resolve();
  /** Every report the server answered, in order, with its status (tests read these). */
  readonly sent: { path: string; body: object; status: number }[] = [];

  constructor(api: string, running: () => boolean) {
    this.api = api;
    this.running = running;
  }

  send(path: string, body: object): void {
    this.queue.push({ path, body });
    void this.flush();
  }

  flush(): Promise<void> {
    this.sending = this.sending.then(() => this.drain()).catch(() => undefined);
    return this.sending;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && this.running()) {
      const next = this.queue[0];
      if (next === undefined) return;
      let status: number;
      try {
        const answer = await fetch(`${this.api}${next.path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(next.body),
        });
        status = answer.status;
      } catch {
        status = 0;
      }
      if (status === 0 || status === 429 || status >= 500) {
        window.setTimeout(() => void this.flush(), RETRY_MS);
        return;
      }
      if (status >= 400) log(`the server refused ${next.path} (${status})`);
      this.sent.push({ ...next, status });
      this.queue.shift();
    }
  }
}

export class Flags {
  private readonly options: FlagsOptions;
  readonly reporter: Reporter;
  private readonly episodes: Episodes;
  private readonly signals: BrowserSignals;
  private face: FaceDetector | null = null;
  private speech: SpeechDetector | null = null;
  private faceLoading: Promise<void> | null = null;
  private speechLoading: Promise<void> | null = null;
  private rateReported = -1;
  private stopped = false;

  constructor(options: FlagsOptions) {
    this.options = options;
    this.reporter = new Reporter(options.api, options.running);
    this.episodes = new Episodes(
      (report) => this.reporter.send('/flags', report),
      () => options.offsetNow() ?? 0,
    );
    this.signals = new BrowserSignals(this.episodes);
  }

  private reportRate(hz: number): void {
    if (hz === this.rateReported) return;
    this.rateReported = hz;
    this.reporter.send('/flags/rate', { hz });
  }

  start(): void {
    try {
      this.signals.start();
    } catch (error) {
      log(`browser signals failed: ${String(error)}`);
    }
  }

  /**
   * Uses the room's streams (again after a resumed recording): the camera for faces and, when the
   * exam forbids talking, for speech; the screen share for its end. Loads the models on first use.
   */
  useStreams(camera: MediaStream | undefined, screen: MediaStream | undefined): void {
    if (this.stopped) return;
    try {
      this.signals.useStreams(camera, screen);
    } catch (error) {
      log(`browser signals failed: ${String(error)}`);
    }
    if (camera === undefined) return;
    if (camera.getVideoTracks().length > 0) void this.startFace(camera);
    if (this.options.settings.speech_forbidden && camera.getAudioTracks().length > 0)
      void this.startSpeech(camera);
  }

  private async startFace(camera: MediaStream): Promise<void> {
    const { base, settings, facePhoto } = this.options;
    try {
      if (this.faceLoading === null) {
        const face = new FaceDetector({
          base,
          settings,
          episodes: this.episodes,
          facePhoto,
          reportRate: (hz) => this.reportRate(hz),
          log,
        });
        this.face = face;
        this.faceLoading = face.load().then(() => {
          log(`face detection on ${face.backend} at ${face.hz} Hz (in a worker)`);
          this.reportRate(face.hz);
        });
      }
      await this.faceLoading;
      if (!this.stopped) this.face?.useStream(camera);
    } catch (error) {
      log(`face detection is off: ${String(error)}`);
      this.face = null;
      this.reportRate(0);
    }
  }

  private async startSpeech(camera: MediaStream): Promise<void> {
    const { base, settings } = this.options;
    try {
      if (this.speechLoading === null) {
        const speech = new SpeechDetector({
          base,
          seconds: settings.speech_seconds,
          episodes: this.episodes,
          log,
        });
        this.speech = speech;
        this.speechLoading = speech.load();
      }
      await this.speechLoading;
      if (!this.stopped) await this.speech?.useStream(camera);
    } catch (error) {
      log(`speech detection is off: ${String(error)}`);
      this.speech = null;
    }
  }

  /**
   * Stops every detector, ends the open episodes and sends what is waiting, within `limitMs`.
   * Returns when all is sent or the time is up; never throws.
   */
  async stop(limitMs: number): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    try {
      this.face?.stop();
      this.signals.stop();
      await this.speech?.stop();
      this.episodes.closeAll();
    } catch (error) {
      log(`stopping failed: ${String(error)}`);
    }
    await Promise.race([this.reporter.flush(), new Promise((resolve) => setTimeout(resolve, limitMs))]);
  }
}

/**
 * Starts the automated flags. Returns the running instance (the room hands it its streams with
 * useStreams and ends it with stop); never throws.
 */
export function startFlags(options: FlagsOptions): Flags {
  const flags = new Flags(options);
  flags.start();
  return flags;
}
