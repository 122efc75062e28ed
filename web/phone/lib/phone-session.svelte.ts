/**
 * The phone as a second camera (docs/room.md "The phone"): the page's state and everything it
 * does, apart from drawing. It speaks only to the phone API and follows the session as the server
 * reports it (each heartbeat answers the phone's view):
 *
 *   setup (choose a camera, frame the view, the check) → exam (recording) → finished
 *
 * or `gone` when the server no longer knows the link. Recording starts by itself when the student
 * starts the exam on the computer. Chunks wait in a queue that survives a dropped connection; a
 * reopened page resumes the numbering where the server says (`next_sequence`). The server is the
 * judge of every move; the page shows what it says.
 */
import { ApiError, wakeableSleeps } from '../../shared/http.ts';
import { PageMessages } from '../../shared/page-messages.svelte.ts';
import { ChunkQueue } from '../../shared/recording/chunk-queue.ts';
import { Recorder, recordClip, TYPES_VIDEO_ONLY } from '../../shared/recording/recorder.ts';
import { CAMERA, EXAM, FINISHED, PAGE, SETUP, type LiveState } from '../words.ts';
import { PhoneApi, type PhoneView } from './api.ts';
import { cameraAdvice, facingMemory, openCamera, type Facing } from './camera.ts';
import { deviceDescription } from './device.ts';
import { ScreenWake, watchBattery, type BatteryState, type WakeState } from './keep-awake.ts';
import { loadPhoneLive, type PhoneLive } from './live.ts';

/** Milliseconds of recording per uploaded chunk (as the room's). */
const CHUNK_MS = 4000;
/** The phone's recording bitrate: a side view, sharp enough to read a screen at a metre. */
const BITS_PER_SECOND = 600_000;
/** How often the page tells the server it is still there (and reads the session's status back). */
const HEARTBEAT_MS = 5000;
/**
 * How often it does so before the exam, so that recording starts within a moment of the start on
 * the computer (the phone hears of it only then; a wait of 5 s would be a recording gap).
 */
const WAITING_HEARTBEAT_MS = 2000;
/** How long the camera check films. */
export const CHECK_CLIP_MS = 2000;
/** How long finishing waits for queued chunks before it gives up on them. */
const FLUSH_LIMIT_MS = 30_000;

export type Stage = 'loading' | 'setup' | 'exam' | 'finished' | 'gone';

/** The check's result line: its words and whether it passed or failed. */
export interface CheckLine {
  readonly text: string;
  readonly outcome: '' | 'succeeded' | 'failed';
}

export class PhoneSession {
  readonly token: string;
  readonly messages = new PageMessages();
  readonly api: PhoneApi;

  view = $state.raw<PhoneView | undefined>();
  stage = $state<Stage>('loading');
  /** False for the first stage shown: its heading takes the focus only when the stage changes. */
  focusStage = $state(false);
  /** The loading line steps aside once the first hello failed (the alert says why). */
  loadingShown = $state(true);
  stream = $state.raw<MediaStream | undefined>();
  facing = $state<Facing | undefined>();
  /** A recorder exists (filming, or about to). */
  recorderOn = $state(false);
  /** The recorder films. */
  recording = $state(false);
  /** The queue's next sequence (the server's count) and the chunks waiting. */
  queueSequence = $state<number | null>(null);
  waiting = $state(0);
  reachable = $state(true);
  wakeState = $state<WakeState>('unknown');
  battery = $state.raw<{ level: number; charging: boolean } | null>(null);
  liveState = $state<LiveState | undefined>();
  check = $state.raw<CheckLine>({ text: '', outcome: '' });
  cameraTrouble = $state('');
  goneText = $state('');
  arrival = $state('');
  secondsLeft = $state<number | null>(null);
  /** The actions running, by name: their buttons are marked busy. */
  busy = $state<Record<string, boolean>>({});

  /** performance.now() when `view` arrived, so the countdown runs on the server's figure. */
  #viewAt = 0;
  #recorder: Recorder | undefined;
  #heartbeatTimer: number | undefined;
  #tickTimer: number | undefined;
  #leaving = false;
  /**
   * True once the server refused a chunk because the exam is over (its time ran out) before the
   * session's status says so; the page then shows the end as well.
   */
  #refusedAsFinished = false;
  #live: PhoneLive | undefined;
  #liveLoading = false;
  readonly #sleeps = wakeableSleeps();
  readonly #queue: ChunkQueue;
  readonly #wake = new ScreenWake((state) => (this.wakeState = state));
  readonly #facingMemory;

  constructor(token: string) {
    this.token = token;
    this.#facingMemory = facingMemory(token);
    this.api = new PhoneApi({
      token,
      onReachable: (reachable) => {
        if (reachable && !this.reachable) this.#sleeps.wakeAll();
        this.reachable = reachable;
      },
      onGone: (message) => this.#gone(message),
    });
    // One queue for the page, whatever recorder fills it: a camera switched or turned on again
    // goes on with the numbering unbroken.
    this.#queue = new ChunkQueue({
      source: 'mobile',
      upload: (form) => this.api.uploadChunk(form),
      pause: this.#sleeps.pause,
      refused: 'drop',
      onChange: () => {
        this.queueSequence = this.#queue.sequence;
        this.waiting = this.#queue.waiting;
      },
      onClosed: (error) => {
        if (/finished/i.test(error.message)) {
          this.#refusedAsFinished = true;
          this.#render();
        } else void this.heartbeat();
      },
    });
  }

  /** Recording parts the server holds from this phone. */
  get sent(): number {
    return this.queueSequence ?? this.view?.mobile.chunks_count ?? 0;
  }

  /** Starts the page: says hello, follows the battery, the connection and the student leaving. */
  start(): void {
    this.#watchLeaving();
    window.addEventListener('online', () => {
      this.#sleeps.wakeAll();
      void this.heartbeat();
    });
    void watchBattery((battery) => this.#readBattery(battery)).then((battery) => {
      if (battery !== null) this.#readBattery(battery);
    });
    void this.#open();
  }

  /**
   * Runs a student's action: clears the old error, shows a new one, keeps the button from being
   * pressed twice (marked busy, so the keyboard focus stays on it).
   */
  async act(name: string, action: () => Promise<void>): Promise<void> {
    if (this.busy[name] === true) return;
    this.messages.clearError();
    this.busy[name] = true;
    try {
      await action();
    } catch (error) {
      this.messages.showError(error instanceof Error ? error.message : String(error));
    } finally {
      this.busy[name] = false;
    }
  }

  /** True once nothing more is to be done here: the exam is finished, or the link no longer works. */
  get over(): boolean {
    return this.stage === 'finished' || this.stage === 'gone';
  }

  // ---- The server's view ----------------------------------------------------------------------

  async #open(): Promise<void> {
    try {
      this.#accept(await this.api.hello({ device: await deviceDescription() }));
    } catch (error) {
      if (this.stage === 'gone') return;
      this.loadingShown = false;
      this.messages.showError(error instanceof Error ? error.message : String(error));
      this.#heartbeatTimer = window.setTimeout(() => void this.#open(), HEARTBEAT_MS);
      return;
    }
    this.messages.clearError();
    this.#heartbeatTimer = window.setTimeout(() => void this.heartbeat(), this.#heartbeatEvery());
    // A reopened page turns the camera it used on again; the browser remembers the permission.
    const saved = this.#facingMemory.recall();
    if (saved !== undefined && this.stream === undefined && !this.over) await this.startCamera(saved);
  }

  /** Takes the phone's view from the server and shows the stage the session's status calls for. */
  #accept(answer: PhoneView): void {
    if (this.stage === 'gone') return;
    this.view = answer;
    this.#viewAt = performance.now();
    this.#render();
  }

  #render(): void {
    const view = this.view;
    if (view === undefined) return;
    document.title = PAGE.title(view.exam.name);
    const status = view.session.status;
    const stage: Stage =
      status === 'exam_finished' || this.#refusedAsFinished
        ? 'finished'
        : status === 'exam_started'
          ? 'exam'
          : 'setup';
    if (stage !== this.stage) this.#show(stage);
    if (stage === 'setup') this.#updateCheck();
    if (stage === 'exam') this.#tick();
  }

  /** Shows `stage`, and starts what it runs. */
  #show(stage: Stage): void {
    this.focusStage = this.stage !== 'loading';
    this.stage = stage;
    window.clearInterval(this.#tickTimer);
    if (stage === 'exam') {
      this.#tickTimer = window.setInterval(() => this.#tick(), 1000);
      this.#startRecording();
    }
    if (stage === 'finished') void this.#finish();
  }

  /** The check's line, as the server's view says (a failure shown by the check itself stays until then). */
  #updateCheck(): void {
    const check = this.view?.mobile.check;
    if (check === 'succeeded') this.check = { text: SETUP.passed, outcome: 'succeeded' };
    else if (check === 'failed') this.check = { text: SETUP.failedTryAgain, outcome: '' };
    else this.check = { text: this.check.text, outcome: '' };
  }

  /** Seconds left in the exam by the server's figure, run on since the view arrived; null when untimed. */
  #tick(): void {
    const left = this.view?.session.time_left_seconds;
    this.secondsLeft =
      left === null || left === undefined
        ? null
        : Math.max(0, Math.floor(left - (performance.now() - this.#viewAt) / 1000));
  }

  /** The pause before the next heartbeat: shorter while waiting for the start. */
  #heartbeatEvery(): number {
    return this.stage === 'setup' ? WAITING_HEARTBEAT_MS : HEARTBEAT_MS;
  }

  /** Tells the server the phone is still there, and shows the view it answers. Schedules the next. */
  async heartbeat(): Promise<void> {
    window.clearTimeout(this.#heartbeatTimer);
    if (this.over) return;
    try {
      this.#accept(
        await this.api.heartbeat({
          battery_level: this.battery === null ? null : this.battery.level,
          charging: this.battery === null ? null : this.battery.charging,
          visible: document.visibilityState === 'visible',
          // Whether this page films now: a phone that only waits reads as paired, not streaming.
          streaming: this.recording,
        }),
      );
    } catch (error) {
      // A finished session refuses the heartbeat: the view says so.
      if (error instanceof ApiError && error.status === 409) {
        await this.api
          .view('GET', '')
          .then((view) => this.#accept(view))
          .catch(() => undefined);
      }
    }
    if (this.over) return;
    // One timer only, even when a heartbeat of a visibility change ran meanwhile.
    window.clearTimeout(this.#heartbeatTimer);
    this.#heartbeatTimer = window.setTimeout(() => void this.heartbeat(), this.#heartbeatEvery());
  }

  // ---- The camera ------------------------------------------------------------------------------

  /**
   * Turns on the camera facing `which`, shows it, keeps the screen on, and records at once when the
   * exam is running. Throws nothing: a refusal is shown with advice, the buttons stay for another try.
   */
  async startCamera(which: Facing): Promise<void> {
    const running = this.stream?.getVideoTracks().some((track) => track.readyState === 'live') ?? false;
    if (running && this.facing === which) return;
    this.cameraTrouble = '';
    // Another camera during the exam: the recording goes on from the new one, numbering unbroken.
    await this.#stopRecorder();
    this.#stopCamera();
    let stream: MediaStream;
    try {
      stream = await openCamera(which);
    } catch (error) {
      this.cameraTrouble = cameraAdvice(error);
      return;
    }
    this.stream = stream;
    this.facing = which;
    this.#facingMemory.keep(which);
    for (const track of stream.getVideoTracks()) {
      track.addEventListener('ended', () => void this.#cameraEnded(track));
    }
    this.messages.announce(which === 'user' ? CAMERA.frontOn : CAMERA.backOn);
    void this.#wake.request();
    this.#startRecording();
    void this.#startLive();
  }

  /** The camera was taken away (another app, the system): stop recording and ask for it again. */
  async #cameraEnded(track: MediaStreamTrack): Promise<void> {
    if (this.stream === undefined || !this.stream.getTracks().includes(track)) return;
    this.#stopCamera();
    this.messages.showError(CAMERA.stopped);
    // Its last chunk still goes out; a recorder of the camera turned on again numbers on after it.
    await this.#stopRecorder();
  }

  #stopCamera(): void {
    this.stream?.getTracks().forEach((track) => track.stop());
    this.stream = undefined;
    void this.#wake.release();
  }

  /** Films CHECK_CLIP_MS of the camera and sends it as the check; the answer says whether it passed. */
  async runCheck(): Promise<void> {
    const stream = this.stream;
    if (stream === undefined) throw new Error(SETUP.chooseFirst);
    this.check = { text: SETUP.filming(CHECK_CLIP_MS / 1000), outcome: '' };
    const clip = await recordClip(stream, CHECK_CLIP_MS, TYPES_VIDEO_ONLY);
    this.check = { text: SETUP.sending, outcome: '' };
    const form = new FormData();
    form.append('file', clip, clip.type.includes('mp4') ? 'check.mp4' : 'check.webm');
    try {
      this.#accept(await this.api.view('POST', '/check', form));
    } catch (error) {
      this.check = { text: SETUP.failed, outcome: 'failed' };
      throw error;
    }
    if (this.view?.mobile.check === 'succeeded') this.messages.announce(SETUP.passedAnnounced);
  }

  // ---- Recording -------------------------------------------------------------------------------

  /**
   * Starts recording the camera; the first time, numbered from the server's `next_sequence`. Does
   * nothing outside the exam, without a camera, or while recording.
   */
  #startRecording(): void {
    const view = this.view;
    if (view === undefined || this.stage !== 'exam') return;
    if (this.stream === undefined || this.#recorder !== undefined) return;
    this.#queue.startAt(view.mobile.next_sequence);
    this.queueSequence = this.#queue.sequence;
    this.#recorder = new Recorder({
      stream: this.stream,
      queue: this.#queue,
      mimeTypes: TYPES_VIDEO_ONLY,
      chunkMs: CHUNK_MS,
      videoBitsPerSecond: BITS_PER_SECOND,
      onStart: () => (this.recording = true),
    });
    this.recorderOn = true;
    this.messages.announce(EXAM.announced);
  }

  /** Stops the recorder (its last chunk joins the queue). */
  async #stopRecorder(): Promise<void> {
    const running = this.#recorder;
    this.#recorder = undefined;
    this.recorderOn = false;
    this.recording = false;
    await running?.stop();
  }

  /** The exam is over: stop, send what waits (at most FLUSH_LIMIT_MS), and say what arrived. */
  async #finish(): Promise<void> {
    window.clearInterval(this.#tickTimer);
    window.clearTimeout(this.#heartbeatTimer);
    await this.#stopRecorder();
    await Promise.race([
      this.#queue.drain(),
      new Promise((resolve) => window.setTimeout(resolve, FLUSH_LIMIT_MS)),
    ]);
    this.#stopLive();
    this.#stopCamera();
    const sent = this.sent;
    const missing = this.#queue.waiting;
    this.arrival = missing > 0 ? FINISHED.missing(missing) : sent > 0 ? FINISHED.arrived(sent) : '';
  }

  /** Stops everything for a link the server no longer knows, and says what to do. */
  #gone(message: string): void {
    if (this.stage === 'gone') return;
    window.clearTimeout(this.#heartbeatTimer);
    window.clearInterval(this.#tickTimer);
    this.#queue.stop();
    void this.#stopRecorder();
    this.#stopLive();
    this.#stopCamera();
    this.messages.clearError();
    this.goneText = /[.!?]$/.test(message) ? message : `${message}.`;
    this.focusStage = this.stage !== 'loading';
    this.stage = 'gone';
  }

  // ---- Keeping the phone awake, its battery, and its presence ---------------------------------

  #readBattery(battery: BatteryState): void {
    this.battery = { level: battery.level, charging: battery.charging };
  }

  /** The student is leaving: warn while recording, and tell the server the phone is gone. */
  #watchLeaving(): void {
    window.addEventListener('beforeunload', (event) => {
      if (!this.recording || this.stage !== 'exam') return;
      event.preventDefault();
      // Older browsers show the warning only when returnValue is set.
      event.returnValue = '';
    });
    window.addEventListener('pagehide', () => {
      if (this.#leaving || this.over || this.stage === 'loading') return;
      this.#leaving = true;
      this.api.leave();
    });
    // Back from the browser's page cache: the server heard the phone leave, so say hello again.
    window.addEventListener('pageshow', (event) => {
      if (!event.persisted || !this.#leaving) return;
      this.#leaving = false;
      void this.#open();
    });
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && this.stream !== undefined) void this.#wake.request();
      void this.heartbeat();
    });
  }

  // ---- Live proctoring -------------------------------------------------------------------------

  /**
   * In a live-proctored exam the phone also shows its camera to the proctor, through the live
   * module (loaded only then); a camera turned on anew is handed to it. A failure there only shows
   * in the live line: the recording goes on as it is.
   */
  async #startLive(): Promise<void> {
    if (this.view?.exam.live_proctoring !== true || this.stream === undefined || this.over) return;
    if (this.#live !== undefined) {
      this.#live.setStream(this.stream);
      return;
    }
    if (this.#liveLoading) return;
    this.#liveLoading = true;
    try {
      const module = await loadPhoneLive();
      if (this.stream === undefined || this.over) return;
      this.#live = module.startPhoneLive({
        token: this.token,
        stream: this.stream,
        onState: (state) => (this.liveState = state),
      });
    } catch {
      this.liveState = 'unavailable';
    } finally {
      this.#liveLoading = false;
    }
  }

  #stopLive(): void {
    this.#live?.stop();
    this.#live = undefined;
    this.liveState = undefined;
  }
}
