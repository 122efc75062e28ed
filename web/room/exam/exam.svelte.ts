/**
 * What the exam stage does (docs/room.md, "Exam in progress"): it sends first what an earlier page
 * left unsent, starts recording once the stage is up (after a reload the camera at once, the screen
 * after a click, since browsers share a screen only then), reports the events, follows the streams
 * it records, finishes on the candidate's word and hands over to the server's clock when the time
 * is up.
 */
import { tick } from 'svelte';
import { ApiError } from '../../shared/http.ts';
import { t } from '../../shared/i18n.svelte.ts';
import { phrase } from '../../shared/phrase.ts';
import { room } from '../state/room.svelte.ts';
import { publishLive } from '../live/live.svelte.ts';
import { FLAGS_STOP_LIMIT_MS, runFlags, stopFlags } from './flags.ts';
import { flushEvents, sendEvent, watchEvents, type EventType } from './events.ts';
import { answerFiles } from './answers.svelte.ts';
import { exempt, recording, type Source } from './recording.svelte.ts';
import type { RoomView } from '../state/room.svelte.ts';

/** The rounds and the pause of the status reads after the countdown reached zero (a minute at most). */
const TIME_UP_ROUNDS = 30;
const TIME_UP_EVERY_MS = 2000;

/** True while the candidate is on a rest break (the clock stands still). */
export function onBreak(view: RoomView | undefined = room.view): boolean {
  return view?.session.status === 'exam_started' && view.accommodations.break !== null;
}

/** True when the exam records the camera stream for this candidate (not exempt from both its parts). */
function camerasRecorded(view: RoomView): boolean {
  return view.exam.web_cam && !(exempt(view, 'webcam') && exempt(view, 'microphone'));
}

/** What the camera stream asks for: the parts of it the candidate is not exempt from. */
function cameraConstraints(view: RoomView): MediaStreamConstraints {
  return {
    video: exempt(view, 'webcam') ? false : { width: 640, height: 480 },
    audio: !exempt(view, 'microphone'),
  };
}

/** True when every track of the stream still runs (a camera whose picture stopped is asked for again). */
function intact(stream: MediaStream | undefined): boolean {
  const tracks = stream?.getTracks() ?? [];
  return tracks.length > 0 && tracks.every((track) => track.readyState === 'live');
}

/** True when the stream has a track that still runs. */
function running(stream: MediaStream | undefined): boolean {
  return stream?.getTracks().some((track) => track.readyState === 'live') === true;
}

class ExamControl {
  /** The catalogue key of the button that starts recording again; undefined while it is hidden. */
  resumeLabel:
    | 'room.exam.recording.start'
    | 'room.exam.recording.resume'
    | 'room.exam.recording.shareScreen'
    | undefined = $state();
  /** The catalogue key of what the recording line says instead of what is recorded (waiting, saving). */
  note: string | undefined = $state();
  /** The candidate confirmed the finish: the page is sending its last parts. */
  finishing = false;
  #begun = false;
  readonly #watchedTracks = new WeakSet<MediaStreamTrack>();

  /**
   * Once per page, when the exam stage is up: what earlier pages kept is sent, and recording
   * starts, or waits for a click.
   */
  begin(): void {
    const view = room.view;
    if (this.#begun || view === undefined) return;
    this.#begun = true;
    recording.restore();
    answerFiles.restore();
    watchEvents(
      () => this.finishing,
      () => recording.drain(),
    );
    // Opened on a started exam: the page was reloaded (or opened again), which staff should know.
    if (!room.startedHere) void sendEvent('page_reloaded');
    const { exam } = view;
    const needCamera = camerasRecorded(view) && !running(room.cameraStream);
    const needScreen = exam.screen_share && !exempt(view, 'screen_share') && !running(room.screenStream);
    if (needCamera && !room.startedHere) {
      // Reloaded: the candidate let the page use the camera already, and a camera needs no click,
      // so it records again at once; only the screen waits for one.
      this.note = 'room.exam.recording.resuming';
      void this.#resumeCamera(view, needScreen);
      return;
    }
    if (needCamera || needScreen) {
      // No streams (a reload lost them, or the checks were skipped): the browser shares the screen
      // only after a click, and a camera never checked is asked for with it.
      this.#askForClick(needCamera, needScreen);
      return;
    }
    this.startRecording();
  }

  /** Shows the button that asks for what is still missing, and the line that explains it. */
  #askForClick(camera: boolean, screen: boolean): void {
    if (room.startedHere) {
      this.resumeLabel = 'room.exam.recording.start';
      this.note = 'room.exam.recording.notStarted';
    } else if (!camera && screen) {
      this.resumeLabel = 'room.exam.recording.shareScreen';
      this.note = 'room.exam.recording.reloadedScreen';
    } else {
      this.resumeLabel = 'room.exam.recording.resume';
      this.note = 'room.exam.recording.reloaded';
    }
  }

  /**
   * After a reload: opens the camera without a click and records it, then asks for the screen
   * with a click when it is recorded too. A camera the browser refuses now waits for the click too.
   */
  async #resumeCamera(view: RoomView, needScreen: boolean): Promise<void> {
    try {
      room.cameraStream = await navigator.mediaDevices.getUserMedia(cameraConstraints(view));
    } catch (error) {
      console.warn('room: the camera did not open again by itself', error);
      this.#askForClick(true, needScreen);
      return;
    }
    this.startRecording();
    publishLive();
    if (needScreen) this.#askForClick(false, true);
  }

  /** Asks for the camera and the screen again (a click), then records them. */
  async resume(): Promise<void> {
    const view = room.view;
    if (view === undefined) return;
    const { exam } = view;
    // Only what is recorded and not running is asked for: a candidate exempt from the webcam need
    // not have one, and a camera that opened again by itself after a reload keeps recording.
    if (camerasRecorded(view) && !intact(room.cameraStream)) {
      room.cameraStream = await navigator.mediaDevices.getUserMedia(cameraConstraints(view));
    }
    if (exam.screen_share && !exempt(view, 'screen_share') && !running(room.screenStream)) {
      room.screenStream = await navigator.mediaDevices.getDisplayMedia({ video: true, audio: false });
    }
    this.resumeLabel = undefined;
    this.startRecording();
    publishLive();
    // The button hid itself: the line that says what is recorded takes the focus.
    await tick();
    const active = document.activeElement;
    if (active === null || active === document.body || active.closest('[hidden]') !== null) {
      const line = document.getElementById('recording-state');
      if (line !== null) {
        line.tabIndex = -1;
        line.focus();
      }
    }
  }

  /** Records the streams the page has, follows their tracks, and hands them to the detectors. */
  startRecording(): void {
    this.note = undefined;
    recording.start();
    this.#watchTracks();
    void runFlags();
  }

  /** Stops recording, sends the last parts, events and flags, then finishes the exam on the server. */
  async finish(): Promise<void> {
    this.finishing = true;
    try {
      this.note = 'room.exam.recording.saving';
      await Promise.all([recording.stop(), answerFiles.flush(), stopFlags(FLAGS_STOP_LIMIT_MS)]);
      await flushEvents();
      room.accept(await room.callView('POST', '/finish'));
    } finally {
      this.finishing = false;
    }
  }

  /**
   * The countdown reached zero: stops recording, sends what it has, then reads the status every 2
   * seconds until the server, whose clock decides, has finished the session (the two clocks may
   * differ by a moment).
   */
  async timeUp(): Promise<void> {
    room.announce(phrase('room.exam.timeUp'));
    await recording.stop();
    for (let round = 0; round < TIME_UP_ROUNDS && room.view?.session.status === 'exam_started'; round += 1) {
      await room.poll();
      if (room.view?.session.status !== 'exam_started') return;
      await new Promise((resolve) => window.setTimeout(resolve, TIME_UP_EVERY_MS));
    }
  }

  /** Starts one of the candidate's rest breaks (the server stops the clock and hides the questions). */
  async startBreak(): Promise<void> {
    room.accept(await room.callView('POST', '/break'));
  }

  /** Ends the running rest break; one that already ended by itself just shows the new view. */
  async endBreak(): Promise<void> {
    try {
      room.accept(await room.callView('POST', '/break/end'));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 409) throw error;
      await room.reload();
    }
  }

  /** A camera, microphone or screen share that stops is an incident, and recording waits for a click. */
  #watchTracks(): void {
    const watched: [MediaStream | undefined, string, EventType, Source, string][] = [
      [room.cameraStream, 'video', 'webcam_lost', 'webcam', 'room.exam.stopped.camera'],
      [room.cameraStream, 'audio', 'microphone_lost', 'webcam', 'room.exam.stopped.microphone'],
      [room.screenStream, 'video', 'screen_share_stopped', 'screen', 'room.exam.stopped.screen'],
    ];
    for (const [stream, kind, event, source, stopped] of watched) {
      for (const track of stream?.getTracks() ?? []) {
        if (track.kind !== kind || this.#watchedTracks.has(track)) continue;
        this.#watchedTracks.add(track);
        track.addEventListener('ended', () => {
          if (this.finishing || room.view?.session.status !== 'exam_started') return;
          void sendEvent(event);
          room.showError(phrase(stopped));
          this.resumeLabel = 'room.exam.recording.resume';
          recording.stopSource(source);
        });
      }
    }
  }
}

/** The exam stage's controller: one per page. */
export const exam = new ExamControl();

/** What the recording line says now. Reactive in components. */
export function recordingLine(): string {
  if (exam.note !== undefined) return t(exam.note);
  if (recording.paused) return t('room.break.recordingPaused');
  const view = room.view;
  if (recording.running.length === 0) {
    if (view?.exam.web_cam === true || view?.exam.screen_share === true) return t('room.exam.recording.off');
    return view?.mobile != null ? t('room.exam.recording.phoneOnly') : t('room.exam.recording.none');
  }
  const camera = recording.running.includes('webcam');
  const screen = recording.running.includes('screen');
  if (camera && screen) return t('room.exam.recording.both');
  return camera ? t('room.exam.recording.camera') : t('room.exam.recording.screen');
}

// A rest break of an exam that does not record during breaks pauses the recorders (and the next
// view after it resumes them); the break's start and end are announced once each.
room.onView((view, before) => {
  const resting = onBreak(view);
  const wasResting = onBreak(before);
  recording.setPaused(resting && !view.exam.record_during_breaks);
  if (resting && !wasResting) room.announce(phrase('room.break.started'));
  if (!resting && wasResting && view.session.status === 'exam_started') {
    room.announce(phrase('room.break.ended'));
  }
});

// A poll that finds the session finished (time up, ended by staff) stops the recorders first, so
// the finished page counts the parts the server refused.
room.whenFinished(() => recording.stop());
