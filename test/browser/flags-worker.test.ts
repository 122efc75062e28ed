/**
 * The room's face detector runs its models in a Web Worker (web/room/flags/detector.worker.ts,
 * docs/automated-flags.md). In Chromium with a fake camera, the detector built as the web build
 * builds it loads Human in its worker under the policies the service sends (the room's for the page,
 * ASSET_POLICY for the worker's script), runs on TensorFlow.js's WebAssembly backend, computes the
 * face photo's descriptor there, and answers for pictures and for the playing camera, without a
 * policy violation. (The speech detector's worker is not tried here: Playwright cannot answer an
 * audio worklet's request, so it is tried in the room, test/browser/room-flags-smoke.test.ts.)
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  analyseCamera,
  detectorState,
  detectPicture,
  FLAG_SETTINGS_DEFAULTS,
  openDetectorPage,
  startCamera,
} from '../flags/detector-page.ts';
import { fakeCameraVideos, launchChromiumWithCamera, type BuiltVideo } from '../flags/fake-camera.ts';

/** How long loading and a few camera detections may take on a loaded machine. */
const TIMEOUT = 90_000;

describe('the face detector in its worker, in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let backend: string;
  let videos: Record<'face' | 'two_faces' | 'no_face', BuiltVideo>;
  const lines: string[] = [];
  const workers: string[] = [];

  before(async () => {
    videos = await fakeCameraVideos(['face', 'two_faces', 'no_face']);
    browser = await launchChromiumWithCamera(videos.face.y4m);
    const context = await browser.newContext();
    context.on('page', (opened) => {
      opened.on('console', (message) => lines.push(message.text()));
      opened.on('worker', (worker) => {
        workers.push(worker.url());
        worker.on('console', (message) => lines.push(`worker: ${message.text()}`));
      });
    });
    const photo = `data:image/png;base64,${fs.readFileSync(videos.face.png).toString('base64')}`;
    ({ page, backend } = await openDetectorPage(context, FLAG_SETTINGS_DEFAULTS, photo));
  });

  after(async () => {
    await browser?.close();
  });

  it('loads Human in a module worker served from /assets/, on WebAssembly, with the face photo described', async () => {
    assert.equal(backend, 'wasm', lines.join(' | '));
    assert.equal(workers.length, 1, workers.join(' '));
    assert.match(workers[0] ?? '', /\/assets\/detector\.worker-[\w-]+\.js$/);
    const state = await detectorState(page);
    assert.ok(state.reference, `the face photo gave a descriptor: ${state.lines.join(' | ')}`);
    assert.ok(
      state.lines.some((line) => /^warm-up on wasm: \d+ ms$/.test(line)),
      state.lines.join(' | '),
    );
  });

  it('finds one face, two faces and none in pictures', async (t) => {
    const one = await detectPicture(page, fs.readFileSync(videos.face.png));
    assert.deepEqual(Object.keys(one.signals), [], 'one face facing the camera raises nothing');
    const two = await detectPicture(page, fs.readFileSync(videos.two_faces.png));
    assert.ok('multiple_faces' in two.signals, JSON.stringify(two.signals));
    const none = await detectPicture(page, fs.readFileSync(videos.no_face.png));
    assert.ok('no_face' in none.signals, JSON.stringify(none.signals));
    t.diagnostic(
      `one detection, frame taken and sent to the worker: ${[one, two, none].map((found) => Math.round(found.ms)).join(', ')} ms`,
    );
  });

  it('looks at the playing camera at its rate', async () => {
    await startCamera(page);
    await analyseCamera(page);
    const started = Date.now();
    let state = await detectorState(page);
    while (state.count < 3 && !state.stopped && Date.now() - started < TIMEOUT) {
      await page.waitForTimeout(250);
      state = await detectorState(page);
    }
    assert.ok(state.count >= 3 || state.stopped, `detections so far: ${state.count}`);
    if (!state.stopped) assert.deepEqual(Object.keys(state.signals), [], JSON.stringify(state.signals));
    assert.ok(
      state.lines.some((line) => /^first detection on wasm: \d+ ms$/.test(line)),
      state.lines.join(' | '),
    );
  });

  it('breaks no policy and fails nowhere', (t) => {
    for (const line of lines) t.diagnostic(line);
    const refused = lines.filter((line) => /Content Security Policy|Refused to/i.test(line));
    assert.deepEqual(refused, []);
    assert.ok(!lines.some((line) => /failed/i.test(line)), lines.join(' | '));
  });
});
