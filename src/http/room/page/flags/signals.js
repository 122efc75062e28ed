// @ts-check
/**
 * The automated flags that need no model (docs/automated-flags.md), read from what the browser
 * itself says: the page hidden or the window unfocused (tab_switch), the screen share's track ended
 * (screen_share_ended), full screen left after it was entered (fullscreen_exit), a second screen
 * (second_screen, from `screen.isExtended`, Chromium only), and a camera whose name is that of a
 * known virtual camera (virtual_camera). Each is an episode from when it began to when it ended.
 */

/** @typedef {import('./episodes.js').Episodes} Episodes */

/**
 * Names of virtual cameras (programs that show a video or another picture as if it were a camera).
 * Matched against the camera's label, case-insensitively.
 */
export const VIRTUAL_CAMERA_NAMES = [
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
 * Whether a camera label names a virtual camera. "OBS Virtual Camera", "ManyCam Virtual Webcam" and
 * "e2eSoft VCam" do; "Integrated Webcam" and "FaceTime HD Camera" do not. Whole words only, so
 * "Jobs Cam" is not OBS.
 * @param {string} label
 */
export function isVirtualCamera(label) {
  const name = label.toLowerCase();
  return VIRTUAL_CAMERA_NAMES.some((known) => new RegExp(`(^|[^a-z0-9])${known}([^a-z0-9]|$)`).test(name));
}

export class BrowserSignals {
  /** @param {Episodes} episodes */
  constructor(episodes) {
    this.episodes = episodes;
    this.unloading = false;
    this.wasFullscreen = document.fullscreenElement !== null;
    /** @type {WeakSet<MediaStreamTrack>} */
    this.watched = new WeakSet();
    /** @type {(() => void)[]} */
    this.undo = [];
  }

  /**
   * @param {EventTarget} target
   * @param {string} type
   * @param {() => void} listener
   */
  on(target, type, listener) {
    target.addEventListener(type, listener);
    this.undo.push(() => target.removeEventListener(type, listener));
  }

  start() {
    const { episodes } = this;
    // A reload or a closed tab hides the page too; that is not a switch.
    this.on(window, 'beforeunload', () => (this.unloading = true));
    this.on(window, 'pagehide', () => (this.unloading = true));
    const away = () => {
      if (this.unloading) return;
      const gone = document.hidden || !document.hasFocus();
      episodes.set('tab_switch', gone, 1, 0, 0);
    };
    this.on(document, 'visibilitychange', away);
    this.on(window, 'blur', away);
    this.on(window, 'focus', away);
    this.on(document, 'fullscreenchange', () => {
      const full = document.fullscreenElement !== null;
      if (full) this.wasFullscreen = true;
      episodes.set('fullscreen_exit', this.wasFullscreen && !full, 1, 0, 0);
    });
    const screen = /** @type {Screen & EventTarget & { isExtended?: boolean }} */ (window.screen);
    const extended = () => {
      if (typeof screen.isExtended === 'boolean') episodes.set('second_screen', screen.isExtended, 1, 0, 0);
    };
    extended();
    this.on(screen, 'change', extended);
  }

  /**
   * Watches the streams the room records: the camera's name, the screen share's end.
   * @param {MediaStream | undefined} camera
   * @param {MediaStream | undefined} screen
   */
  useStreams(camera, screen) {
    const { episodes } = this;
    const video = camera?.getVideoTracks()[0];
    if (video !== undefined) episodes.set('virtual_camera', isVirtualCamera(video.label), 0.9, 0, 0);
    const shared = screen?.getVideoTracks()[0];
    if (shared === undefined) return;
    // A new live share ends the episode of the one that ended.
    if (shared.readyState === 'live') episodes.set('screen_share_ended', false, 1, 0, 0);
    if (this.watched.has(shared)) return;
    this.watched.add(shared);
    shared.addEventListener('ended', () => {
      if (!this.unloading) episodes.set('screen_share_ended', true, 1, 0, 0);
    });
  }

  stop() {
    for (const undo of this.undo.splice(0)) undo();
  }
}
