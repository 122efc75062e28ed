/**
 * The phone as a second camera of live proctoring, in Chromium (docs/live-proctoring.md, "The
 * phone"): the real service with the embedded media engine, a candidate's exam room publishing its
 * camera, the candidate's phone (its own browser context with the fake camera, a phone-sized window,
 * under the phone page's Content-Security-Policy) publishing through mobile-live.js, and the proctor
 * wall: the enlarged candidate shows the phone's side view as a third video, "Phone", with advancing
 * frames, and none once the phone stops. Ending the exam ends the phone's link. SQLite only (the
 * media path is the same on both databases; live-end-to-end.test.ts covers both). Screenshot:
 * test-output/screenshots/live-phone.png.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { SCREENSHOT_DIR } from '../helpers/browser.ts';
import { object } from '../helpers/json.ts';
import type { Scalar } from '../helpers/signing.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import {
  newPage,
  signedInPage,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';
import { framesAdvance, MEDIA_TIMEOUT, tileSays } from './live-support.ts';
import { acceptPrivacy } from './privacy-support.ts';

type Json = Record<string, unknown>;

describe('live proctoring: the phone as a second camera [sqlite]', () => {
  let world: ConsoleWorld;
  let teacher: StaffUser;
  let proctor: StaffUser;
  let examId: number;
  let sessionId: number;
  let mobileToken: string;
  let room: Page;
  let phone: Page;
  let wall: Page;

  async function v3(
    method: string,
    route: string,
    params: Record<string, Scalar>,
    status = 200,
  ): Promise<Json> {
    const answer = await teacher.client.v3(method, route, params);
    assert.equal(answer.status, status, `${method} ${route}: ${answer.text}`);
    return object(answer.json, 'body');
  }

  /** The states the phone's live module reported so far. */
  async function phoneStates(): Promise<string[]> {
    return phone.evaluate(() => (window as unknown as { states: string[] }).states);
  }

  async function phoneSays(state: string): Promise<void> {
    await phone.waitForFunction(
      (wanted) => (window as unknown as { states: string[] }).states.at(-1) === wanted,
      state,
      { timeout: MEDIA_TIMEOUT, polling: 100 },
    );
  }

  /** Starts the phone's live module with the fake camera (the module is loaded from the service). */
  async function startPhone(): Promise<void> {
    await phone.evaluate(async (token) => {
      const stream = await navigator.mediaDevices.getUserMedia({ video: { width: 640, height: 480 } });
      const module = '/m/assets/mobile-live.js';
      const { startPhoneLive } = (await import(module)) as {
        startPhoneLive: (options: {
          token: string;
          stream: MediaStream;
          onState: (state: string) => void;
        }) => { stop(): void };
      };
      const states: string[] = [];
      const live = startPhoneLive({ token, stream, onState: (state) => states.push(state) });
      Object.assign(window, { states, live, stream });
    }, mobileToken);
  }

  const dialog = () => wall.locator('dialog.live-focus');
  const phoneVideo = () => dialog().locator('video[data-source="mobile"]');

  before(async () => {
    world = await startConsoleWorld('sqlite');
    teacher = await world.staff('teacher');
    proctor = await world.staff('proctor');
    const exam = await v3(
      'POST',
      '/exams',
      {
        name: 'Live geology',
        type: 'live_proctoring',
        duration_minutes: 60,
        web_cam: true,
        mobile_cam: true,
      },
      201,
    );
    examId = Number(object(exam.exam, 'exam').id);
    const created = object(
      (
        await v3(
          'POST',
          '/exams/:exam_id/student_sessions',
          { exam_id: examId, name: 'Grace Hopper', email: 'grace@example.org', skip_requirements: true },
          201,
        )
      ).student,
      'student',
    );
    sessionId = Number(created.id);
    await v3('POST', '/student_sessions/:id/assign_proctor', { id: sessionId, proctor_id: proctor.id });
    // The pairing token, as the room's QR code carries it (set here: this test is about the media).
    mobileToken = crypto.randomBytes(16).toString('hex');
    await world.server.app.database.db
      .updateTable('student_sessions')
      .set({ mobile_token: mobileToken })
      .where('id', '=', sessionId)
      .execute();

    // The computer: the exam room publishes its camera once it is tested.
    room = await newPage(world, { width: 1024, height: 768 });
    await room.goto(`${world.baseUrl}/room/${String(created.token)}`);
    await acceptPrivacy(room);
    await room.getByRole('button', { name: 'Test camera and microphone' }).click();
    await room
      .locator('#live-state', { hasText: 'Your proctor can see you' })
      .waitFor({ timeout: MEDIA_TIMEOUT });

    // The phone: a phone-sized context on a document of the service under the phone page's policy.
    phone = await newPage(world, { width: 390, height: 844 });
    await phone.goto(`${world.baseUrl}/m/assets/mobile-live.js`);

    wall = await signedInPage(world, proctor);
    await wall.goto(`${world.baseUrl}/console/exams/${examId}/live`);
    await wall.getByText('Video and chat: connected.').waitFor({ timeout: MEDIA_TIMEOUT });
    await tileSays(wall, sessionId, 'live');
  });

  after(async () => {
    await world?.close();
  });

  it('shows no phone video while no phone publishes', async () => {
    await wall.locator(`button.live-tile[data-session="${sessionId}"]`).click();
    await dialog().getByRole('heading', { name: 'Grace Hopper' }).waitFor();
    await framesAdvance(dialog().locator('video[data-source="camera"]'));
    assert.equal(await phoneVideo().count(), 0);
  });

  it("shows the phone's side view as a third video, Phone, with advancing frames", async () => {
    await startPhone();
    await phoneSays('live');
    assert.deepEqual(await phoneStates(), ['connecting', 'live']);
    const video = phoneVideo();
    await video.waitFor({ timeout: MEDIA_TIMEOUT });
    const presented = await framesAdvance(video);
    assert.ok(presented >= 4, `phone: ${presented} frames`);
    await dialog()
      .locator('figcaption', { hasText: /^Phone$/ })
      .waitFor();
    assert.equal(await video.getAttribute('aria-label'), 'Phone of Grace Hopper, side view, live');
    // The computer's camera plays on beside it.
    await framesAdvance(dialog().locator('video[data-source="camera"]'));
    // The fake camera's picture, not a black frame: some pixel of it is bright.
    const bright = await video.evaluate((element) => {
      const target = element as HTMLVideoElement;
      const canvas = document.createElement('canvas');
      canvas.width = target.videoWidth;
      canvas.height = target.videoHeight;
      const context = canvas.getContext('2d');
      if (context === null || canvas.width === 0) return false;
      context.drawImage(target, 0, 0);
      const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
      return data.some((value, index) => index % 4 !== 3 && value > 128);
    });
    assert.ok(bright, 'the phone video shows a picture');
    await assertNoSeriousAxeViolations(wall, 'live-phone');
    await wall.screenshot({ path: path.join(SCREENSHOT_DIR, 'live-phone.png') });
  });

  it('takes the phone video away when the phone stops, and shows it again when it is back', async () => {
    await phone.evaluate(() => (window as unknown as { live: { stop(): void } }).live.stop());
    await phoneVideo().waitFor({ state: 'detached', timeout: MEDIA_TIMEOUT });
    await framesAdvance(dialog().locator('video[data-source="camera"]'));
    await startPhone();
    await phoneSays('live');
    await framesAdvance(phoneVideo());
  });

  it("ends the phone's link when the exam ends", async () => {
    await world.server.app.database.db
      .updateTable('student_sessions')
      .set({ status: 'exam_started', start_time: Date.now() })
      .where('id', '=', sessionId)
      .execute();
    await v3('POST', '/student_sessions/:id/end_exam', { id: sessionId });
    await phoneSays('ended');
    await phoneVideo().waitFor({ state: 'detached', timeout: MEDIA_TIMEOUT });
    // The page's own camera is the page's: the live module never stops it.
    const tracks = await phone.evaluate(() =>
      (window as unknown as { stream: MediaStream }).stream.getTracks().map((track) => track.readyState),
    );
    assert.deepEqual(tracks, ['live']);
  });
});
