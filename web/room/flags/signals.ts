/**
 * The automated flags that need no model (docs/automated-flags.md), taken from what the browser
 * itself tells the page: the page hidden or the window unfocused (tab_switch), the shared screen's
 * track ended (screen_share_ended), full screen left after it was entered (fullscreen_exit), a
 * second screen (second_screen, from `screen.isExtended`, Chromium only) and a camera named like a
 * known virtual camera (virtual_camera; a screen magnifier's camera counts too, with less
 * confidence, and the server keeps it informational for a student who uses assistive technology,
 * docs/accommodations.md). They are events, so they stay on the page's main thread;
 * each is an episode from when it began to when it ended.
 */
import type { Episodes } from './episodes.ts';

/**
 * Names of virtual cameras (programs that pass off a video or another picture as a camera), matched
 * against the camera's label without regard to case.
 */
export const VIRTUAL_CAMERA_NAMES: readonly string[] = [
  'obs',
  'manycam',
  'snap camera',
  'xsplit',
  'e2esoft',
  'vcam',
  'camtwist',
  'splitcam',
  'youcam',
  'virtual',
];

/**
 * Names of the cameras screen magnifiers and video magnifiers put in front of the real one (the
 * magnified picture passed on as a camera): assistive technology rather than a deception, so
 * flagged with less confidence (MAGNIFIER_CONFIDENCE).
 */
export const MAGNIFIER_CAMERA_NAMES: readonly string[] = [
  'zoomtext',
  'supernova',
  'magnifier',
  'magnification',
  'magnify',
];

/** The confidence of a virtual camera that is not a magnifier's, and of a magnifier's. */
export const VIRTUAL_CAMERA_CONFIDENCE = 0.9;
export const MAGNIFIER_CONFIDENCE = 0.5;

/** Whether the lowercase `name` holds `known` as a whole word ("jobs cam" does not hold "obs"). */
function holdsWord(name: string, known: string): boolean {
  return new RegExp(`(^|[^a-z0-9])${known}([^a-z0-9]|$)`).test(name);
}

/** Whether a camera label names a screen magnifier's camera ("ZoomText Camera"). Returns the answer. */
export function isMagnifierCamera(label: string): boolean {
  const name = label.toLowerCase();
  return MAGNIFIER_CAMERA_NAMES.some((known) => holdsWord(name, known));
}

/**
 * Whether a camera label names a virtual camera: "OBS Virtual Camera", "ManyCam Virtual Webcam",
 * "e2eSoft VCam" and a magnifier's "ZoomText Camera" do, "Integrated Webcam" and "FaceTime HD
 * Camera" do not. Only whole words count, so "Jobs Cam" is not OBS. Returns the answer.
 */
export function isVirtualCamera(label: string): boolean {
  const name = label.toLowerCase();
  return VIRTUAL_CAMERA_NAMES.some((known) => holdsWord(name, known)) || isMagnifierCamera(label);
}

/** The confidence of the virtual_camera flag of a camera label: 0 for a real camera. */
export function virtualCameraConfidence(label: string): number {
  if (!isVirtualCamera(label)) return 0;
  // A magnifier's camera named "… Virtual Camera" is still a magnifier's.
  return isMagnifierCamera(label) ? MAGNIFIER_CONFIDENCE : VIRTUAL_CAMERA_CONFIDENCE;
}

/** `window.screen` where the browser may say whether the desktop spans several screens. */
type ExtendedScreen = Screen & EventTarget & { isExtended?: boolean };

export class BrowserSignals {
  private readonly episodes: Episodes;
  private unloading = false;
  private wasFullscreen: boolean;
  private readonly watched = new WeakSet<MediaStreamTrack>();
  private readonly undo: (() => void)[] = [];

  constructor(episodes: Episodes) {
    this.episodes = episodes;
    this.wasFullscreen = document.fullscreenElement !== null;
  }

  private on(target: EventTarget, type: string, listener: () => void): void {
    target.addEventListener(type, listener);
    this.undo.push(() => target.removeEventListener(type, listener));
  }

  start(): void {
    const { episodes } = this;
    // Reloading or closing the tab hides the page as well; that is no switch.
    this.on(window, 'beforeunload', () => (this.unloading = true));
    this.on(window, 'pagehide', () => (this.unloading = true));
    const away = () => {
      if (this.unloading) return;
      episodes.set('tab_switch', document.hidden || !document.hasFocus(), 1, 0, 0);
    };
    this.on(document, 'visibilitychange', away);
    this.on(window, 'blur', away);
    this.on(window, 'focus', away);
    this.on(document, 'fullscreenchange', () => {
      const full = document.fullscreenElement !== null;
      if (full) this.wasFullscreen = true;
      episodes.set('fullscreen_exit', this.wasFullscreen && !full, 1, 0, 0);
    });
    const screen = window.screen as ExtendedScreen;
    const extended = () => {
      if (typeof screen.isExtended === 'boolean') episodes.set('second_screen', screen.isExtended, 1, 0, 0);
    };
    extended();
    this.on(screen, 'change', extended);
  }

  /** Watches the streams the room records: the camera's name, and the end of the screen share. */
  useStreams(camera: MediaStream | undefined, screen: MediaStream | undefined): void {
    const { episodes } = this;
    const video = camera?.getVideoTracks()[0];
    if (video !== undefined) {
      const confidence = virtualCameraConfidence(video.label);
      episodes.set('virtual_camera', confidence > 0, confidence, 0, 0);
    }
    const shared = screen?.getVideoTracks()[0];
    if (shared === undefined) return;
    // A new live share ends the episode of the share that ended.
    if (shared.readyState === 'live') episodes.set('screen_share_ended', false, 1, 0, 0);
    if (this.watched.has(shared)) return;
    this.watched.add(shared);
    shared.addEventListener('ended', () => {
      if (!this.unloading) episodes.set('screen_share_ended', true, 1, 0, 0);
    });
  }

  stop(): void {
    for (const undo of this.undo.splice(0)) undo();
  }
}
