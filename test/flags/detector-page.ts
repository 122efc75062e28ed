/**
 * A bare page that runs the room's own face detector (src/http/room/page/flags/face.js, the
 * `FaceDetector` the exam room uses, with Human's models from the installed package) in Chromium,
 * for checking the fake-camera videos and for the flags-accuracy and flags-cost benchmarks. Nothing
 * is served over a socket: the page lives at a made-up origin Playwright answers itself
 * (`context.route`), serving under `/models/` exactly the files the room serves under
 * `/room/models/<hash>/` (src/http/room/flag-models.ts), so it works on a closed network like the
 * room does and needs no running service.
 *
 * Instead of the room's episode keeper the detector gets a recorder: for each detection, the
 * signals it raised (no_face, multiple_faces, looking_away) with their confidence.
 */
import type { BrowserContext, Page } from 'playwright-core';
import type { FlagSettings } from '../../src/domain/flags/settings.ts';
import { flagModelSet } from '../../src/http/room/flag-models.ts';

/** The made-up origin of the page (never resolved: Playwright answers every request); HTTPS, so the page is a secure context and may use the camera. */
export const DETECTOR_ORIGIN = 'https://flags.invigil.test';

/** The effective settings the room gets when an exam sets none (src/domain/flags/settings.ts). */
export { FLAG_SETTINGS_DEFAULTS } from '../../src/domain/flags/settings.ts';

/** One detection: the signals the detector raised, and how long it took. */
export interface Detection {
  /** Signal types that held in this detection, each with its confidence. */
  readonly signals: Readonly<Record<string, number>>;
  readonly ms: number;
}

/**
 * The page: loads the room's FaceDetector and offers the calls the tests and benchmarks make
 * (plain JavaScript, run by Chromium; Node's type checker does not see it).
 */
const PAGE_HTML = `<!doctype html><meta charset="utf-8"><title>face detector</title>
<canvas id="canvas"></canvas>
<script type="module">
  import { FaceDetector } from '/models/face.js';
  const held = {};
  const rates = [];
  let detector;
  let camera;
  window.openDetector = async (settings) => {
    const episodes = {
      set(type, active, confidence) {
        if (active) held[type] = confidence;
        else delete held[type];
      },
    };
    detector = new FaceDetector({
      base: '/models/', settings, episodes, facePhoto: null,
      reportRate: (hz) => rates.push(hz), log: (line) => console.info(line),
    });
    await detector.load();
    return detector.backend;
  };
  // One detection on a picture, the way the detector looks at a camera frame (a canvas is a
  // picture Human reads like a video element).
  window.detectPicture = async (base64) => {
    const image = new Image();
    image.src = 'data:image/png;base64,' + base64;
    await image.decode();
    const canvas = document.getElementById('canvas');
    canvas.width = image.naturalWidth;
    canvas.height = image.naturalHeight;
    canvas.getContext('2d').drawImage(image, 0, 0);
    detector.video = canvas;
    const started = performance.now();
    await detector.detectOnce(started);
    return { signals: { ...held }, ms: performance.now() - started };
  };
  // The camera, playing but not yet analysed (the cost benchmark's baseline).
  window.startCamera = async () => {
    camera = await navigator.mediaDevices.getUserMedia({ video: { width: 640, height: 480 } });
    const preview = document.createElement('video');
    preview.muted = true;
    preview.srcObject = camera;
    document.body.append(preview);
    await preview.play();
  };
  // fixed: keep the asked rate whatever a detection costs (the room lowers it, or stops, when slow),
  // so the cost of detecting at that rate can be measured.
  window.analyseCamera = (fixed) => {
    if (fixed) {
      detector.adapt = (took) => {
        detector.lastMs = took;
        detector.count += 1;
        detector.total += took;
      };
    }
    detector.useStream(camera);
  };
  window.detectorState = () => ({
    count: detector.count, total: detector.total, hz: detector.hz, rates: [...rates], signals: { ...held },
    stopped: detector.stopped,
  });
</script>`;

/** The page's functions (defined by PAGE_HTML's script), as Node sees them. */
interface DetectorWindow {
  openDetector(settings: FlagSettings): Promise<string>;
  detectPicture(base64: string): Promise<Detection>;
  startCamera(): Promise<void>;
  analyseCamera(fixed: boolean): void;
  detectorState(): DetectorState;
}

/** What the detector has done so far: detections, their total milliseconds, its rate, rate reports. */
export interface DetectorState {
  readonly count: number;
  readonly total: number;
  readonly hz: number;
  readonly rates: readonly number[];
  readonly signals: Readonly<Record<string, number>>;
  /** Whether the detector stopped itself (too slow for this device) or failed for good. */
  readonly stopped: boolean;
}

/**
 * Opens the page in `context` and loads the room's FaceDetector with `settings` (the room view's
 * effective flag settings). Returns the page and the TensorFlow backend that runs. Throws when the
 * detector cannot load.
 */
export async function openDetectorPage(
  context: BrowserContext,
  settings: FlagSettings,
): Promise<{ page: Page; backend: string }> {
  const models = flagModelSet();
  await context.route(`${DETECTOR_ORIGIN}/**`, async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === '/') {
      await route.fulfill({ contentType: 'text/html', body: PAGE_HTML });
      return;
    }
    const file = url.pathname.startsWith('/models/')
      ? models.files.get(url.pathname.slice('/models/'.length))
      : undefined;
    if (file === undefined) {
      await route.fulfill({ status: 404, body: 'not found' });
      return;
    }
    await route.fulfill({ contentType: file.contentType, body: file.body });
  });
  const page = await context.newPage();
  await page.goto(`${DETECTOR_ORIGIN}/`);
  await page.waitForFunction(() => 'openDetector' in globalThis);
  const backend = await page.evaluate(
    (given) => (globalThis as unknown as DetectorWindow).openDetector(given),
    settings,
  );
  return { page, backend };
}

/**
 * Runs one detection of the room's detector on a picture (PNG bytes), the way it runs on a camera
 * frame. Returns the signals raised; throws when the detector fails.
 */
export async function detectPicture(page: Page, png: Buffer): Promise<Detection> {
  return page.evaluate(
    (base64) => (globalThis as unknown as DetectorWindow).detectPicture(base64),
    png.toString('base64'),
  );
}

/** Starts the page's camera (Chromium's fake camera) and plays it, without analysing it yet. */
export async function startCamera(page: Page): Promise<void> {
  await page.evaluate(() => (globalThis as unknown as DetectorWindow).startCamera());
}

/**
 * Hands the playing camera to the detector, which then runs at its rate: adapting as in the room,
 * or (`fixed`) at the asked rate however long a detection takes.
 */
export async function analyseCamera(page: Page, fixed = false): Promise<void> {
  await page.evaluate((keep) => (globalThis as unknown as DetectorWindow).analyseCamera(keep), fixed);
}

/** What the detector has done so far. */
export async function detectorState(page: Page): Promise<DetectorState> {
  return page.evaluate(() => (globalThis as unknown as DetectorWindow).detectorState());
}
