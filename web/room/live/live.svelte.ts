/**
 * Live proctoring in the exam room (docs/live-proctoring.md, "The candidate's room"): the room
 * publishes the camera, the microphone and the screen to the proctor from the setup on, shows the
 * proctor's messages and lets the candidate answer, and follows the proctor's controls (admit,
 * pause, resume, end). None of it may cost the recording: the live client (web/live, loaded only
 * for a live exam) publishes copies of the tracks, every step here catches its own failures, and
 * nothing in the recording waits for the live part.
 */
import type { RoomMessage } from '../../shared/candidate-api';
import type { LiveConnection, PublishState, SocketStatus } from '../../live/live-client.ts';
import { room, stageOf, type RoomView } from '../state/room.svelte.ts';
import { chat } from './chat.svelte.ts';
import { t } from '../../shared/i18n.svelte.ts';

/** The indicator's look (a class) and its sentence. */
export type LiveLook = 'off' | 'connecting' | 'live' | 'waiting';

/** True while the proctor holds the candidate's clock during the exam. */
export function clockPaused(): boolean {
  const view = room.view;
  return view?.live?.enabled === true && view.live.clock_paused && view.session.status === 'exam_started';
}

/** True while a live exam with an ID check waits for the proctor to admit the candidate. */
export function awaitingAdmission(): boolean {
  const view = room.view;
  return (
    view?.live?.enabled === true && view.live.awaiting_admission && view.session.status !== 'exam_finished'
  );
}

/** A stream with a track that still runs, or null. */
function usable(stream: MediaStream | undefined): MediaStream | null {
  return stream?.getTracks().some((track) => track.readyState === 'live') === true ? stream : null;
}

class RoomLive {
  /** The live part is on the page (a live exam, not finished). */
  shown = $state(false);
  /** The live client could not be loaded: the room says so and goes on without it. */
  broken = $state(false);
  socket: SocketStatus = $state('connecting');
  publishing: PublishState = $state('off');
  /** The header offers a link to a new message that is off screen. */
  unread = $state(false);
  /** True while the chat's messages are on screen (new ones need no link then). */
  chatVisible = false;

  /** What the indicator says: its look and its sentence. */
  readonly state: readonly [LiveLook, string] = $derived.by(() => {
    if (this.broken) return ['off', t('room.live.unavailable')];
    if (this.socket === 'closed') return ['off', t('room.live.closed')];
    if (this.socket !== 'open' || this.publishing === 'connecting')
      return ['connecting', t('candidate.live.connecting')];
    if (this.publishing === 'live') {
      return ['live', room.view?.exam.web_cam === false ? t('room.live.seesScreen') : t('room.live.seesYou')];
    }
    return ['waiting', t('room.live.waiting')];
  });

  /** The indicator's look, for copies beside the admission box and in the panel. */
  get look(): LiveLook {
    return this.state[0];
  }

  /** The indicator's sentence. */
  get sentence(): string {
    return this.state[1];
  }

  connection: LiveConnection | undefined;
  #loading = false;
  /**
   * A camera opened for the proctor alone when the page is opened again (a reload) and the browser
   * still allows the camera: the proctor sees the candidate at once, while the recording asks for
   * its own streams with a click as before.
   */
  #camera: MediaStream | undefined;

  /**
   * After every new view: starts the live part of a live exam (once), says what the proctor
   * changed, and stops it all once the session is finished.
   */
  follow(view: RoomView, before: RoomView | undefined): void {
    const now = view.live;
    if (now?.enabled !== true || view.session.status === 'exam_finished') {
      this.stop();
      return;
    }
    this.shown = true;
    void this.#start(now.socket);
    const then = before?.live;
    if (
      then !== undefined &&
      then.clock_paused !== now.clock_paused &&
      view.session.status === 'exam_started'
    ) {
      room.announce(clockPaused() ? t('room.live.paused') : t('room.live.resumed'));
    }
    if (
      then?.awaiting_admission === true &&
      !now.awaiting_admission &&
      stageOf(view.session.status) === 'setup'
    ) {
      room.announce(t('room.live.admitted'));
    }
  }

  /** Closes the live connection and hides the live part (the session is finished). */
  stop(): void {
    const connection = this.connection;
    this.connection = undefined;
    try {
      connection?.close();
    } catch (error) {
      console.warn('live: closing failed', error);
    }
    this.#camera?.getTracks().forEach((track) => track.stop());
    this.#camera = undefined;
    this.shown = false;
    this.unread = false;
  }

  /**
   * Publishes what the room has: the camera and microphone of the checks or the recording (or the
   * camera opened for the proctor alone), and the shared screen. Safe to call at any time.
   */
  publish(): void {
    const view = room.view;
    if (this.connection === undefined || view === undefined) return;
    try {
      const own = view.exam.web_cam ? usable(room.cameraStream) : null;
      const camera = own ?? (view.exam.web_cam ? usable(this.#camera) : null);
      const screen = view.exam.screen_share ? usable(room.screenStream) : null;
      this.connection.publish({ camera, screen });
      if (own !== null && this.#camera !== undefined) {
        // The room has its own camera now: the one opened for the proctor alone is no longer needed.
        this.#camera.getTracks().forEach((track) => track.stop());
        this.#camera = undefined;
      }
    } catch (error) {
      console.warn('live: publishing failed', error);
    }
  }

  /** Loads the live client and opens the connection to the proctor (once). */
  async #start(socket: string): Promise<void> {
    if (this.connection !== undefined || this.#loading || this.broken) return;
    this.#loading = true;
    try {
      const client = await import('../../live/live-client.ts');
      const view = room.view;
      if (view?.live?.enabled !== true || view.session.status === 'exam_finished') return;
      this.connection = client.connectLive({
        url: socket,
        onMessage: (message) => {
          if (this.connection === undefined) return;
          if (message.type === 'message') this.#received([message.message]);
          // The proctor admitted, paused, resumed or ended: the view says what that means now.
          if (message.type === 'control') void room.poll();
          if (message.type === 'error') console.warn('live:', message.error);
        },
        onStatus: (status) => {
          if (this.connection === undefined) return;
          this.socket = status;
          // Connected (again): fetch what was written meanwhile.
          if (status === 'open') void chat.load((fresh) => this.#notify(fresh));
          // Refused for good (the session finished, say): the view tells the room what to show.
          if (status === 'closed') void room.poll();
        },
        onPublishState: (state) => {
          this.publishing = state;
        },
      });
      this.publish();
      void this.#openCamera();
    } catch (error) {
      this.broken = true;
      console.warn('live: the live client could not be loaded', error);
    } finally {
      this.#loading = false;
    }
  }

  /** New messages from the proctor: announced, and linked from the header while the chat is off screen. */
  #received(messages: RoomMessage[]): void {
    this.#notify(chat.add(messages));
  }

  #notify(fromProctor: number): void {
    if (fromProctor === 0) return;
    room.announce(t('room.live.newMessages', { count: fromProctor }));
    if (!this.chatVisible) this.unread = true;
  }

  /**
   * Opened again (a reload) with the camera already allowed: opens it for the proctor, so the
   * candidate is seen without pressing anything. Does nothing when the browser would have to ask,
   * or before the candidate has tested the camera in this exam.
   */
  async #openCamera(): Promise<void> {
    const view = room.view;
    if (view === undefined || !view.exam.web_cam || this.#camera !== undefined || usable(room.cameraStream))
      return;
    // Only a candidate who has used the camera in this exam before: never a camera that turns on
    // before the candidate has turned it on themselves.
    const { session } = view;
    if (session.webcam_check !== 'succeeded' && session.status !== 'exam_started') return;
    try {
      const names: PermissionName[] = ['camera', 'microphone'];
      const states = await Promise.all(names.map((name) => navigator.permissions.query({ name })));
      if (states.some((state) => state.state !== 'granted')) return;
      const stream = await navigator.mediaDevices.getUserMedia({
        video: { width: 640, height: 480 },
        audio: true,
      });
      if (this.connection === undefined || usable(room.cameraStream) !== null) {
        stream.getTracks().forEach((track) => track.stop());
        return;
      }
      this.#camera = stream;
      this.publish();
    } catch (error) {
      // The camera check (or "Resume recording") asks for the camera as before.
      console.warn('live: the camera could not be opened for the proctor', error);
    }
  }
}

/** The live part of this page: one per page. */
export const live = new RoomLive();

/** Publishes the room's current streams to the proctor (after a check or a resume). Never throws. */
export function publishLive(): void {
  live.publish();
}

// Registered when the module loads (the frame imports it with the header), before the first view.
room.onView((view, before) => live.follow(view, before));
