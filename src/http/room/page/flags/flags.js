// @ts-check
/**
 * The automated flags in the room (docs/automated-flags.md): loaded by room.js only when the room
 * view says `automated_flags.enabled`, from the hashed path `automated_flags.models`. It runs the
 * face detector (face.js), the speech detector when the exam forbids talking (speech.js) and the
 * browser signals (signals.js), turns what they see into episodes (episodes.js), and reports each
 * episode with `POST /api/room/:token/flags` (at its start, and again with its end) and the
 * detection rate with `POST /api/room/:token/flags/rate`.
 *
 * Nothing here may disturb the exam: every failure is caught and logged to the console; a detector
 * that cannot load is left off (the server hears rate 0 once) and the rest goes on.
 */

import { Episodes } from './episodes.js';
import { FaceDetector } from './face.js';
import { BrowserSignals } from './signals.js';
import { SpeechDetector } from './speech.js';

/**
 * @typedef {import('./episodes.js').FlagReport} FlagReport
 * @typedef {import('./face.js').FlagSettings} FlagSettings
 * @typedef {{
 *   api: string, base: string, settings: FlagSettings, facePhoto: string | null,
 *   offsetNow: () => number | undefined, running: () => boolean
 * }} FlagsOptions
 * @typedef {{ path: string, body: object }} Pending
 */

/** How long a report waits before it is tried again after the connection failed. */
const RETRY_MS = 5000;

/** Console lines of the detectors (never shown to the candidate). */
function log(/** @type {string} */ message) {
  console.info(`[automated flags] ${message}`);
}

/**
 * Reports sent one at a time, in order; a report that could not reach the server is tried again,
 * one the server refused (the exam is over, a bad value) is dropped.
 */
class Reporter {
  /** @param {string} api @param {() => boolean} running */
  constructor(api, running) {
    this.api = api;
    this.running = running;
    /** @type {Pending[]} */
    this.queue = [];
    /** @type {Promise<void>} */
    this.sending = Promise.resolve();
    /** Every report answered by the server, in order (the smoke test and F4's tests read these). */
    /** @type {{ path: string, body: object, status: number }[]} */
    this.sent = [];
  }

  /** @param {string} path @param {object} body */
  send(path, body) {
    this.queue.push({ path, body });
    void this.flush();
  }

  flush() {
    this.sending = this.sending.then(() => this.drain()).catch(() => undefined);
    return this.sending;
  }

  async drain() {
    while (this.queue.length > 0 && this.running()) {
      const next = this.queue[0];
      if (next === undefined) return;
      let status;
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
  /** @param {FlagsOptions} options */
  constructor(options) {
    this.options = options;
    this.reporter = new Reporter(options.api, options.running);
    this.episodes = new Episodes(
      (report) => this.reporter.send('/flags', report),
      () => options.offsetNow() ?? 0,
    );
    this.signals = new BrowserSignals(this.episodes);
    /** @type {FaceDetector | null} */
    this.face = null;
    /** @type {SpeechDetector | null} */
    this.speech = null;
    /** @type {Promise<void> | null} */
    this.faceLoading = null;
    /** @type {Promise<void> | null} */
    this.speechLoading = null;
    this.rateReported = -1;
    this.stopped = false;
  }

  /** @param {number} hz */
  reportRate(hz) {
    if (hz === this.rateReported) return;
    this.rateReported = hz;
    this.reporter.send('/flags/rate', { hz });
  }

  start() {
    try {
      this.signals.start();
    } catch (error) {
      log(`browser signals failed: ${String(error)}`);
    }
  }

  /**
   * Uses the room's streams (again after a resumed recording): the camera for faces and, when the
   * exam forbids talking, for speech; the screen share for its end. Loads the models on first use.
   * @param {MediaStream | undefined} camera
   * @param {MediaStream | undefined} screen
   */
  useStreams(camera, screen) {
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

  /** @param {MediaStream} camera */
  async startFace(camera) {
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
          log(`face detection on ${face.backend} at ${face.hz} Hz`);
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

  /** @param {MediaStream} camera */
  async startSpeech(camera) {
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
   * Returns when sent or when the time is up; never throws.
   * @param {number} limitMs
   */
  async stop(limitMs) {
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
 * Starts the automated flags. Returns the running instance (the room hands it its streams and
 * stops it at the end); never throws.
 * @param {FlagsOptions} options
 */
export function startFlags(options) {
  const flags = new Flags(options);
  flags.start();
  return flags;
}
