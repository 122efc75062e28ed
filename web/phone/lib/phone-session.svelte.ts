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
 * judge of every move; the page shows what it says. The parts live beside it: the recording
 * (recording.ts), the heartbeat (heartbeat.ts), the page's presence (presence.ts), the live link
 * (live-link.ts) and what the view means for the page (stage.ts).
 */
import { wakeableSleeps } from '../../shared/http.ts';
import { PageMessages } from '../../shared/page-messages.svelte.ts';
import { errorPhrase, phrase, PhraseError, type Phrase } from '../../shared/phrase.ts';
import { recordClip, TYPES_VIDEO_ONLY } from '../../shared/recording/recorder.ts';
import { currentLocale, setOverrides, t, useLanguage } from '../../shared/i18n.svelte.ts';
import { isPageLocale, type PageLocale } from '../../../src/i18n/locales.ts';
import type { CandidateLanguage } from '../../shared/candidate-api.ts';
import { languageOf, overridesOf, PhoneApi, type PhoneView } from './api.ts';
import { cameraAdvice, facingMemory, openCamera, type Facing } from './camera.ts';
import { deviceDescription } from './device.ts';
import { Heartbeat, HEARTBEAT_MS, WAITING_HEARTBEAT_MS } from './heartbeat.ts';
import { ScreenWake, watchBattery, type BatteryState, type WakeState } from './keep-awake.ts';
import { LiveLink } from './live-link.ts';
import type { PhoneLiveState } from './live.ts';
import { watchPresence } from './presence.ts';
import { PhoneRecording } from './recording.ts';
import {
  checkLineOf,
  onBreak,
  recordingPausedFor,
  secondsLeftOf,
  stageOf,
  type CheckLine,
  type Stage,
} from './stage.ts';

export type { CheckLine, Stage };

/** How long the camera check films. */
export const CHECK_CLIP_MS = 2000;

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
  liveState = $state<PhoneLiveState | undefined>();
  check = $state.raw<CheckLine>({ text: undefined, outcome: '' });
  /** What to do about a camera that would not start; undefined while there is no trouble. */
  cameraTrouble = $state.raw<Phrase | undefined>();
  /** What arrived from this phone, said at the end. */
  arrival = $state.raw<Phrase | undefined>();
  secondsLeft = $state<number | null>(null);
  /** The candidate is on a rest break: the exam clock stands still. */
  onBreak = $state(false);
  /** The recording stands paused for the break (the exam does not record during breaks). */
  recordingPaused = $state(false);
  /** The actions running, by name: their buttons are marked busy. */
  busy = $state<Record<string, boolean>>({});
  /** The language shown and those the student may pick; undefined until the server names them. */
  language = $state.raw<CandidateLanguage | undefined>();

  /** performance.now() when `view` arrived, so the countdown runs on the server's figure. */
  #viewAt = 0;
  #tickTimer: number | undefined;
  /**
   * True once the server refused a chunk because the exam is over (its time ran out) before the
   * session's status says so; the page then shows the end as well.
   */
  #refusedAsFinished = false;
  readonly #sleeps = wakeableSleeps();
  readonly #recordingParts: PhoneRecording;
  readonly #heartbeat: Heartbeat;
  readonly #live: LiveLink;
  readonly #wake = new ScreenWake((state) => (this.wakeState = state));
  readonly #facingMemory;
  /**
   * When the student's own pick of language was saved (performance.now(); infinite while it is
   * being saved): a view asked for before then may still name the language before it.
   */
  #pickedAt = 0;
  /** The institute's overrides in force, as JSON (each view carries them again). */
  #overrides = '';

  constructor(token: string) {
    this.token = token;
    this.#facingMemory = facingMemory(token);
    this.api = new PhoneApi({
      token,
      onReachable: (reachable) => {
        if (reachable && !this.reachable) this.#sleeps.wakeAll();
        this.reachable = reachable;
      },
      onGone: () => this.#gone(),
    });
    // One queue for the page, whatever recorder fills it.
    this.#recordingParts = new PhoneRecording({
      upload: (form) => this.api.uploadChunk(form),
      pause: this.#sleeps.pause,
      onQueue: () => {
        this.queueSequence = this.#recordingParts.sequence;
        this.waiting = this.#recordingParts.waiting;
      },
      onClosed: (error) => {
        if (/finished/i.test(error.message)) {
          this.#refusedAsFinished = true;
          this.#render();
        } else void this.heartbeat();
      },
      onFilming: () => (this.recording = true),
    });
    this.#heartbeat = new Heartbeat({
      api: this.api,
      report: () => ({
        battery_level: this.battery === null ? null : this.battery.level,
        charging: this.battery === null ? null : this.battery.charging,
        visible: document.visibilityState === 'visible',
        // Whether this page films now: a phone that only waits reads as paired, not streaming.
        streaming: this.recording,
      }),
      accept: (view) => this.#accept(view),
      over: () => this.over,
      // Shorter while waiting for the start.
      every: () => (this.stage === 'setup' ? WAITING_HEARTBEAT_MS : HEARTBEAT_MS),
    });
    this.#live = new LiveLink({
      token,
      stream: () => this.stream,
      over: () => this.over,
      onState: (state) => (this.liveState = state),
    });
  }

  /** Recording parts the server holds from this phone. */
  get sent(): number {
    return this.queueSequence ?? this.view?.mobile.chunks_count ?? 0;
  }

  /** Starts the page: says hello, follows the battery, the connection and the student leaving. */
  start(): void {
    watchPresence({
      filming: () => this.recording && this.stage === 'exam',
      present: () => !this.over && this.stage !== 'loading',
      leave: () => this.api.leave(),
      returned: () => void this.#open(),
      visibility: (visible) => {
        if (visible && this.stream !== undefined) void this.#wake.request();
        void this.heartbeat();
      },
      online: () => {
        this.#sleeps.wakeAll();
        void this.heartbeat();
      },
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
      this.messages.showError(errorPhrase(error));
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
      this.messages.showError(errorPhrase(error));
      this.#heartbeat.after(HEARTBEAT_MS, () => void this.#open());
      return;
    }
    this.messages.clearError();
    this.#heartbeat.schedule();
    // A reopened page turns the camera it used on again; the browser remembers the permission.
    const saved = this.#facingMemory.recall();
    if (saved !== undefined && this.stream === undefined && !this.over) await this.startCamera(saved);
  }

  /** Takes the phone's view from the server and shows the stage the session's status calls for. */
  #accept(answer: PhoneView): void {
    if (this.stage === 'gone') return;
    this.view = answer;
    this.#viewAt = performance.now();
    this.#followLanguage(answer);
    this.#render();
  }

  /**
   * Follows a change of the session's language (the student picked another one in the exam room),
   * and shows the institute's wording. The first view's language is the page's already (the server
   * wrote it on <html lang>, a `?lang=` of this load included); the view of a request sent before
   * the student's own pick on this phone was saved is passed over.
   */
  #followLanguage(view: PhoneView): void {
    const overrides = overridesOf(view);
    const text = JSON.stringify(overrides ?? {});
    if (text !== this.#overrides) {
      this.#overrides = text;
      setOverrides(overrides ?? {});
    }
    const language = languageOf(view);
    if (language === undefined || this.api.askedAt(view) < this.#pickedAt) return;
    const before = this.language?.current;
    this.language = language;
    if (before === undefined || before === language.current) return;
    if (isPageLocale(language.current) && language.current !== currentLocale())
      void useLanguage(language.current);
  }

  /**
   * Shows the page in `locale` at once and saves the pick for the session, so the exam room and a
   * reopened page show it too. Throws ApiError when the server refused it (this page keeps the
   * language picked all the same).
   */
  async chooseLanguage(locale: PageLocale): Promise<void> {
    // Until the pick is saved, views keep to it; if it cannot be saved, this page keeps to it.
    this.#pickedAt = Number.POSITIVE_INFINITY;
    await useLanguage(locale);
    this.language = await this.api.chooseLanguage(locale);
    this.#pickedAt = performance.now();
  }

  #render(): void {
    const view = this.view;
    if (view === undefined) return;
    const stage = stageOf(view, this.#refusedAsFinished);
    // A rest break of an exam that does not record during breaks: the recorder stops (its last
    // chunk still goes out) and a new one starts after it, in the same numbering, as the room's.
    const pausing = recordingPausedFor(view);
    const pauseChanged = pausing !== this.recordingPaused;
    this.recordingPaused = pausing;
    if (pauseChanged && pausing) void this.#stopRecorder();
    if (stage !== this.stage) this.#show(stage);
    if (stage === 'setup') this.check = checkLineOf(this.view, this.check);
    if (stage === 'exam') this.#tick();
    if (pauseChanged && !pausing) this.#startRecording();
    const resting = onBreak(view);
    if (resting !== this.onBreak && stage === 'exam') {
      this.messages.announce(phrase(resting ? 'phone.exam.breakStarted' : 'phone.exam.breakEnded'));
    }
    this.onBreak = resting;
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

  #tick(): void {
    this.secondsLeft = secondsLeftOf(this.view, performance.now() - this.#viewAt);
  }

  /** Tells the server the phone is still there, and shows the view it answers. Schedules the next. */
  heartbeat(): Promise<void> {
    return this.#heartbeat.beat();
  }

  // ---- The camera ------------------------------------------------------------------------------

  /**
   * Turns on the camera facing `which`, shows it, keeps the screen on, and records at once when the
   * exam is running. Throws nothing: a refusal is shown with advice, the buttons stay for another try.
   */
  async startCamera(which: Facing): Promise<void> {
    const running = this.stream?.getVideoTracks().some((track) => track.readyState === 'live') ?? false;
    if (running && this.facing === which) return;
    this.cameraTrouble = undefined;
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
    this.messages.announce(phrase(which === 'user' ? 'phone.camera.frontOn' : 'phone.camera.backOn'));
    void this.#wake.request();
    this.#startRecording();
    if (this.view?.exam.live_proctoring === true) void this.#live.start();
  }

  /** The camera was taken away (another app, the system): stop recording and ask for it again. */
  async #cameraEnded(track: MediaStreamTrack): Promise<void> {
    if (this.stream === undefined || !this.stream.getTracks().includes(track)) return;
    this.#stopCamera();
    this.messages.showError(phrase('phone.camera.stopped'));
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
    if (stream === undefined) {
      const values = { front: t('phone.camera.front'), back: t('phone.camera.back') };
      throw new PhraseError(phrase('phone.setup.chooseFirst', values));
    }
    const seconds = CHECK_CLIP_MS / 1000;
    this.check = { text: { key: 'phone.setup.filming', values: { seconds } }, outcome: '' };
    const clip = await recordClip(stream, CHECK_CLIP_MS, TYPES_VIDEO_ONLY);
    this.check = { text: { key: 'phone.setup.sending' }, outcome: '' };
    const form = new FormData();
    form.append('file', clip, clip.type.includes('mp4') ? 'check.mp4' : 'check.webm');
    try {
      this.#accept(await this.api.view('POST', '/check', form));
    } catch (error) {
      this.check = { text: { key: 'phone.setup.failed' }, outcome: 'failed' };
      throw error;
    }
    if (this.view?.mobile.check === 'succeeded')
      this.messages.announce(phrase('phone.setup.passedAnnounced'));
  }

  // ---- Recording and the end -------------------------------------------------------------------

  /**
   * Starts recording the camera; the first time, numbered from the server's `next_sequence`. Does
   * nothing outside the exam, without a camera, or while recording.
   */
  #startRecording(): void {
    const view = this.view;
    if (view === undefined || this.stage !== 'exam') return;
    if (this.stream === undefined || this.#recordingParts.running || this.recordingPaused) return;
    this.#recordingParts.start(this.stream, view.mobile.next_sequence);
    this.queueSequence = this.#recordingParts.sequence;
    this.recorderOn = true;
    this.messages.announce(phrase('phone.exam.announced'));
  }

  /** Stops the recorder (its last chunk joins the queue). */
  async #stopRecorder(): Promise<void> {
    this.recorderOn = false;
    this.recording = false;
    await this.#recordingParts.stop();
  }

  /** The exam is over: stop, send what waits (for a while at most), and say what arrived. */
  async #finish(): Promise<void> {
    window.clearInterval(this.#tickTimer);
    this.#heartbeat.stop();
    await this.#stopRecorder();
    await this.#recordingParts.flush();
    this.#live.stop();
    this.#stopCamera();
    const sent = this.sent;
    const missing = this.#recordingParts.waiting;
    if (missing > 0) this.arrival = { key: 'phone.finished.missing', values: { count: missing } };
    else if (sent > 0) this.arrival = { key: 'phone.finished.arrived', values: { count: sent } };
  }

  /** Stops everything for a link the server no longer knows (the stage says what to do). */
  #gone(): void {
    if (this.stage === 'gone') return;
    this.#heartbeat.stop();
    window.clearInterval(this.#tickTimer);
    this.#recordingParts.abandon();
    void this.#stopRecorder();
    this.#live.stop();
    this.#stopCamera();
    this.messages.clearError();
    this.focusStage = this.stage !== 'loading';
    this.stage = 'gone';
  }

  #readBattery(battery: BatteryState): void {
    this.battery = { level: battery.level, charging: battery.charging };
  }
}
