/**
 * A bare page that runs the room's own face detector (web/room/flags/face.ts, the `FaceDetector` the
 * exam room uses, whose models run in its Web Worker, with Human's models from the installed package)
 * in Chromium, for checking the fake-camera videos, for the worker's own browser test and for the
 * flags-accuracy and flags-cost benchmarks. The detector is built here with Vite the way the web
 * build builds it (buildDetector), so no `npm run build:web` is needed. Nothing is served over a
 * socket: the page lives at a made-up origin Playwright answers itself (`context.route`), serving
 * under `/models/` exactly the files the room serves under `/room/models/<hash>/`
 * (src/http/room/flag-models.ts) and the built files under `/assets/` with the policy the service
 * sends with them (ASSET_POLICY), the page itself with the room's policy. So it works on a closed
 * network like the room does and needs no running service.
 *
 * Instead of the room's episode keeper the detector gets a recorder: for each detection, the
 * signals it raised (no_face, multiple_faces, looking_away) with their confidence.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { build } from 'vite';
import type { FlagSettings } from '../../src/domain/flags/settings.ts';
import { flagModelSet } from '../../src/http/room/flag-models.ts';
import { roomContentSecurityPolicy } from '../../src/http/room/page.routes.ts';
import { ASSET_POLICY } from '../../src/http/web-build.ts';

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

const FLAGS_DIR = path.resolve(import.meta.dirname, '../../web/room/flags');
const BUILD_ROOT = path.resolve(import.meta.dirname, '../../test-output/flags-detector');

let building: Promise<string> | undefined;

/**
 * Builds web/room/flags/face.ts (and the worker it starts) with Vite, as the web build does, into
 * test-output/flags-detector/<hash of the sources>/ (kept: the next run with the same sources reuses
 * it). Returns the directory, whose assets/ holds `face.js` and the worker's hashed file.
 */
export function buildDetector(): Promise<string> {
  building ??= (async () => {
    const digest = crypto.createHash('sha256');
    for (const name of fs.readdirSync(FLAGS_DIR).sort()) {
      digest.update(`${name}\n`).update(fs.readFileSync(path.join(FLAGS_DIR, name)));
    }
    const outDir = path.join(BUILD_ROOT, digest.digest('hex').slice(0, 16));
    if (fs.existsSync(path.join(outDir, 'assets/face.js'))) return outDir;
    await build({
      configFile: false,
      root: path.resolve(FLAGS_DIR, '../..'),
      base: '/',
      logLevel: 'warn',
      worker: { format: 'es' },
      build: {
        outDir,
        emptyOutDir: true,
        assetsDir: 'assets',
        assetsInlineLimit: 0,
        modulePreload: { polyfill: false },
        sourcemap: false,
        target: 'es2022',
        rollupOptions: {
          input: { face: path.join(FLAGS_DIR, 'face.ts') },
          preserveEntrySignatures: 'exports-only',
          output: { entryFileNames: 'assets/[name].js' },
        },
      },
    });
    return outDir;
  })();
  return building;
}

/**
 * The page's script: loads the room's FaceDetector and offers the calls the tests and benchmarks
 * make (plain JavaScript, run by Chromium; Node's type checker does not see it). A file of its own,
 * since the room's policy refuses inline scripts.
 */
const PAGE_SCRIPT = `
  import { FaceDetector } from '/assets/face.js';
  const held = {};
  const rates = [];
  const lines = [];
  let detector;
  let camera;
  window.openDetector = async (settings, facePhoto) => {
    const episodes = {
      set(type, active, confidence) {
        if (active) held[type] = confidence;
        else delete held[type];
      },
    };
    detector = new FaceDetector({
      base: '/models/', settings, episodes, facePhoto: facePhoto ?? null,
      reportRate: (hz) => rates.push(hz), log: (line) => { lines.push(line); console.info(line); },
    });
    await detector.load();
    return detector.backend;
  };
  // One detection on a picture, the way the detector looks at a camera frame (a canvas is a
  // picture the detector takes a frame from like a video element).
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
    // detectPicture may have left a canvas in the video's place.
    if (!(detector.video instanceof HTMLVideoElement)) {
      detector.video = document.createElement('video');
      detector.video.muted = true;
    }
    detector.useStream(camera);
  };
  window.detectorState = () => ({
    count: detector.count, total: detector.total, hz: detector.hz, rates: [...rates], signals: { ...held },
    stopped: detector.stopped, reference: detector.reference !== null, lines: [...lines],
  });
`;

const PAGE_HTML = `<!doctype html><meta charset="utf-8"><title>face detector</title>
<canvas id="canvas"></canvas>
<script type="module" src="/page.js"></script>`;

/** The room's own policy, for a service at the made-up origin without live proctoring. */
const PAGE_POLICY = roomContentSecurityPolicy({
  publicUrl: DETECTOR_ORIGIN,
  live: { engine: 'embedded', udpPortMin: 40000, udpPortMax: 40100, publicIp: undefined, iceServers: [] },
});

/** The page's functions (defined by PAGE_HTML's script), as Node sees them. */
interface DetectorWindow {
  openDetector(settings: FlagSettings, facePhoto?: string | null): Promise<string>;
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
  /** Whether the face photo gave a descriptor to compare with. */
  readonly reference: boolean;
  /** The detector's console lines so far. */
  readonly lines: readonly string[];
}

/**
 * Opens the page in `context` and loads the room's FaceDetector with `settings` (the room view's
 * effective flag settings) and, when given, a face photo (a data: address). Returns the page and the
 * TensorFlow backend that runs. Throws when the detector cannot load.
 */
export async function openDetectorPage(
  context: BrowserContext,
  settings: FlagSettings,
  facePhoto: string | null = null,
): Promise<{ page: Page; backend: string }> {
  const models = flagModelSet();
  const built = await buildDetector();
  await context.route(`${DETECTOR_ORIGIN}/**`, async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === '/') {
      await route.fulfill({
        contentType: 'text/html',
        headers: { 'content-security-policy': PAGE_POLICY },
        body: PAGE_HTML,
      });
      return;
    }
    if (url.pathname === '/page.js') {
      await route.fulfill({ contentType: 'text/javascript', body: PAGE_SCRIPT });
      return;
    }
    if (url.pathname.startsWith('/assets/')) {
      const file = path.join(built, 'assets', path.basename(url.pathname));
      if (!fs.existsSync(file)) {
        await route.fulfill({ status: 404, body: 'not found' });
        return;
      }
      await route.fulfill({
        contentType: 'text/javascript',
        headers: { 'content-security-policy': ASSET_POLICY },
        body: fs.readFileSync(file),
      });
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
    ([given, photo]) => (globalThis as unknown as DetectorWindow).openDetector(given, photo),
    [settings, facePhoto] as const,
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
