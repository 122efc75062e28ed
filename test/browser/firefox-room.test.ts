/**
 * The candidate exam room in Firefox: Debian's Firefox ESR, headless, driven by puppeteer-core over
 * WebDriver BiDi, with Firefox's fake camera and microphone (the prefs below; no prompt). A student
 * opens the room link, runs the checks, takes both photos, accepts the terms, starts, records the
 * webcam with the on-device detectors running, goes full screen and finishes; the server then holds
 * Firefox's WebM (VP8 + Opus) chunks, and the finalisation job turns them into one file mediabunny
 * reads. Headless Firefox has no screen to share (getDisplayMedia answers NotFoundError, fake
 * devices or not), so the exam records the webcam only; the first test pins that down, so it fails
 * the day Firefox can share a screen headless (docs/room.md "Browsers").
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ALL_FORMATS, BufferSource, Input } from 'mediabunny';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { SCREENSHOT_DIR } from '../helpers/browser.ts';
import { fetchAddress } from '../helpers/files.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { browserDialects, startTestServer, type TestServer } from '../helpers/server.ts';
import type { Scalar } from '../helpers/signing.ts';
import { runDueJobs } from '../mail/support.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** Debian's Firefox ESR (package `firefox-esr`, scripts/ensure-tools.sh); FIREFOX_PATH names another. */
const FIREFOX_PATH = process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr';

/**
 * Firefox's own test switches: fake camera and microphone, no permission prompt, sound that may play
 * without a gesture (the speakers check), and no calls home from the closed test network.
 */
const FIREFOX_PREFS = {
  'media.navigator.streams.fake': true,
  'media.navigator.permission.disabled': true,
  'media.getdisplaymedia.enabled': true,
  'media.autoplay.default': 0,
  'app.update.enabled': false,
  'browser.shell.checkDefaultBrowser': false,
  'datareporting.policy.dataSubmissionEnabled': false,
  'toolkit.telemetry.enabled': false,
  'network.captive-portal-service.enabled': false,
  'extensions.update.enabled': false,
};

/** The first bytes of every WebM (Matroska) file: the EBML magic number. */
const EBML_MAGIC = Buffer.from([0x1a, 0x45, 0xdf, 0xa3]);

/** Webcam chunks (4 s each) to wait for before finishing. */
const CHUNKS = 3;

/** How long one wait for the page may take on a machine shared with other browser tests. */
const WAIT_MS = 60_000;

/** Starts headless Firefox ESR over WebDriver BiDi. Throws naming the package when it is missing. */
async function launchFirefox(): Promise<Browser> {
  if (!fs.existsSync(FIREFOX_PATH)) {
    throw new Error(
      `Firefox is not at ${FIREFOX_PATH}: install Debian's firefox-esr package (bash scripts/ensure-tools.sh)`,
    );
  }
  return puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX_PATH,
    protocol: 'webDriverBiDi',
    headless: true,
    defaultViewport: { width: 1280, height: 900 },
    extraPrefsFirefox: FIREFOX_PREFS,
  });
}

/** True while a process with this id runs. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(
    `candidate exam room in Firefox ESR over WebDriver BiDi [${dialect}]`,
    { timeout: 300_000 },
    () => {
      let server: TestServer;
      let firefox: Browser;
      let firefoxPid: number | undefined;
      let page: Page;
      let owner: TestUser;
      let sessionId: number;
      let token: string;
      let step = 0;
      const consoleLines: string[] = [];

      before(async () => {
        fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
        server = await startTestServer(dialect);
        owner = await server.user(await server.institute(), 'teacher');
        const exam = await v3(
          'POST',
          '/exams',
          {
            name: 'Linear algebra',
            type: 'record_review',
            duration_minutes: 30,
            web_cam: true,
            automated_flags: true,
            terms: 'I work alone.',
          },
          201,
        );
        const student = await v3(
          'POST',
          '/exams/:exam_id/student_sessions',
          {
            exam_id: object(exam.exam, 'exam').id as number,
            name: 'Emmy Noether',
            email: 'emmy@example.org',
          },
          201,
        );
        const record = object(student.student, 'student');
        sessionId = record.id as number;
        token = record.token as string;
        firefox = await launchFirefox();
        firefoxPid = firefox.process()?.pid;
        page = await firefox.newPage();
        page.on('console', (message) => consoleLines.push(message.text()));
      });

      after(async () => {
        await firefox?.close();
        await server?.close();
      });

      async function v3(
        method: string,
        route: string,
        params: Record<string, Scalar>,
        status = 200,
      ): Promise<Json> {
        const answer = await owner.client.v3(method, route, params);
        assert.equal(answer.status, status, answer.text);
        return object(answer.json, 'body');
      }

      async function roomView(): Promise<Json> {
        const answer = await httpRequest({ url: `${server.baseUrl}/api/room/${token}` });
        assert.equal(answer.status, 200, answer.text);
        return object(object(answer.json, 'body').session, 'session');
      }

      /** Saves a full-page screenshot named after the step. */
      async function screenshot(name: string): Promise<void> {
        step += 1;
        const file = path.join(
          SCREENSHOT_DIR,
          `firefox-${dialect}-${String(step).padStart(2, '0')}-${name}.png`,
        );
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.screenshot({ path: file, fullPage: true });
        assert.ok(fs.statSync(file).size > 0);
      }

      /** Waits until the element `selector` shows text matching `pattern`; returns the text. */
      async function waitForText(selector: string, pattern: RegExp): Promise<string> {
        try {
          await page.waitForFunction(
            (css: string, source: string, flags: string) => {
              const element = document.querySelector(css);
              return element instanceof HTMLElement && new RegExp(source, flags).test(element.innerText);
            },
            { timeout: WAIT_MS },
            selector,
            pattern.source,
            pattern.flags,
          );
        } catch (error) {
          const alert = await page.evaluate(() => document.getElementById('alert')?.innerText ?? '');
          const now = await page.evaluate(
            (css: string) => document.querySelector<HTMLElement>(css)?.innerText ?? 'missing',
            selector,
          );
          throw new Error(
            `${selector} never matched ${String(pattern)} (it reads "${now}", alert "${alert}")`,
            {
              cause: error,
            },
          );
        }
        return page.$eval(selector, (element) => (element as HTMLElement).innerText);
      }

      /** Fails with the page's error text when the room shows one. */
      async function assertNoAlert(): Promise<void> {
        const alert = await page.evaluate(() => {
          const element = document.getElementById('alert');
          return element !== null && !element.hidden && element.innerText.trim() !== ''
            ? element.innerText
            : '';
        });
        assert.equal(alert, '', 'the room shows no error');
      }

      it('finds what headless Firefox offers: WebM VP8/Opus recording, a fake camera, no screen to share', async () => {
        await page.goto(`${server.baseUrl}/room/${token}`);
        await waitForText('#setup-heading', /^Before you start$/);
        const offered = await page.evaluate(async () => {
          const types = ['video/webm;codecs=vp9', 'video/webm;codecs=vp8,opus', 'video/mp4'];
          let screen: string;
          try {
            const stream = await navigator.mediaDevices.getDisplayMedia({ video: true });
            for (const track of stream.getTracks()) track.stop();
            screen = 'shared';
          } catch (error) {
            screen = error instanceof DOMException ? error.name : String(error);
          }
          return {
            recorder: typeof MediaRecorder,
            types: types.filter((type) => MediaRecorder.isTypeSupported(type)),
            screen,
            wasm: typeof WebAssembly.instantiate,
          };
        });
        assert.deepEqual(offered, {
          recorder: 'function',
          types: ['video/webm;codecs=vp8,opus'],
          // Fake devices cover the camera and microphone only; headless Firefox has no screen.
          screen: 'NotFoundError',
          wasm: 'function',
        });
        assert.match(await page.browser().version(), /^firefox\//);
      });

      it('runs the checks, takes both photos and accepts the terms', async () => {
        // The privacy panel first: the checks show once it is accepted (docs/room.md "Privacy panel").
        await page.click('#privacy-accept');
        await page.click('#run-camera');
        await waitForText('#results-camera', /Camera: passed/);
        await waitForText('#results-camera', /Microphone: passed/);
        await page.click('#run-speakers');
        await page.waitForSelector('#sound-yes', { visible: true, timeout: WAIT_MS });
        await page.click('#sound-yes');
        await waitForText('#results-speakers', /Speakers: passed/);
        await page.click('#run-bandwidth');
        await waitForText('#results-bandwidth', /Connection speed: passed/);
        await page.click('#take-id_card');
        await waitForText('#id_card-state', /Photo saved\./);
        await page.click('#take-face_photo');
        await waitForText('#face_photo-state', /Photo saved\./);
        await page.waitForFunction(() =>
          [...document.images].every((image) => image.complete && image.naturalWidth > 0),
        );
        await page.click('#terms-accepted');
        await waitForText('#start-help', /^Everything is ready\./);
        await assertNoAlert();
        await screenshot('setup-done');
        const record = object(
          (await v3('GET', '/student_sessions/:id', { id: sessionId })).student,
          'student',
        );
        assert.equal(record.webcam_check, 'succeeded');
        assert.equal(record.microphone_check, 'succeeded');
        assert.equal(record.browser, 'Firefox', 'the checks name the browser');
        assert.equal(record.face_photo_content_type, 'image/jpeg');
      });

      it('starts, goes full screen and records the webcam in chunks while the detectors run', async (t) => {
        await page.click('#start-exam');
        await waitForText('#exam-heading', /^Exam in progress$/);
        await waitForText('#recording-state', /^Recording your camera\.$/);
        await page.click('#enter-fullscreen');
        await page.waitForFunction(() => document.fullscreenElement !== null, { timeout: WAIT_MS });
        for (let round = 0; round < 150; round += 1) {
          if (((await roomView()).recording_chunks_count as number) >= CHUNKS) break;
          await new Promise((resolve) => setTimeout(resolve, 400));
        }
        assert.ok(
          ((await roomView()).recording_chunks_count as number) >= CHUNKS,
          `${CHUNKS} chunks arrived`,
        );
        // The detectors run on the device, on TensorFlow.js's WebAssembly backend (no graphics card),
        // and ten detections give the average the console reports. (WebDriver BiDi in puppeteer-core
        // gives no request bodies, so the rate the page posts is read from its console line instead.)
        const detected = /\d+ detections on wasm, \d+ ms each on average/;
        for (let round = 0; round < 150 && !consoleLines.some((line) => detected.test(line)); round += 1) {
          await new Promise((resolve) => setTimeout(resolve, 400));
        }
        for (const line of consoleLines
          .filter((entry) => entry.startsWith('[automated flags]'))
          .slice(0, 6)) {
          t.diagnostic(line);
        }
        assert.ok(
          consoleLines.some((line) => /face detection on wasm at [\d.]+ Hz/.test(line)),
          consoleLines.join(' | '),
        );
        assert.ok(
          consoleLines.some((line) => detected.test(line)),
          `ten detections ran; console: ${consoleLines.join(' | ')}`,
        );
        assert.ok(
          !consoleLines.some((line) => /face detection is off|not loaded|Content Security Policy/.test(line)),
          consoleLines.join(' | '),
        );
        await assertNoAlert();
        await screenshot('exam');
      });

      it('finishes, with every chunk arrived', async () => {
        await page.click('#finish-exam');
        await page.waitForSelector('#finish-dialog[open]', { timeout: WAIT_MS });
        await page.click('#finish-confirm');
        await waitForText('#main', /Your exam is finished/);
        const count = Number((await roomView()).recording_chunks_count);
        await waitForText('#arrival-summary', /^Everything this page recorded has arrived\.$/);
        assert.match(
          await waitForText('#arrival-list', /Camera recording/),
          new RegExp(`${count} parts received`),
        );
        await screenshot('finished');
        const record = object(
          (await v3('GET', '/student_sessions/:id', { id: sessionId })).student,
          'student',
        );
        assert.equal(record.status, 'exam_finished');
        assert.equal(record.end_reason, 'finished');
        const comments = (record.incidents as Json[]).map((incident) => incident.comment);
        assert.ok(!comments.includes('The exam room page was reloaded'), JSON.stringify(comments));
      });

      it('stores Firefox’s WebM chunks in order and finalises them into a file mediabunny plays', async () => {
        const chunks = (await v3('GET', '/student_sessions/:id/files', { id: sessionId, kind: 'recording' }))
          .files as Json[];
        assert.ok(chunks.length >= CHUNKS, `${chunks.length} chunks`);
        assert.deepEqual(
          chunks.map((chunk) => chunk.sequence),
          chunks.map((_chunk, index) => index),
          'in order without gaps',
        );
        assert.equal(chunks[0]?.content_type, 'video/webm');
        const first = await fetchAddress(server, String(chunks[0]?.url));
        assert.ok(first.bytes.subarray(0, 4).equals(EBML_MAGIC), 'the first chunk starts a WebM stream');

        await runDueJobs(server, dialect, server.app.clock);
        const list = (await v3('GET', '/student_sessions/:id/recordings', { id: sessionId }))
          .recordings as Json[];
        assert.deepEqual(
          list.map((recording) => [recording.source, recording.status]),
          [['webcam', 'completed']],
        );
        const file = await fetchAddress(server, String(list[0]?.url));
        assert.ok(file.bytes.subarray(0, 4).equals(EBML_MAGIC), 'a WebM file');
        const input = new Input({ source: new BufferSource(file.bytes), formats: ALL_FORMATS });
        const video = await input.getPrimaryVideoTrack();
        const audio = await input.getPrimaryAudioTrack();
        assert.equal(video?.codec, 'vp8');
        assert.equal(audio?.codec, 'opus');
        assert.ok((video?.displayWidth ?? 0) > 0);
        const duration = await input.computeDuration();
        assert.ok(duration >= (CHUNKS - 1) * 4, `the file lasts ${duration} s`);
        assert.ok(
          Math.abs(Number(list[0]?.duration_seconds) - duration) < 0.1,
          `duration_seconds ${String(list[0]?.duration_seconds)}, the file ${duration} s`,
        );
      });

      it('closes Firefox without leaving a process behind', async () => {
        assert.ok(firefoxPid !== undefined, 'puppeteer started Firefox itself');
        await firefox.close();
        for (let round = 0; round < 50 && running(firefoxPid); round += 1) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.equal(running(firefoxPid), false, `Firefox (pid ${firefoxPid}) has exited`);
      });
    },
  );
}
