/**
 * The review screen's player: the master video (the longest recording) drives the clock the
 * timeline, the buttons and the keyboard shortcuts read and move; the other videos (up to two:
 * webcam, screen, phone) follow it (lib/video-sync.ts). State is reactive, so the screen shows the
 * playhead as it moves.
 */
import { syncVideos } from './video-sync';

/** A video that follows the master; `sound`: it is the one to hear (the others are muted). */
export interface Follower {
  readonly video: HTMLVideoElement;
  readonly sound: boolean;
}

/** The speeds offered (playbackRate). */
export const SPEEDS = [0.5, 1, 2, 4, 8, 16] as const;

export class ReviewPlayer {
  /** The playhead (s from the recording start). */
  current = $state(0);
  /** The timeline's length (s): the longest recording. */
  duration = $state(0);
  paused = $state(true);
  rate = $state(1);
  #master: HTMLVideoElement | undefined;

  /**
   * Takes `master` as the clock, each of `followers` following it (muted unless marked `sound`);
   * `duration` is the recordings' length as the service reports it, used until the video knows its
   * own. Returns the detach function.
   */
  attach(master: HTMLVideoElement, followers: readonly Follower[], duration: number): () => void {
    this.#master = master;
    this.duration = duration;
    master.playbackRate = this.rate;
    const read = (): void => {
      this.current = master.currentTime;
      this.paused = master.paused;
      this.rate = master.playbackRate;
      if (Number.isFinite(master.duration) && master.duration > this.duration)
        this.duration = master.duration;
    };
    const events = [
      'timeupdate',
      'play',
      'pause',
      'seeked',
      'seeking',
      'ratechange',
      'durationchange',
      'ended',
    ];
    for (const event of events) master.addEventListener(event, read);
    const unsyncs = followers.map(({ video, sound }) => syncVideos(master, video, { sound }));
    read();
    return () => {
      for (const event of events) master.removeEventListener(event, read);
      for (const unsync of unsyncs) unsync();
      if (this.#master === master) this.#master = undefined;
    };
  }

  /** Whether a video is attached (the controls work). */
  get ready(): boolean {
    return this.#master !== undefined;
  }

  toggle(): void {
    const master = this.#master;
    if (master === undefined) return;
    if (master.paused) master.play().catch(() => undefined);
    else master.pause();
  }

  /** Moves the playhead to `seconds`, kept within the recording. */
  seek(seconds: number): void {
    const master = this.#master;
    if (master === undefined) return;
    const end = Number.isFinite(master.duration) ? master.duration : this.duration;
    const time = Math.min(Math.max(0, seconds), end);
    master.currentTime = time;
    // Shown at once: the master's own time moves when the seek lands.
    this.current = time;
  }

  skip(delta: number): void {
    this.seek(this.current + delta);
  }

  setRate(rate: number): void {
    this.rate = rate;
    if (this.#master !== undefined) this.#master.playbackRate = rate;
  }
}
