/**
 * What the live proctoring browser tests share: how long media may take on a loaded machine, and
 * counting the frames a video element presents (requestVideoFrameCallback).
 */
import type { Locator, Page } from 'playwright-core';

/** How long media may take to start flowing (or to come back) on a loaded machine. */
export const MEDIA_TIMEOUT = 45_000;

/**
 * Waits until the video element shows `wanted` new frames (requestVideoFrameCallback), and returns
 * how many frames it presented meanwhile; fails after `timeout` ms saying how far it got.
 */
export async function framesAdvance(video: Locator, wanted = 5, timeout = MEDIA_TIMEOUT): Promise<number> {
  await video.waitFor({ state: 'attached', timeout });
  return video.evaluate(
    (element, { frames, ms }) =>
      new Promise<number>((resolve, reject) => {
        const target = element as HTMLVideoElement;
        let first: number | undefined;
        let seen = 0;
        const timer = setTimeout(
          () => reject(new Error(`only ${seen} frames in ${ms} ms (readyState ${target.readyState})`)),
          ms,
        );
        const step = (_now: number, meta: VideoFrameCallbackMetadata) => {
          first ??= meta.presentedFrames;
          seen += 1;
          if (seen < frames) {
            target.requestVideoFrameCallback(step);
            return;
          }
          clearTimeout(timer);
          resolve(meta.presentedFrames - first);
        };
        target.requestVideoFrameCallback(step);
      }),
    { frames: wanted, ms: timeout },
  );
}

/**
 * Waits until the tile of session `sessionId` on the proctor wall says the live status `status`
 * (its `.tile-live` element's class), asking as often as the page paints, for up to `timeout` ms.
 */
export async function tileSays(
  wall: Page,
  sessionId: number,
  status: 'offline' | 'connecting' | 'live',
  timeout = MEDIA_TIMEOUT,
): Promise<void> {
  await wall.waitForFunction(
    ({ id, wanted }) => {
      const live = document.querySelector(`button.live-tile[data-session="${id}"] .tile-live`);
      return live?.classList.contains(`live-${wanted}`) === true;
    },
    { id: sessionId, wanted: status },
    { timeout, polling: 100 },
  );
}
