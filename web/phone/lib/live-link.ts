/**
 * In a live-proctored exam the phone also shows its camera to the proctor, through the live module
 * (loaded only then); a camera turned on anew is handed to it. A failure there only shows in the
 * live line: the recording goes on as it is.
 */
import { loadPhoneLive, type PhoneLive, type PhoneLiveState } from './live.ts';

export interface LiveLinkOptions {
  readonly token: string;
  /** The camera now, if on. */
  readonly stream: () => MediaStream | undefined;
  /** True once the page is done (finished, or the link gone). */
  readonly over: () => boolean;
  /** The live line's state; undefined when there is none. */
  readonly onState: (state: PhoneLiveState | undefined) => void;
}

export class LiveLink {
  readonly #options: LiveLinkOptions;
  #live: PhoneLive | undefined;
  #loading = false;

  constructor(options: LiveLinkOptions) {
    this.#options = options;
  }

  /** Shows the camera to the proctor: loads the live module the first time, else hands it the camera. */
  async start(): Promise<void> {
    const { token, stream, over, onState } = this.#options;
    const camera = stream();
    if (camera === undefined || over()) return;
    if (this.#live !== undefined) {
      this.#live.setStream(camera);
      return;
    }
    if (this.#loading) return;
    this.#loading = true;
    try {
      const module = await loadPhoneLive();
      const now = stream();
      if (now === undefined || over()) return;
      this.#live = module.startPhoneLive({ token, stream: now, onState });
    } catch {
      onState('unavailable');
    } finally {
      this.#loading = false;
    }
  }

  stop(): void {
    this.#live?.stop();
    this.#live = undefined;
    this.#options.onState(undefined);
  }
}
