/**
 * The phone's heartbeat: every few seconds it tells the server the phone is still there (battery,
 * visibility, whether it films) and takes the session's view the server answers. One timer only.
 */
import type { PhoneHeartbeatRequest } from '../../shared/candidate-api.ts';
import { ApiError } from '../../shared/http.ts';
import type { PhoneApi, PhoneView } from './api.ts';

/** How often the page tells the server it is still there (and reads the session's status back). */
export const HEARTBEAT_MS = 5000;
/**
 * How often it does so before the exam, so that recording starts within a moment of the start on
 * the computer (the phone hears of it only then; a wait of 5 s would be a recording gap).
 */
export const WAITING_HEARTBEAT_MS = 2000;

export interface HeartbeatOptions {
  readonly api: PhoneApi;
  /** What the next heartbeat reports. */
  readonly report: () => NonNullable<PhoneHeartbeatRequest>;
  /** Takes the view the server answered. */
  readonly accept: (view: PhoneView) => void;
  /** True once nothing more is to be sent (the exam finished, the link gone). */
  readonly over: () => boolean;
  /** The pause before the next heartbeat. */
  readonly every: () => number;
}

export class Heartbeat {
  readonly #options: HeartbeatOptions;
  #timer: number | undefined;

  constructor(options: HeartbeatOptions) {
    this.#options = options;
  }

  /** Sends a heartbeat now, shows the view it answers, and schedules the next. */
  async beat(): Promise<void> {
    const { api, report, accept, over } = this.#options;
    window.clearTimeout(this.#timer);
    if (over()) return;
    try {
      accept(await api.heartbeat(report()));
    } catch (error) {
      // A finished session refuses the heartbeat: the view says so.
      if (error instanceof ApiError && error.status === 409) {
        await api
          .view('GET', '')
          .then((view) => accept(view))
          .catch(() => undefined);
      }
    }
    if (over()) return;
    // One timer only, even when a heartbeat of a visibility change ran meanwhile.
    window.clearTimeout(this.#timer);
    this.schedule();
  }

  /** Schedules the next heartbeat (the first, after the hello). */
  schedule(): void {
    this.#timer = window.setTimeout(() => void this.beat(), this.#options.every());
  }

  /** Runs `next` after `ms` on the heartbeat's timer (another hello, after a failed one). */
  after(ms: number, next: () => void): void {
    this.#timer = window.setTimeout(next, ms);
  }

  stop(): void {
    window.clearTimeout(this.#timer);
  }
}
