/**
 * The videos of one session (webcam, screen, phone) on the same clock: the master is played and
 * seeked by the reviewer, each follower does what it does (play, pause, seek, speed) and is put back
 * on the master's time whenever the two drift apart by more than DRIFT_LIMIT seconds.
 */

/** How far (s) the follower may drift from the master before it is seeked back. */
export const DRIFT_LIMIT = 0.3;

/** Whether the follower must be seeked to the master's time. */
export function drifted(masterTime: number, followerTime: number, limit = DRIFT_LIMIT): boolean {
  return Math.abs(masterTime - followerTime) > limit;
}

/** The follower's time for the master's: the same, or its own end when it is shorter. */
function followerTime(follower: HTMLVideoElement, time: number): number {
  return Number.isFinite(follower.duration) ? Math.min(time, follower.duration) : time;
}

/**
 * Makes `follower` follow `master`. The follower is muted unless `sound` says it carries the one
 * sound track to hear (the webcam's, when another recording is the master: the screen and the phone
 * record no sound). Returns the function that lets it go.
 */
export function syncVideos(
  master: HTMLVideoElement,
  follower: HTMLVideoElement,
  { sound = false }: { sound?: boolean } = {},
): () => void {
  follower.muted = !sound;
  follower.playbackRate = master.playbackRate;

  const seekFollower = (): void => {
    follower.currentTime = followerTime(follower, master.currentTime);
  };
  /** Past the follower's end, it rests on its last frame while the master plays on. */
  const followerHasMore = (): boolean =>
    !Number.isFinite(follower.duration) || master.currentTime < follower.duration;
  const play = (): void => {
    seekFollower();
    if (followerHasMore()) follower.play().catch(() => undefined);
  };
  const pause = (): void => {
    follower.pause();
    seekFollower();
  };
  const rate = (): void => {
    follower.playbackRate = master.playbackRate;
  };
  const check = (): void => {
    if (master.paused || master.seeking) return;
    if (!followerHasMore()) {
      if (!follower.paused) follower.pause();
      return;
    }
    if (follower.paused) follower.play().catch(() => undefined);
    if (!follower.seeking && drifted(master.currentTime, follower.currentTime)) seekFollower();
  };

  const listeners: [string, () => void][] = [
    ['play', play],
    ['pause', pause],
    ['seeking', seekFollower],
    ['ratechange', rate],
    ['timeupdate', check],
    ['ended', pause],
  ];
  for (const [event, listener] of listeners) master.addEventListener(event, listener);
  return () => {
    for (const [event, listener] of listeners) master.removeEventListener(event, listener);
  };
}
