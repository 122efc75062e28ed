/**
 * The exam room's shared state and the actions every stage uses (docs/room.md). The page speaks
 * only to the room API under /api/room/<token> and shows the stage the session's status calls for:
 *
 *   setup (checks, photos) → start → exam (countdown, recording, answer files, events) → finished
 *
 * The server is the judge of every move and of the time: this module keeps its latest answer (the
 * view), says when it could not be reached, and hands the stages what they share (the camera and
 * screen streams the exam records, the alert and status regions, the recording's waiting parts).
 */
import { tick } from 'svelte';
import { PageMessages } from '../../shared/page-messages.svelte.ts';
import { ApiError, errorOf, requestJson, wakeableSleeps } from '../../shared/http.ts';
import { setOverrides } from '../../shared/i18n.svelte.ts';
import { errorPhrase, phrase, type Phrase } from '../../shared/phrase.ts';
import type { CheckState, RoomView } from '../../shared/candidate-api';

export type {
  AutomatedFlags,
  CheckState,
  MobileStatus,
  RoomExam,
  RoomLive,
  RoomMobile,
  RoomSession,
  RoomView,
} from '../../shared/candidate-api';
/** A check's state (the view's *_check fields). */
export type CheckValue = CheckState;
/** The part of the page the session's status calls for. */
export type Stage = 'setup' | 'exam' | 'finished';

/** How often the page asks the server for the time and the status while the exam runs. */
export const POLL_MS = 20000;
/**
 * How often the page re-reads its view in an exam with a phone camera, during the setup and the
 * exam: the phone talks to the server, not to this page, so this is how the page learns of it.
 */
export const MOBILE_POLL_MS = 5000;

/** Called after each new view with the one it replaced (undefined for the first). */
export type ViewListener = (view: RoomView, before: RoomView | undefined) => void;

/** The session's room token, the last part of the page's address. */
export const token = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() ?? '');
/** The room API of this session. */
export const api = `/api/room/${encodeURIComponent(token)}`;

/** The stage a session status calls for. */
export function stageOf(status: string): Stage {
  if (status === 'exam_finished') return 'finished';
  if (status === 'exam_started') return 'exam';
  return 'setup';
}

/** Sleeping retries, woken when the server answers again or the browser reports the network back. */
const sleeps = wakeableSleeps();
/** Waits `ms`, or less when the connection comes back first (for retries of recording parts). */
export const pause = sleeps.pause;
/** Wakes every sleeping retry at once (the server answered again). */
export const wakeAll = sleeps.wakeAll;

class Room {
  /** The server's latest answer; undefined until the first one arrived. */
  view: RoomView | undefined = $state.raw();
  /** performance.now() when `view` arrived, so a countdown runs on the server's figure. */
  viewAt = $state(0);
  /** The stage shown (follows the view's status). */
  readonly stage: Stage | undefined = $derived(
    this.view === undefined ? undefined : stageOf(this.view.session.status),
  );
  /** Counts the views taken, so a status read that a newer view overtook can step aside. */
  viewVersion = 0;

  /** The page's alert (an error the student must read) and polite status (for screen readers). */
  readonly messages = new PageMessages();
  /** The page could not open the room at all (the loading note gives way to the error). */
  failedToOpen = $state(false);

  /** False after a call failed to reach the server, true again after one got an answer. */
  reachable = $state(true);
  /** What the browser says of its network (navigator.onLine, kept up to date). */
  online = $state(navigator.onLine);
  /** The connection is lost, by the browser's word or by a call that got no answer. */
  readonly lost: boolean = $derived(!this.online || !this.reachable);

  /** The camera (and microphone) the setup's check opened; the exam stage records it. */
  cameraStream: MediaStream | undefined = $state.raw();
  /** The shared screen the setup's check opened; the exam stage records it. */
  screenStream: MediaStream | undefined = $state.raw();

  /** Recorders run on this page now (the exam stage says so; the connection line words it). */
  recording = $state(false);
  /** Recording parts recorded but not yet acknowledged by the server (set by the exam stage). */
  waitingChunks = $state(0);
  /** Their bytes. */
  waitingBytes = $state(0);
  /**
   * The device refused to keep something (its storage is full): it waits in memory only, and is
   * lost if the page closes before it is sent. The connection line says so.
   */
  deviceFull = $state(false);

  /** The exam was started on this page (not found started on a reload). */
  startedHere = $state(false);
  /** The page is on its way out of the setup (start pressed, or the tab closing). */
  leavingSetup = false;

  readonly #listeners = new Set<ViewListener>();
  /** The institute's overrides last applied, as JSON ('{}': none). */
  #overrides = '{}';
  readonly #finishing = new Set<() => Promise<void>>();

  /**
   * Calls the room API. Returns the parsed JSON answer; throws ApiError with the server's own
   * sentence for an error answer, or status 0 (and the room's sentence) when the server could not
   * be reached.
   */
  async call(method: string, path: string, body?: Record<string, unknown> | FormData): Promise<unknown> {
    let answer;
    try {
      answer = await requestJson(`${api}${path}`, method, body);
    } catch {
      this.setReachable(false);
      throw new ApiError(0, '', phrase('room.page.unreachable'));
    }
    this.setReachable(true);
    const { status, ok, json } = answer;
    if (!ok) throw new ApiError(status, errorOf(json, ''));
    return json;
  }

  /** Calls a room API route that answers the room view. Returns it; throws as `call`. */
  async callView(method: string, path: string, body?: Record<string, unknown> | FormData): Promise<RoomView> {
    return (await this.call(method, path, body)) as RoomView;
  }

  /** Takes a room view from the server: the page shows the stage its status calls for. */
  accept(answer: RoomView): void {
    const before = this.view;
    // The institute's own wording: laid over the catalogue when it changed (not on every poll, which
    // would draw every message again).
    const overrides = JSON.stringify(answer.message_overrides ?? {});
    if (overrides !== this.#overrides) {
      this.#overrides = overrides;
      setOverrides(answer.message_overrides ?? {});
    }
    this.view = answer;
    this.viewAt = performance.now();
    this.viewVersion += 1;
    for (const listener of this.#listeners) {
      try {
        listener(answer, before);
      } catch (error) {
        console.warn('room: a view listener failed', error);
      }
    }
  }

  /** Reads the view again and takes it. */
  async reload(): Promise<void> {
    this.accept(await this.callView('GET', ''));
  }

  /**
   * Asks the server for the time and the status; a finished session (time up, ended by staff)
   * shows as such, after the page stopped what it records (`whenFinished`).
   */
  async poll(): Promise<void> {
    const version = this.viewVersion;
    try {
      const answer = await this.callView('GET', '');
      if (answer.session.status === 'exam_finished') {
        for (const stop of this.#finishing) await stop();
      }
      // A newer view (a check saved meanwhile, say) arrived while this read was on its way:
      // showing this one would step the page back for a moment.
      if (this.viewVersion !== version && answer.session.status === this.view?.session.status) return;
      this.accept(answer);
    } catch (error) {
      // Unreachable: the next poll tries again. Anything else (the exam removed, say) is shown.
      if (error instanceof ApiError && error.status === 0) return;
      this.showError(errorPhrase(error));
    }
  }

  /** Registers `listener` for every new view (live announcements, the phone's state). Returns its removal. */
  onView(listener: ViewListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Registers what a poll awaits before it shows a finished session (stopping the recorders). Returns its removal. */
  whenFinished(stop: () => Promise<void>): () => void {
    this.#finishing.add(stop);
    return () => this.#finishing.delete(stop);
  }

  /** Announces progress politely to screen readers (and shows nothing extra on screen). */
  announce(message: Phrase | string): void {
    this.messages.announce(message);
  }

  /** Shows an error the student must read in the alert region (screen readers announce it at once). */
  showError(message: Phrase | string): void {
    this.messages.showError(message);
  }

  /** Empties and hides the alert region. */
  clearError(): void {
    this.messages.clearError();
  }

  /** Records whether the server answered; an answer wakes the retries waiting for one. */
  setReachable(value: boolean): void {
    if (this.reachable === value) return;
    this.reachable = value;
    if (value) sleeps.wakeAll();
  }

  /** Tells the connection line what the recorders hold: whether any runs, the parts and bytes waiting. */
  setRecording(active: boolean, waiting: number, bytes = 0): void {
    this.recording = active;
    this.waitingChunks = waiting;
    this.waitingBytes = bytes;
    // Everything that waited in memory only has been sent: the device may have room again.
    if (waiting === 0) this.deviceFull = false;
  }

  /**
   * Runs a user action: clears the old error, shows a new one, keeps the button from being pressed
   * twice while the action runs. The button is marked busy with aria-disabled rather than disabled:
   * a disabled button drops the keyboard focus to the page's body, and the student would have to
   * find their place again after every check. `fallbackId` names what takes the focus when the
   * button is gone or hidden afterwards.
   */
  async act(
    button: HTMLButtonElement | undefined,
    action: () => Promise<void>,
    fallbackId?: string,
  ): Promise<void> {
    if (button?.getAttribute('aria-disabled') === 'true') return;
    this.clearError();
    button?.setAttribute('aria-disabled', 'true');
    try {
      await action();
    } catch (error) {
      this.showError(errorPhrase(error));
    } finally {
      button?.removeAttribute('aria-disabled');
      keepFocus(button, fallbackId);
    }
  }
}

/** The room of this page: one per page. */
export const room = new Room();

/**
 * After an action, puts the focus back where the student was when the page moved it away (to the
 * body): on the button they used while it can still take it, else on `fallbackId` (a status text
 * the action filled in), else on the stage's heading. Waits for Svelte to draw the view the action
 * took first.
 */
export function keepFocus(button: HTMLElement | undefined, fallbackId?: string): void {
  void tick().then(() => {
    const active = document.activeElement;
    if (active !== null && active !== document.body && active.isConnected) return;
    const usable = (element: HTMLElement | null | undefined): element is HTMLElement =>
      element != null &&
      element.isConnected &&
      element.closest('[hidden]') === null &&
      !(element instanceof HTMLButtonElement && element.disabled);
    const fallback = fallbackId === undefined ? null : document.getElementById(fallbackId);
    const target = usable(button)
      ? button
      : usable(fallback)
        ? fallback
        : document.querySelector('#main section.stage h2');
    if (!(target instanceof HTMLElement)) return;
    if (!target.matches('button, input, a[href], [tabindex]')) target.tabIndex = -1;
    target.focus();
  });
}

window.addEventListener('offline', () => {
  room.online = false;
});
window.addEventListener('online', () => {
  room.online = true;
  sleeps.wakeAll();
});
