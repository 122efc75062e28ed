/**
 * Whether this browser can record what a candidate page needs, judged by what it offers, never by
 * its name (docs/room.md "Browsers"): a browser is refused only when it truly cannot record. The
 * user agent is read elsewhere to describe the browser to staff, never to refuse it.
 */

/** What the page will record with: the camera (and microphone), the screen, or neither. */
export interface RecordingNeeds {
  readonly camera: boolean;
  readonly screen: boolean;
}

/** What the browser offers for recording. */
export interface BrowserAbilities {
  /** MediaRecorder exists. */
  readonly recorder: boolean;
  /** MediaRecorder writes WebM or MP4, the containers the service stores (or cannot say). */
  readonly formats: boolean;
  /** navigator.mediaDevices.getUserMedia exists (a secure page, a browser with camera access). */
  readonly camera: boolean;
  /** navigator.mediaDevices.getDisplayMedia exists (no phone or tablet browser has it). */
  readonly screen: boolean;
}

/** Why the browser cannot take part, most basic first; each has its own sentence in the catalogues. */
export type BrowserShortfall = 'recorder' | 'formats' | 'camera' | 'screen';

/** The containers the service stores recordings in (docs/recordings.md). */
const STORED_TYPES = ['video/webm', 'video/mp4'] as const;

/** This page's window, as the parts read here (typed loosely: Node's types know no media devices). */
function pageWindow(): MediaScope {
  const scope: unknown = globalThis;
  return scope as MediaScope;
}

/** The parts of a window read here: the window itself, or a stand-in in a test. */
export interface MediaScope {
  readonly MediaRecorder?: unknown;
  readonly navigator?: {
    readonly mediaDevices?: { readonly getUserMedia?: unknown; readonly getDisplayMedia?: unknown };
  };
}

/**
 * Reads what the browser of `scope` (by default this page's window) offers. Never throws (a missing
 * piece reads as false).
 */
export function browserAbilities(scope: MediaScope = pageWindow()): BrowserAbilities {
  const recorderClass = scope.MediaRecorder;
  const recorder = typeof recorderClass === 'function';
  const isTypeSupported: unknown = recorder
    ? (recorderClass as { isTypeSupported?: unknown }).isTypeSupported
    : undefined;
  let formats = recorder;
  if (typeof isTypeSupported === 'function') {
    try {
      formats = STORED_TYPES.some((type) => isTypeSupported.call(recorderClass, type) === true);
    } catch {
      formats = true; // A browser that cannot answer is given the benefit of the doubt.
    }
  }
  const devices = scope.navigator?.mediaDevices;
  return {
    recorder,
    formats,
    camera: typeof devices?.getUserMedia === 'function',
    screen: typeof devices?.getDisplayMedia === 'function',
  };
}

/**
 * What keeps a browser with `abilities` from recording what `needs` asks (`'something'`: a page
 * that records, not yet knowing what). Returns undefined when it can (and always when nothing is
 * recorded), else the first shortfall.
 */
export function recordingShortfall(
  needs: RecordingNeeds | 'something',
  abilities: BrowserAbilities,
): BrowserShortfall | undefined {
  const known = needs === 'something' ? { camera: false, screen: false } : needs;
  if (needs !== 'something' && !known.camera && !known.screen) return undefined;
  if (!abilities.recorder) return 'recorder';
  if (!abilities.formats) return 'formats';
  if (known.camera && !abilities.camera) return 'camera';
  if (known.screen && !abilities.screen) return 'screen';
  return undefined;
}
