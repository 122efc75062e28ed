/**
 * Step 9's "Must show", end to end in Chromium on SQLite and PostgreSQL, with nothing faked but the
 * camera and the screen: a candidate records webcam and screen in the real room page (its own
 * MediaRecorder chunks), the page is reloaded in the middle and the recording resumed, and the
 * candidate finishes. The durable job finalises both streams; each file lasts as long as the
 * session did by the wall clock, within a second, and the part recorded after the reload sits at
 * its exam time in both. A reviewer signed in to the console then plays webcam and screen in sync,
 * seeks into the part after the reload, jumps to incidents from the timeline and with N and P, adds
 * an incident at the playhead and records a verdict that V3 then shows.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ALL_FORMATS, BufferSource, EncodedPacketSink, Input } from 'mediabunny';
import type { Page } from 'playwright-core';
import { SCREENSHOT_DIR } from '../helpers/browser.ts';
import { fetchAddress } from '../helpers/files.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import type { Scalar } from '../helpers/signing.ts';
import { runDueJobs } from '../mail/support.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import {
  checkScreen,
  newPage,
  signedInPage,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';
import { acceptPrivacy } from './privacy-support.ts';

type Json = Record<string, unknown>;

/** Chunks of each stream recorded before the reload (4 s each), and how long after resuming (ms). */
const CHUNKS_BEFORE_RELOAD = 2;
const AFTER_RELOAD_MS = 8_000;

/** "mm:ss", as the review screen names a time. */
const clock = (seconds: number): string =>
  `${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(Math.floor(seconds % 60)).padStart(2, '0')}`;

/** The timestamps (s) of a file's first video track's packets, in order, read with mediabunny. */
async function videoTimestamps(bytes: Buffer): Promise<{ duration: number; times: number[] }> {
  const input = new Input({ source: new BufferSource(bytes), formats: ALL_FORMATS });
  const track = await input.getPrimaryVideoTrack();
  assert.ok(track, 'the file has a video track');
  const times: number[] = [];
  for await (const packet of new EncodedPacketSink(track).packets()) times.push(packet.timestamp);
  return { duration: await input.computeDuration(), times: times.sort((a, b) => a - b) };
}

/**
 * The frames either side of `moment` (s): the last one before it and the first one after it. Taken
 * at the press on "Resume recording", these are the reload's two edges.
 */
function framesAround(times: readonly number[], moment: number): { before: number; after: number } {
  const after = times.find((time) => time >= moment);
  const before = times.findLast((time) => time < moment);
  assert.ok(after !== undefined && before !== undefined, `frames on both sides of ${moment} s`);
  return { before, after };
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`review end to end: recorded in the room across a reload, reviewed in the console [${dialect}]`, () => {
    let world: ConsoleWorld;
    let teacher: StaffUser;
    let reviewer: StaffUser;
    let room: Page;
    let page: Page;
    let sessionId: number;
    let token: string;
    /** Wall-clock moments (epoch ms) seen by the test around the candidate's actions. */
    const wall = {
      startPressed: 0,
      started: 0,
      reloaded: 0,
      cameraResumed: 0,
      resumePressed: 0,
      resumed: 0,
      finishPressed: 0,
      finished: 0,
    };
    /** Video seconds: where the part after the reload begins, and the incidents placed in it. */
    let resumedAt = 0;
    let duration = 0;
    let markedAt = 0;
    let reloadAt = 0;

    async function v3(user: StaffUser, method: string, route: string, params: Record<string, Scalar>) {
      const answer = await user.client.v3(method, route, params);
      assert.ok(answer.status === 200 || answer.status === 201, answer.text);
      return object(answer.json, 'body');
    }

    async function session(): Promise<Json> {
      return object(
        (await v3(teacher, 'GET', '/student_sessions/:id', { id: sessionId })).student,
        'student',
      );
    }

    async function recordings(): Promise<Json[]> {
      return (await v3(reviewer, 'GET', '/student_sessions/:id/recordings', { id: sessionId }))
        .recordings as Json[];
    }

    /** Waits until the server holds at least `count` chunks of each stream. */
    async function chunksStored(count: number): Promise<void> {
      for (let round = 0; round < 100; round += 1) {
        const answer = await httpRequest({ url: `${world.baseUrl}/api/room/${token}` });
        const view = object(object(answer.json, 'body').session, 'session');
        if (
          Number(view.recording_chunks_count) >= count &&
          Number(view.screen_recording_chunks_count) >= count
        )
          return;
        await room.waitForTimeout(200);
      }
      assert.fail(`fewer than ${count} chunks of each stream arrived`);
    }

    async function roomScreen(name: string): Promise<void> {
      await assertNoSeriousAxeViolations(room, name);
      await room.screenshot({
        path: path.join(SCREENSHOT_DIR, `review-e2e-room-${name}.png`),
        fullPage: true,
      });
    }

    /** Each video's time, readiness and state, webcam first. */
    function videos() {
      return page.evaluate(() =>
        [...document.querySelectorAll('video')].map((video) => ({
          source: video.dataset.source,
          time: video.currentTime,
          ready: video.readyState,
          paused: video.paused,
          seeking: video.seeking,
        })),
      );
    }

    /** Waits until both videos have settled at `seconds` (within 0.5 s) with a frame to show. */
    async function bothAt(seconds: number): Promise<void> {
      await page.waitForFunction(
        (wanted) => {
          const list = [...document.querySelectorAll('video')];
          return (
            list.length === 2 &&
            list.every(
              (video) =>
                !video.seeking && video.readyState >= 2 && Math.abs(video.currentTime - wanted) < 0.5,
            )
          );
        },
        seconds,
        { timeout: 15_000 },
      );
    }

    async function playhead(): Promise<string> {
      return (await page.getByRole('slider', { name: 'Playhead' }).getAttribute('aria-valuetext')) ?? '';
    }

    before(async () => {
      world = await startConsoleWorld(dialect);
      teacher = await world.staff('teacher');
      reviewer = await world.staff('reviewer');
      const exam = object(
        (
          await v3(teacher, 'POST', '/exams', {
            name: 'Thermodynamics final',
            type: 'record_review',
            duration_minutes: 30,
            web_cam: true,
            screen_share: true,
          })
        ).exam,
        'exam',
      );
      const student = object(
        (
          await v3(teacher, 'POST', '/exams/:exam_id/student_sessions', {
            exam_id: exam.id as number,
            name: 'Ada Lovelace',
            email: 'ada@example.org',
            skip_requirements: true,
          })
        ).student,
        'student',
      );
      sessionId = student.id as number;
      token = student.token as string;
      room = await newPage(world);
    });

    after(async () => {
      await world?.close();
    });

    it('records webcam and screen in the room, across a reload, until the candidate finishes', async () => {
      await room.goto(`${world.baseUrl}/room/${token}`);
      await room.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(room);
      wall.startPressed = Date.now();
      await room.getByRole('button', { name: 'Start the exam' }).click();
      await room.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      wall.started = Date.now();
      // The requirements were skipped, so the browser shares camera and screen only after a click.
      await room.getByRole('button', { name: 'Start recording' }).click();
      await room.locator('#recording-state', { hasText: 'Recording your camera and screen' }).waitFor();
      await roomScreen('recording');
      // Reloaded just after a chunk arrived, so the reload's pause stays well under the 5 s that
      // would make it a recording gap (the seconds since the last chunk die with the page).
      await chunksStored(CHUNKS_BEFORE_RELOAD);

      wall.reloaded = Date.now();
      await room.reload();
      await room.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      // The camera was allowed before, so it records again by itself; the screen needs a click.
      await room.locator('#recording-state', { hasText: 'Your camera is recording again' }).waitFor();
      wall.cameraResumed = Date.now();
      await roomScreen('reloaded');
      wall.resumePressed = Date.now();
      await room.getByRole('button', { name: 'Share your screen again' }).click();
      await room.locator('#recording-state', { hasText: 'Recording your camera and screen' }).waitFor();
      wall.resumed = Date.now();
      await room.waitForTimeout(AFTER_RELOAD_MS);

      await room.getByRole('button', { name: 'Finish the exam' }).click();
      await room.getByRole('dialog', { name: 'Finish the exam?' }).waitFor();
      wall.finishPressed = Date.now();
      await room.getByRole('button', { name: 'Yes, finish now' }).click();
      await room.getByRole('heading', { name: 'Your exam is finished' }).waitFor({ timeout: 30_000 });
      wall.finished = Date.now();
      assert.equal(
        await room.locator('#arrival-summary').textContent(),
        'Everything this page recorded has arrived.',
      );
      await roomScreen('finished');

      const record = await session();
      assert.equal(record.status, 'exam_finished');
      assert.equal(record.end_reason, 'finished');
      assert.equal(record.transcoding_status, 'queued');
      // The service's clock is this machine's: the session's times are the moments the buttons were pressed.
      const start = Date.parse(String(record.start_time));
      const end = Date.parse(String(record.end_time));
      assert.ok(start >= wall.startPressed - 5 && start <= wall.started + 5, 'start_time is the start press');
      assert.ok(end >= wall.finishPressed - 5 && end <= wall.finished + 5, 'end_time is the finish');
      assert.equal(record.recording_started_at, record.start_time);
      assert.equal(record.recording_ended_at, record.end_time);
      const reload = (record.incidents as Json[]).find(
        (incident) => incident.comment === 'The exam room page was reloaded',
      );
      assert.ok(reload, `the reload is an incident: ${JSON.stringify(record.incidents)}`);
      reloadAt = reload.offset_time as number;
    });

    it('finalises both streams, each lasting as long as the session by the wall clock, the reload in its place', async () => {
      await runDueJobs(world.server, dialect, world.server.app.clock);
      const record = await session();
      assert.equal(record.transcoding_status, 'completed');
      const list = await recordings();
      assert.deepEqual(
        list.map((entry) => [entry.source, entry.status]),
        [
          ['webcam', 'completed'],
          ['screen', 'completed'],
        ],
      );
      // Like with like: video time 0 is the session's recording_started_at (docs/recordings.md),
      // which the room sets to start_time when the candidate presses Start (asserted above), and the
      // recording ends when the candidate finishes (recording_ended_at = end_time). So the file must
      // last the session's wall-clock span, finish − start, including the moment before the first
      // frame (the click on "Start recording") and the reload's pause, which are kept, not squeezed.
      const span = (Date.parse(String(record.end_time)) - Date.parse(String(record.start_time))) / 1000;
      assert.ok(span > CHUNKS_BEFORE_RELOAD * 4 + AFTER_RELOAD_MS / 1000, `the session lasted ${span} s`);
      const starts: number[] = [];
      for (const recording of list) {
        assert.equal(recording.started_at, record.start_time, 'video time 0 is the start');
        const file = await videoTimestamps((await fetchAddress(world.server, String(recording.url))).bytes);
        const source = String(recording.source);
        assert.ok(
          Math.abs(Number(recording.duration_seconds) - file.duration) < 0.1,
          `${source}: duration_seconds ${String(recording.duration_seconds)}, the file ${file.duration} s`,
        );
        // The webcam carries the microphone's sound, which never pauses: it ends when the candidate
        // finished, within a second. The screen has only pictures, and a busy machine's capturer and
        // encoder drop frames (here up to half a second at a time, longer beside the live browser
        // tests), and a screen capturer sends a new picture only when the screen changes, so its
        // last frame may come some seconds earlier on a loaded machine (4.4 s seen); it never runs
        // past the session.
        const tolerance = source === 'webcam' ? 1 : 5;
        assert.ok(
          file.duration <= span + 1 && span - file.duration <= tolerance,
          `${source}: the file lasts ${file.duration} s, the session ${span} s`,
        );
        if (source === 'webcam') duration = file.duration;
        // The part after the reload sits at its exam time, not squeezed against the part before:
        // its first frame comes after the reload (the camera, by itself) or the press on "Share
        // your screen again" (the screen) — placed from its chunks' arrival, an upper bound of its
        // recorder's start, it can only be later — and soon after the page said it recorded (a
        // screen capturer's first picture can take most of a second, over two on a machine busy
        // with other browser tests; a wrong anchor, such as a chunk's arrival, would be 4 s off).
        const start = Date.parse(String(record.start_time));
        const earliest = ((source === 'webcam' ? wall.reloaded : wall.resumePressed) - start) / 1000;
        const latest =
          source === 'webcam' ? (wall.cameraResumed - start) / 1000 + 2 : (wall.resumed - start) / 1000 + 3;
        const reload = framesAround(file.times, earliest);
        assert.ok(
          reload.after <= latest,
          `${source}: the part after the reload starts at ${reload.after} s, expected ${earliest}–${latest} s`,
        );
        assert.ok(
          reload.before < reloadAt + 1,
          `${source}: recorded until ${reload.before} s, reloaded at ${reloadAt} s`,
        );
        starts.push(reload.after);
      }
      resumedAt = Math.max(...starts);
    });

    it('lets a reviewer play webcam and screen in sync', async () => {
      // An incident staff noted during the exam, three seconds into the part after the reload.
      markedAt = Math.ceil(resumedAt) + 3;
      await v3(teacher, 'POST', '/student_sessions/:id/incidents', {
        id: sessionId,
        comment: 'Phone on the desk',
        offset_time: markedAt,
      });
      await v3(teacher, 'POST', '/student_sessions/:id/incidents', {
        id: sessionId,
        comment: 'Looked away from the screen',
        offset_time: 2,
      });
      page = await signedInPage(world, reviewer);
      await page.goto(`${world.baseUrl}/console/sessions/${sessionId}/review`);
      await page.waitForFunction(() => {
        const list = [...document.querySelectorAll('video')];
        return list.length === 2 && list.every((video) => video.readyState >= 2);
      });
      assert.deepEqual(
        (await videos()).map((video) => video.source),
        ['webcam', 'screen'],
      );
      // The timeline is as long as the recording (the longer one; here the webcam, within its frames).
      const [now, total] = (await playhead()).split(' of ');
      // At the start: 00:00, or a second on when the recorder's first frame came a moment after the
      // session's start (the video shows its first frame from there).
      assert.match(now ?? '', /^00:0[01]$/);
      const [minutes, seconds] = (total ?? '').split(':').map(Number);
      assert.ok(Math.abs((minutes ?? 0) * 60 + (seconds ?? 0) - duration) <= 1, `${total} for ${duration} s`);
      await checkScreen(page, 'review-e2e-opened');

      await page.getByRole('button', { name: 'Play', exact: true }).click();
      await page.waitForFunction(() =>
        [...document.querySelectorAll('video')].every((video) => !video.paused && video.currentTime > 1.5),
      );
      // The screen follows the webcam: at each sample both play, within half a second of each
      // other, or are brought back within that by the player soon after (a loaded machine can stall
      // one decoder for a moment; the player resyncs past 0.3 s of drift).
      for (let sample = 0; sample < 4; sample += 1) {
        const [webcam, screen] = await videos();
        assert.ok(webcam && screen && !webcam.paused && !screen.paused, 'both play');
        await page.waitForFunction(
          () => {
            const [first, second] = [...document.querySelectorAll('video')];
            return (
              first !== undefined &&
              second !== undefined &&
              Math.abs(first.currentTime - second.currentTime) < 0.5
            );
          },
          undefined,
          { timeout: 5000 },
        );
        await page.waitForTimeout(300);
      }
      await page.getByRole('button', { name: 'Pause', exact: true }).click();
      await page.waitForFunction(() =>
        [...document.querySelectorAll('video')].every((video) => video.paused),
      );
      const [webcam, screen] = await videos();
      assert.ok(webcam && screen && webcam.time > 2, `played to ${webcam?.time} s`);
      assert.ok(
        Math.abs(webcam.time - screen.time) < 0.5,
        `paused at webcam ${webcam.time} s, screen ${screen.time} s`,
      );
    });

    it('seeks both videos into the part recorded after the reload, from the timeline', async () => {
      const target = resumedAt + 2;
      const track = page.getByRole('slider', { name: 'Playhead' });
      const box = await track.boundingBox();
      assert.ok(box);
      // The timeline is as long as the longer recording, which the player drives.
      const length = await page.evaluate(() =>
        Math.max(...[...document.querySelectorAll('video')].map((video) => video.duration)),
      );
      await track.click({ position: { x: (box.width * target) / length, y: box.height / 2 } });
      await bothAt(target);
      const [webcam, screen] = await videos();
      assert.ok(webcam && screen && webcam.time > resumedAt && screen.time > resumedAt, 'after the reload');
      assert.ok(webcam.ready >= 2 && screen.ready >= 2, 'both show a frame');
      assert.ok(Math.abs(Number(await track.getAttribute('aria-valuenow')) - target) <= 1, await playhead());
      // And from the keyboard: back five seconds and forward again, both following.
      await page.locator('h1').focus();
      const here = webcam.time;
      await page.keyboard.press('ArrowLeft');
      await bothAt(here - 5);
      await page.keyboard.press('l');
      await bothAt(here);
      await checkScreen(page, 'review-e2e-after-reload');
    });

    it('jumps to an incident from its marker, and between incidents with N and P', async () => {
      await page.getByRole('button', { name: `Incident at ${clock(markedAt)}: Phone on the desk` }).click();
      await bothAt(markedAt);
      assert.ok((await playhead()).startsWith(`${clock(markedAt)} of `), await playhead());
      // The incidents on the clock: 2 s (staff), the reload (the room's own), markedAt (staff), and
      // any recording gap the job found. P walks back to the first, N forward to the last.
      const offsets = ((await session()).incidents as Json[])
        .map((incident) => Number(incident.offset_time))
        .sort((a, b) => a - b);
      assert.ok(offsets.includes(reloadAt) && offsets.includes(2), JSON.stringify(offsets));
      await page.locator('h1').focus();
      const visited = [markedAt];
      for (let at = markedAt, step = 0; step < 10; step += 1) {
        const previous = offsets.findLast((offset) => offset < at - 1);
        if (previous === undefined) break;
        await page.keyboard.press('p');
        await bothAt(previous);
        visited.push((at = previous));
      }
      assert.ok(visited.includes(reloadAt) && visited.at(-1) === 2, `P visited ${visited.join(', ')}`);
      for (let at = 2, step = 0; step < 10; step += 1) {
        const next = offsets.find((offset) => offset > at + 0.5);
        if (next === undefined) break;
        await page.keyboard.press('n');
        await bothAt(next);
        at = next;
      }
    });

    it('adds an incident at the playhead', async () => {
      // Paused, so the playhead stays where the keys put it.
      const pause = page.getByRole('button', { name: 'Pause', exact: true });
      if (await pause.isVisible()) await pause.click();
      const slider = page.getByRole('slider', { name: 'Playhead' });
      await slider.focus();
      await page.keyboard.press('Home');
      await page.keyboard.press('ArrowRight');
      // Five seconds on from the start: 00:05, or later where the video's first frame (where Home
      // lands) came after the session's start; how much later depends on the machine's load while
      // the room recorded, so the test takes the second the button shows and checks it is stored.
      await page.waitForFunction(() => {
        const list = [...document.querySelectorAll('video')];
        return (
          list.length === 2 &&
          list.every((video) => !video.seeking && video.readyState >= 2 && video.currentTime >= 4.5)
        );
      });
      const add = page.getByRole('button', { name: /^Add incident at playhead \(/ });
      const label = (await add.textContent()) ?? '';
      const [, minutes, seconds] = /\((\d+):(\d+)\)/.exec(label) ?? [];
      const at = Number(minutes) * 60 + Number(seconds);
      assert.ok(at >= 5 && at <= 15, label);
      await page.getByLabel('Incident', { exact: true }).fill('A second person in view');
      await add.click();
      await page.getByText(`Incident added at ${clock(at)}.`).waitFor();
      await page.getByRole('button', { name: `Incident at ${clock(at)}: A second person in view` }).waitFor();
      const incidents = (await session()).incidents as Json[];
      assert.ok(
        incidents.some((item) => item.comment === 'A second person in view' && item.offset_time === at),
        JSON.stringify(incidents),
      );
    });

    it('records a verdict that V3 then shows', async () => {
      await page.getByRole('radio', { name: /Suspicious/ }).check();
      await page.getByLabel('Comment').fill('A phone on the desk after the reload.');
      await page.getByRole('button', { name: 'Save verdict' }).click();
      await page.getByText('Verdict saved: Suspicious.').waitFor();
      const review = object(
        (await v3(reviewer, 'GET', '/student_sessions/:id/review', { id: sessionId })).review,
        'review',
      );
      assert.equal(review.verdict, 'suspicious');
      assert.equal(review.comment, 'A phone on the desk after the reload.');
      assert.equal(object(review.reviewer, 'reviewer').id, reviewer.id);
      assert.equal(review.reviewed, 'suspicious');
      assert.equal((await session()).reviewed, 'suspicious');
      await checkScreen(page, 'review-e2e-verdict');
    });
  });
}
