/**
 * The candidates the wall is watching over its live connection: exactly those it shows (the tiles of
 * the page in view and the enlarged candidate), each with its state, camera and screen streams (and,
 * in an exam with a phone camera, the phone's) and its connection quality, measured every few
 * seconds. A tile and the enlarged view show the same streams, so a candidate is subscribed to once
 * however many places show it.
 */
import { SvelteMap } from 'svelte/reactivity';
import type { LiveConnection, StreamKind, Watch, WatchState } from './live-media';
import { qualityOf, type Quality } from './live-wall';

/** One watched candidate, as the tiles read it. */
export interface Feed {
  readonly state: WatchState;
  readonly camera: MediaStream | undefined;
  readonly screen: MediaStream | undefined;
  /** The candidate's phone (its side view) while its video flows; undefined otherwise. */
  readonly phone: MediaStream | undefined;
  /** From the last measure while the media flowed; undefined before the first. */
  readonly quality: Quality | undefined;
}

/**
 * Shows `stream` in `video` (none: an empty picture), muted as asked; a stream already shown keeps
 * playing. Returns the play() of a stream newly shown (it rejects when the browser refuses to play,
 * as it does sound before the user has acted on the page), or undefined when nothing new plays.
 */
export function showStream(
  video: HTMLVideoElement,
  stream: MediaStream | undefined,
  muted: boolean,
): Promise<void> | undefined {
  video.muted = muted;
  const next = stream ?? null;
  if (video.srcObject === next) return undefined;
  video.srcObject = next;
  return next === null ? undefined : video.play();
}

/** How often the connection figures are read. */
const MEASURE_EVERY_MS = 3000;

interface Watching {
  /** Undefined only while the watch is being started. */
  watch: Watch | undefined;
  /** False once stopped: what the stopped watch still reports is ignored. */
  current: boolean;
}

export class LiveFeeds {
  /** The watched candidates by session id. */
  readonly feeds = new SvelteMap<number, Feed>();
  readonly #watching = new Map<number, Watching>();
  #connection: LiveConnection | undefined;
  #phones = false;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor() {
    this.#timer = setInterval(() => void this.#measure(), MEASURE_EVERY_MS);
  }

  /**
   * Watches over `connection` from now on (undefined: none), the candidates' phones too when
   * `phones` (the exam has `mobile_cam`); what was watched on the old one stops.
   */
  use(connection: LiveConnection | undefined, phones = false): void {
    if (connection === this.#connection && phones === this.#phones) return;
    this.show([]);
    this.#connection = connection;
    this.#phones = phones;
  }

  /** Watches exactly the candidates `ids`: starts those not watched yet and stops the others. */
  show(ids: readonly number[]): void {
    const wanted = new Set(ids);
    for (const [id, watching] of this.#watching) {
      if (wanted.has(id)) continue;
      watching.current = false;
      watching.watch?.stop();
      this.#watching.delete(id);
      this.feeds.delete(id);
    }
    const connection = this.#connection;
    if (connection === undefined) return;
    for (const id of wanted) {
      if (this.#watching.has(id)) continue;
      this.feeds.set(id, {
        state: 'waiting',
        camera: undefined,
        screen: undefined,
        phone: undefined,
        quality: undefined,
      });
      const watching: Watching = { watch: undefined, current: true };
      this.#watching.set(id, watching);
      const update = (patch: Partial<Feed>) => {
        const feed = this.feeds.get(id);
        if (watching.current && feed !== undefined) this.feeds.set(id, { ...feed, ...patch });
      };
      watching.watch = connection.watch(id, {
        onStream: (kind: StreamKind, stream: MediaStream) =>
          update(kind === 'camera' ? { camera: stream } : { screen: stream }),
        onState: (state: WatchState) => update(state === 'live' ? { state } : { state, quality: undefined }),
        ...(this.#phones
          ? { onPhone: (stream: MediaStream | null) => update({ phone: stream ?? undefined }) }
          : {}),
      });
    }
  }

  /** Stops every watch and the measuring. Idempotent. */
  close(): void {
    this.show([]);
    this.#connection = undefined;
    clearInterval(this.#timer);
  }

  async #measure(): Promise<void> {
    for (const [id, watching] of this.#watching) {
      if (watching.watch === undefined || this.feeds.get(id)?.state !== 'live') continue;
      try {
        const quality = qualityOf(await watching.watch.stats());
        const feed = this.feeds.get(id);
        if (watching.current && feed !== undefined) this.feeds.set(id, { ...feed, quality });
      } catch {
        // A watch stopping while measured: its next measure (if any) says more.
      }
    }
  }
}
