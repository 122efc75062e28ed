/**
 * Automated flags in a real exam room: Debian's Chromium whose camera plays a video built by
 * test/flags/fake-camera.ts from photos shipped in @vladmandic/human (one Chromium per video, since
 * the camera file is a process flag), the room's own detectors loaded from the service, and the
 * flags read back through the signed V3 API and on the console's review timeline.
 *
 * - An empty room in view: a `no_face` flag (the seconds it took are printed). The same
 *   candidate then switches tabs (`tab_switch`) and the screen share ends (`screen_share_ended`).
 *   Their review timeline, with the flags, is screenshot (test-output/screenshots/console-flags-*).
 * - Two faces in view: `multiple_faces`.
 * - One face in view, a candidate who does nothing wrong: no flag at all.
 *
 * Each candidate loads the face models and runs them for 10–20 s in a headless Chromium without a
 * graphics card (TensorFlow.js's WebAssembly backend); one database takes about 50 s on two cores.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { SCREENSHOT_DIR } from '../helpers/browser.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import { runDueJobs } from '../mail/support.ts';
import {
  type BuiltVideo,
  type CameraSceneName,
  fakeCameraVideos,
  launchChromiumWithCamera,
} from '../flags/fake-camera.ts';
import {
  checkScreen,
  type ConsoleWorld,
  signedInPage,
  type StaffUser,
  startConsoleWorld,
} from './console/support.ts';
import { acceptPrivacy } from './privacy-support.ts';

type Json = Record<string, unknown>;

/**
 * How long a test waits for an expected flag. The promise of a flag within 10 s of the detector
 * looking holds at the benchmark's detection cost (`npm run bench`, flags-cost); here the rate is
 * pinned (the detector neither slows nor stops) and the test asks only that the flag arrives, so
 * a loaded machine makes it slower, not red. The seconds it took are printed.
 */
const FLAG_WAIT_MS = 60_000;
/** Detections a normal candidate is watched for: 10 s at 2 Hz, past every face threshold (5 s). */
const NORMAL_DETECTIONS = 20;
/** The longest a normal candidate is watched for them, however slow each detection is. */
const NORMAL_WATCH_MS = 120_000;
/** A test that loads a detector and waits for it: loading plus the waits above. */
const DETECTOR_TEST = { timeout: 300_000 };

/** A candidate in the room with a fake camera: their session, browser and page, and the detector's start. */
interface Candidate {
  readonly id: number;
  readonly token: string;
  readonly browser: Browser;
  readonly page: Page;
  /** The room's console lines (its detectors log there, never to the candidate). */
  readonly lines: string[];
  /** When the face detector said it runs (Date.now()), and on which backend. */
  readonly detectorStartedAt: number;
  readonly backend: string;
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`automated flags in the exam room, Chromium with a fake camera [${dialect}]`, () => {
    let world: ConsoleWorld;
    let teacher: StaffUser;
    let reviewer: StaffUser;
    let videos: Record<CameraSceneName, BuiltVideo>;
    let examId: number;
    let students = 0;
    let away: Candidate | undefined;
    const browsers: Browser[] = [];

    before(async () => {
      videos = await fakeCameraVideos();
      world = await startConsoleWorld(dialect);
      teacher = await world.staff('teacher');
      reviewer = await world.staff('reviewer');
      const exam = await teacher.client.v3('POST', '/exams', {
        name: 'Flagged statistics',
        type: 'record_review',
        duration_minutes: 60,
        web_cam: true,
        screen_share: true,
        automated_flags: true,
      });
      assert.equal(exam.status, 201, exam.text);
      const record = object(object(exam.json, 'body').exam, 'exam');
      assert.equal(record.automated_flags, true);
      examId = record.id as number;
    });

    after(async () => {
      for (const browser of browsers) await browser.close().catch(() => undefined);
      await world?.close();
    });

    /**
     * A new session (requirements skipped) opened in a Chromium whose camera plays `video`, started
     * and recording; returns once the room's face detector has loaded.
     */
    async function candidate(name: string, video: BuiltVideo): Promise<Candidate> {
      students += 1;
      const answer = await teacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name,
        email: `flagged${students}@example.org`,
        skip_requirements: true,
      });
      assert.equal(answer.status, 201, answer.text);
      const student = object(object(answer.json, 'body').student, 'student');
      const browser = await launchChromiumWithCamera(video.y4m);
      browsers.push(browser);
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      // Pins the face detector's rate (face.js, pinnedByTest): the outcome must not hang on speed.
      await context.addInitScript(() => {
        (window as unknown as { invigilTestHooks: { pinFaceRate: boolean } }).invigilTestHooks = {
          pinFaceRate: true,
        };
      });
      // Keeps the screen tracks the room gets, so a test can end the share as the candidate would.
      await context.addInitScript(() => {
        const devices = navigator.mediaDevices;
        const share = devices.getDisplayMedia.bind(devices);
        devices.getDisplayMedia = async (constraints) => {
          const stream = await share(constraints);
          const held = window as unknown as { screenTracks?: MediaStreamTrack[] };
          held.screenTracks = [...(held.screenTracks ?? []), ...stream.getVideoTracks()];
          return stream;
        };
      });
      const page = await context.newPage();
      const lines: string[] = [];
      let started: { at: number; backend: string } | undefined;
      page.on('console', (message) => {
        const text = message.text();
        lines.push(text);
        const loaded = /\[automated flags\] face detection on (\S+)/.exec(text);
        if (loaded !== null && started === undefined) started = { at: Date.now(), backend: loaded[1] ?? '' };
      });
      await page.goto(`${world.baseUrl}/room/${String(student.token)}`);
      await page.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(page);
      // What is analysed, said before the start (and that it stays on the device).
      await page.getByRole('heading', { name: 'Automatic checks during the exam' }).waitFor();
      await page.getByRole('button', { name: 'Start the exam' }).click();
      await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      await page.getByRole('button', { name: 'Start recording' }).click();
      await page.locator('#recording-state', { hasText: 'Recording your camera' }).waitFor();
      const deadline = Date.now() + 60_000;
      while (started === undefined && Date.now() < deadline) await page.waitForTimeout(100);
      assert.ok(started, `the face detector did not start within 60 s; the room said:\n${lines.join('\n')}`);
      return {
        id: student.id as number,
        token: String(student.token),
        browser,
        page,
        lines,
        detectorStartedAt: started.at,
        backend: started.backend,
      };
    }

    /** The session's incidents with `source: "automatic"`, as the staff read them. */
    async function flagsOf(sessionId: number): Promise<Json[]> {
      const answer = await teacher.client.v3('GET', '/student_sessions/:id', { id: sessionId });
      assert.equal(answer.status, 200, answer.text);
      const incidents = object(object(answer.json, 'body').student, 'student').incidents as Json[];
      return incidents.filter((incident) => incident.source === 'automatic');
    }

    /** Waits until a flag of `type` is stored, at most until `deadline`; returns it. */
    async function flagArrives(who: Candidate, type: string, deadline: number): Promise<Json> {
      for (;;) {
        const found = (await flagsOf(who.id)).find((flag) => flag.type === type);
        if (found !== undefined) {
          const seconds = ((Date.now() - who.detectorStartedAt) / 1000).toFixed(1);
          process.stdout.write(`# ${type} stored ${seconds} s after the detector started (${who.backend})\n`);
          return found;
        }
        if (Date.now() > deadline) {
          assert.fail(
            `no ${type} flag in time (detector on ${who.backend}); the room said:\n${who.lines.join('\n')}`,
          );
        }
        await who.page.waitForTimeout(250);
      }
    }

    /** Fails unless `flag` looks like an automatic flag record of `type`. */
    function assertFlag(flag: Json, type: string): void {
      assert.equal(flag.type, type);
      assert.equal(flag.source, 'automatic');
      assert.equal(flag.dismissed, false);
      assert.equal(typeof flag.confidence, 'number');
      assert.ok(
        (flag.confidence as number) > 0 && (flag.confidence as number) <= 1,
        `confidence ${String(flag.confidence)}`,
      );
      assert.equal(typeof flag.offset_time, 'number');
      assert.ok((flag.offset_time as number) >= 0);
      assert.match(String(flag.comment), /^Automatic flag: /);
    }

    it('flags no_face when nobody is in view', DETECTOR_TEST, async () => {
      away = await candidate('Nora Absent', videos.no_face);
      const flag = await flagArrives(away, 'no_face', away.detectorStartedAt + FLAG_WAIT_MS);
      assertFlag(flag, 'no_face');
      assert.equal(flag.end_offset_time, null, 'the episode is still open: nobody came back');
    });

    it('flags tab_switch when the candidate opens another tab, and ends it on return', async () => {
      assert.ok(away);
      const { page } = away;
      // Playwright tells every page it has the focus; turned off, a second tab brought to the front
      // takes the focus from the room's window as it would for a candidate.
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Emulation.setFocusEmulationEnabled', { enabled: false });
      const other = await page.context().newPage();
      await other.goto('about:blank');
      await other.bringToFront();
      const flag = await flagArrives(away, 'tab_switch', Date.now() + FLAG_WAIT_MS);
      assertFlag(flag, 'tab_switch');
      await other.close();
      await page.bringToFront();
      const deadline = Date.now() + FLAG_WAIT_MS;
      for (;;) {
        const ended = (await flagsOf(away.id)).find((found) => found.type === 'tab_switch');
        if (typeof ended?.end_offset_time === 'number') {
          assert.ok(ended.end_offset_time >= (ended.offset_time as number));
          break;
        }
        assert.ok(Date.now() < deadline, 'the tab_switch episode ended once the room was back in front');
        await page.waitForTimeout(250);
      }
    });

    it('flags screen_share_ended when the screen share stops', async () => {
      assert.ok(away);
      // Headless Chromium has no "Stop sharing" bar. Stopping the track from the page does not fire
      // `ended` (only the browser ending a capture does), so the test stops the capture and then
      // fires the `ended` event the browser fires when the candidate stops sharing.
      const stopped = await away.page.evaluate(() => {
        const tracks = (window as unknown as { screenTracks?: MediaStreamTrack[] }).screenTracks ?? [];
        const live = tracks.filter((track) => track.readyState === 'live');
        for (const track of live) {
          track.stop();
          track.dispatchEvent(new Event('ended'));
        }
        return live.length;
      });
      assert.ok(stopped > 0, 'found the screen track');
      const flag = await flagArrives(away, 'screen_share_ended', Date.now() + FLAG_WAIT_MS);
      assertFlag(flag, 'screen_share_ended');
    });

    it('shows the flags on the review timeline', async () => {
      assert.ok(away);
      await finish(away);
      await runDueJobs(world.server, dialect, world.server.app.clock);
      const page = await signedInPage(world, reviewer);
      await page.goto(`${world.baseUrl}/console/sessions/${away.id}/review`);
      const timeline = page.getByRole('list', { name: 'Incidents on the timeline' });
      await timeline.getByRole('button').first().waitFor();
      const text = (await page.locator('main').textContent()) ?? '';
      assert.match(text, /no face in view/i);
      assert.match(text, /tab or window switch/i);
      await checkScreen(page, 'flags-room-review');
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'console-flags-room-review-viewport.png') });
      await page.context().close();
    });

    it('flags multiple_faces when two faces are in view', DETECTOR_TEST, async () => {
      const pair = await candidate('Paul Paired', videos.two_faces);
      const flag = await flagArrives(pair, 'multiple_faces', pair.detectorStartedAt + FLAG_WAIT_MS);
      assertFlag(flag, 'multiple_faces');
      assert.equal((await flagsOf(pair.id)).filter((found) => found.type === 'no_face').length, 0);
      await pair.browser.close();
    });

    it('raises no flag for a candidate alone in front of the camera', DETECTOR_TEST, async () => {
      const normal = await candidate('Fatima Present', videos.face);
      // The detector logs its count every ten detections: wait for NORMAL_DETECTIONS of them, more
      // than any face threshold needs at 2 Hz, so "no flag" means it looked and saw one face.
      const deadline = Date.now() + NORMAL_WATCH_MS;
      let detections = 0;
      while (detections < NORMAL_DETECTIONS && Date.now() < deadline) {
        await normal.page.waitForTimeout(250);
        const counts = normal.lines.map((line) => Number(/(\d+) detections on/.exec(line)?.[1] ?? 0));
        detections = Math.max(0, ...counts);
      }
      assert.ok(
        detections >= NORMAL_DETECTIONS,
        `only ${detections} detections in ${NORMAL_WATCH_MS / 1000} s; the room said:\n${normal.lines.join('\n')}`,
      );
      const flags = await flagsOf(normal.id);
      assert.deepEqual(
        flags.map((flag) => `${String(flag.type)}: ${String(flag.comment)}`),
        [],
        `no flag; the room said:\n${normal.lines.join('\n')}`,
      );
      await normal.browser.close();
    });

    async function finish(who: Candidate): Promise<void> {
      await who.page.getByRole('button', { name: 'Finish the exam' }).click();
      await who.page.getByRole('button', { name: 'Yes, finish now' }).click();
      await who.page.getByRole('heading', { name: 'Your exam is finished' }).waitFor({ timeout: 45_000 });
      const view = await httpRequest({ url: `${world.baseUrl}/api/room/${who.token}` });
      assert.equal(object(object(view.json, 'body').session, 'session').status, 'exam_finished');
      await who.browser.close();
    }
  });
}
