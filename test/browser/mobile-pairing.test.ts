/**
 * The phone as a second camera, in Chromium with two contexts: the computer's exam room (desktop)
 * and a phone (a phone's viewport, touch and user agent), both with Chromium's fake camera. One
 * student pairs by PIN and email at /m; another by the QR code's address, passes the phone camera
 * check, starts the exam on the computer with every check done (the phone's included), and the
 * phone records by itself as source `mobile`. Closing the phone page during the exam raises the
 * lost incident and the room says so; opening the link again resumes the numbering, with no gap.
 * Screenshots of both screens at each step: test-output/screenshots/mobile-pairing-*.png.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { fetchAddress } from '../helpers/files.ts';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import { startConsoleWorld, type ConsoleWorld, type StaffUser } from './console/support.ts';
import { MEDIA_TIMEOUT } from './live-support.ts';
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
  PHONE_BACK,
  PHONE_DEVICE,
  PHONE_LOST,
  phoneChunks,
  phoneFiles,
  roomMobile,
  roomView,
  runPhoneCheck,
  runRoomChecks,
  screenshots,
  v3,
} from './mobile-support.ts';
import { acceptPrivacy } from './privacy-support.ts';

for (const dialect of browserDialects(import.meta.url)) {
  describe(`the phone as a second camera: pairing, recording, lost and back [${dialect}]`, () => {
    let world: ConsoleWorld;
    let teacher: StaffUser;
    let examId: number;
    let room: Page;
    let phoneContext: BrowserContext;
    let phone: Page;
    let qrSession: { id: number; token: string };
    let pairingUrl: string;
    let chunksBeforeClosing = 0;
    const screenshot = screenshots('pairing', dialect);

    before(async () => {
      world = await startConsoleWorld(dialect);
      teacher = await world.staff('teacher');
      examId = object(
        (
          await v3(teacher, 'POST', '/exams', {
            name: 'Marine biology',
            type: 'record_review',
            duration_minutes: 30,
            web_cam: true,
            mobile_cam: true,
          })
        ).exam,
        'exam',
      ).id as number;
      room = await newComputer(world.chromium);
    });

    after(async () => {
      await world?.close();
    });

    async function student(name: string, email: string): Promise<{ id: number; token: string; pin: string }> {
      const record = object(
        (await v3(teacher, 'POST', '/exams/:exam_id/student_sessions', { exam_id: examId, name, email }))
          .student,
        'student',
      );
      return {
        id: record.id as number,
        token: record.token as string,
        pin: String(record.pin_code).padStart(6, '0'),
      };
    }

    async function session(id: number): Promise<Json> {
      return object((await v3(teacher, 'GET', '/student_sessions/:id', { id })).student, 'student');
    }

    it('pairs a phone by PIN and email on the short address, after refusing a wrong PIN', async () => {
      const student1 = await student('Rachel Carson', 'rachel@example.org');
      // The room shows the address and the PIN for a phone that cannot scan.
      await room.goto(`${world.baseUrl}/room/${student1.token}`);
      await room.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(room);
      const mobile = await roomMobile(world, student1.token);
      assert.equal(mobile.pairing_address, `${world.baseUrl}/m`);
      assert.equal(mobile.pin_code, student1.pin);
      assert.equal(mobile.status, 'not_paired');
      await screenshot(room, 'room', 'pin-shown');

      const pin = await newPhone(world);
      await pin.page.goto(String(mobile.pairing_address));
      await pin.page.getByRole('heading', { name: 'Connect your phone' }).waitFor();
      await assertPhoneFriendly(pin.page, 'PIN form');
      await screenshot(pin.page, 'phone', 'pin-form');

      // Typed and sent from the keyboard.
      const wrong = student1.pin === '000000' ? '000001' : '000000';
      await pin.page.getByLabel('PIN').fill(wrong);
      await pin.page.getByLabel('Email address').fill('rachel@example.org');
      const refused = pin.page.waitForResponse((response) => response.url().endsWith('/m'));
      await pin.page.getByLabel('Email address').press('Enter');
      assert.equal((await refused).status(), 422);
      await pin.page.getByRole('alert').getByText('That PIN and email do not match').waitFor();
      assert.equal(await pin.page.getByLabel('Email address').inputValue(), 'rachel@example.org');
      await assertPhoneFriendly(pin.page, 'PIN form, refused');
      await screenshot(pin.page, 'phone', 'pin-refused');

      await pin.page.getByLabel('PIN').fill(student1.pin);
      await pin.page.getByRole('button', { name: 'Connect this phone' }).click();
      await pin.page.getByRole('heading', { name: 'Set up your phone camera' }).waitFor();
      await acceptPrivacy(pin.page);
      assert.equal(pin.page.url(), mobile.pairing_url, 'the PIN leads to the QR code’s page');
      const paired = await eventually('the phone paired', async () => {
        const now = await roomMobile(world, student1.token);
        return now.status === 'paired' ? now : undefined;
      });
      assert.equal(paired.device, PHONE_DEVICE);
      await room.locator('#phone-status', { hasText: /connected/i }).waitFor({ timeout: FOLLOW_MS });
      await assertPhoneFriendly(pin.page, 'phone setup');
      await screenshot(pin.page, 'phone', 'paired-by-pin');
      await screenshot(room, 'room', 'paired-by-pin');

      // A new code on the computer: this phone's link stops working, and its page says what to do.
      await room.getByRole('button', { name: 'Get a new code' }).click();
      await pin.page
        .getByRole('heading', { name: 'This phone link no longer works' })
        .waitFor({ timeout: FOLLOW_MS });
      assert.match(
        (await pin.page.locator('#gone-text').textContent()) ?? '',
        /scan the newest code shown in the exam room/,
      );
      await assertPhoneFriendly(pin.page, 'phone link replaced');
      await screenshot(pin.page, 'phone', 'link-replaced');
      await pin.context.close();
    });

    it('pairs a phone by the QR code’s address and passes the phone camera check', async () => {
      qrSession = await student('Sylvia Earle', 'sylvia@example.org');
      await room.goto(`${world.baseUrl}/room/${qrSession.token}`);
      await room.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(room);
      pairingUrl = String((await roomMobile(world, qrSession.token)).pairing_url);
      assert.match(pairingUrl, new RegExp(`^${world.baseUrl}/m/[0-9a-f]{32}$`));
      await screenshot(room, 'room', 'qr-shown');

      ({ context: phoneContext, page: phone } = await newPhone(world));
      await phone.goto(pairingUrl);
      await phone.getByRole('heading', { name: 'Set up your phone camera' }).waitFor();
      await acceptPrivacy(phone);
      assert.equal(await phone.title(), 'Marine biology · phone camera');
      assert.ok(await phone.getByText('Your face, your hands and your screen in view').isVisible());
      await screenshot(phone, 'phone', 'opened');

      await chooseCamera(phone, 'Back camera');
      assert.ok(await phone.locator('#framing-guide').isVisible(), 'the framing guide covers the picture');
      await assertNoAlert(phone, 'the phone');
      await assertPhoneFriendly(phone, 'phone camera on');
      await screenshot(phone, 'phone', 'camera-on');
      // Landscape: the picture beside the controls, nothing wider than the screen.
      await phone.setViewportSize({ width: 844, height: 390 });
      await assertPhoneFriendly(phone, 'phone camera on, landscape');
      await screenshot(phone, 'phone', 'camera-on-landscape');
      await phone.setViewportSize({ width: 390, height: 844 });

      await runPhoneCheck(phone);
      assert.ok(
        await phone
          .getByText('Keep this page open; recording starts when you start the exam on your computer.')
          .isVisible(),
      );
      const view = await roomView(world, qrSession.token);
      assert.equal(object(view.session, 'session').mobile_check, 'succeeded');
      await room.locator('#phone-status', { hasText: /check passed/i }).waitFor({ timeout: FOLLOW_MS });
      await assertPhoneFriendly(phone, 'phone waiting');
      await screenshot(phone, 'phone', 'check-passed');
      await screenshot(room, 'room', 'phone-check-passed');
    });

    it('starts the exam on the computer after every check, and the phone records as source mobile', async () => {
      const required = object((await roomView(world, qrSession.token)).session, 'session').required_checks;
      assert.ok(Array.isArray(required) && required.includes('mobile_check'), JSON.stringify(required));
      await runRoomChecks(room, { screen: false });
      const start = room.getByRole('button', { name: 'Start the exam' });
      assert.ok(await start.isEnabled(), (await room.locator('#start-help').textContent()) ?? '');
      await screenshot(room, 'room', 'checks-done');
      await start.click();
      await room.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      assert.equal((await session(qrSession.id)).skip_requirements, false);

      // The phone hears of the start at its next heartbeat and records by itself.
      await phone.getByRole('heading', { name: 'Exam in progress' }).waitFor({ timeout: FOLLOW_MS });
      await phone.locator('#recording-state', { hasText: 'Recording' }).waitFor({ timeout: FOLLOW_MS });
      const files = await phoneChunks(teacher, qrSession.id, 2);
      for (const [index, file] of files.entries()) {
        assert.equal(file.kind, 'mobile_recording');
        assert.equal(file.sequence, index);
        assert.equal(file.file_name, `mobile-${index}.webm`);
        assert.match(String(file.content_type), /^video\/webm/);
      }
      const first = await fetchAddress(world.server, String(files[0]?.url));
      assert.ok(first.bytes.subarray(0, 4).equals(EBML_MAGIC), 'the first chunk opens a WebM stream');
      await room.locator('#phone-indicator', { hasText: 'Phone: recording' }).waitFor({ timeout: FOLLOW_MS });
      await phone.locator('#chunks-sent', { hasText: /^[1-9]\d*$/ }).waitFor({ timeout: FOLLOW_MS });
      assert.match((await phone.locator('#time-left').textContent()) ?? '', /^(30:00|29:\d\d)$/);
      await assertPhoneFriendly(phone, 'phone recording');
      await screenshot(phone, 'phone', 'recording');
      await screenshot(room, 'room', 'exam-phone-recording');
    });

    it('raises the lost incident when the phone page is closed, and the room shows it', async () => {
      // Leaving while recording asks first (beforeunload); the student confirms.
      let warned = false;
      phone.on('dialog', (dialog) => {
        warned = dialog.type() === 'beforeunload';
        void dialog.accept();
      });
      const closed = new Promise((resolve) => phone.once('close', resolve));
      await phone.close({ runBeforeUnload: true });
      await closed;
      assert.ok(warned, 'the page warned before leaving while recording');

      const lost = await eventually('the mobile_lost incident', async () => {
        const incidents = (await session(qrSession.id)).incidents as Json[];
        return incidents.find((incident) => incident.comment === PHONE_LOST);
      });
      assert.ok(Number(lost.offset_time) >= 0);
      // Counted once the page is long gone, so no chunk of it is still on its way.
      chunksBeforeClosing = (await phoneFiles(teacher, qrSession.id)).length;
      assert.ok(chunksBeforeClosing >= 2);
      await room.locator('#phone-away-text').waitFor({ timeout: FOLLOW_MS });
      assert.match((await room.locator('#phone-away-text').textContent()) ?? '', /phone stopped recording/i);
      assert.equal((await roomMobile(world, qrSession.token)).status, 'lost');
      await screenshot(room, 'room', 'phone-lost');
    });

    it('resumes the numbering when the phone link is opened again, with no gap', async () => {
      phone = await phoneContext.newPage();
      await phone.goto(pairingUrl);
      // The page turns on the camera it used before and records at once.
      await phone.getByRole('heading', { name: 'Exam in progress' }).waitFor({ timeout: FOLLOW_MS });
      await phone.locator('#recording-state', { hasText: 'Recording' }).waitFor({ timeout: FOLLOW_MS });
      const files = await phoneChunks(teacher, qrSession.id, chunksBeforeClosing + 2);
      assert.deepEqual(
        files.map((file) => file.sequence),
        files.map((_file, index) => index),
        'the phone chunks are numbered without a gap',
      );
      // The reopened page's first chunk begins a new WebM stream right after the old ones.
      const resumed = await fetchAddress(world.server, String(files[chunksBeforeClosing]?.url));
      assert.ok(resumed.bytes.subarray(0, 4).equals(EBML_MAGIC), 'the resumed recording opens a WebM stream');
      await eventually('the mobile_returned incident', async () => {
        const incidents = (await session(qrSession.id)).incidents as Json[];
        return incidents.find((incident) => incident.comment === PHONE_BACK);
      });
      await room.locator('#phone-indicator', { hasText: 'Phone: recording' }).waitFor({ timeout: FOLLOW_MS });
      assert.ok(!(await room.locator('#phone-away').isVisible()), 'the room’s alert went away');
      await assertPhoneFriendly(phone, 'phone reopened');
      await screenshot(phone, 'phone', 'reopened-recording');
      await screenshot(room, 'room', 'phone-back');
    });
  });
}

describe('the phone as a second camera in a live-proctored exam: its page shows the camera to the proctor [sqlite]', () => {
  let world: ConsoleWorld;
  const screenshot = screenshots('live', 'sqlite');

  before(async () => {
    world = await startConsoleWorld('sqlite');
  });

  after(async () => {
    await world?.close();
  });

  it('publishes the chosen camera through the live module and says so on the phone', async () => {
    const teacher = await world.staff('teacher');
    const examId = object(
      (
        await v3(teacher, 'POST', '/exams', {
          name: 'Live volcanology',
          type: 'live_proctoring',
          duration_minutes: 60,
          web_cam: true,
          mobile_cam: true,
        })
      ).exam,
      'exam',
    ).id as number;
    const record = object(
      (
        await v3(teacher, 'POST', '/exams/:exam_id/student_sessions', {
          exam_id: examId,
          name: 'Katia Krafft',
          email: 'katia@example.org',
        })
      ).student,
      'student',
    );
    const room = await newComputer(world.chromium);
    await room.goto(`${world.baseUrl}/room/${String(record.token)}`);
    await room.getByRole('heading', { name: 'Before you start' }).waitFor();
    await acceptPrivacy(room);
    const { page: phone } = await newPhone(world);
    await phone.goto(String((await roomMobile(world, String(record.token))).pairing_url));
    await phone.getByRole('heading', { name: 'Set up your phone camera' }).waitFor();
    await acceptPrivacy(phone);
    await chooseCamera(phone, 'Back camera');
    await phone
      .locator('#live-state', { hasText: 'Your proctor can see this camera.' })
      .waitFor({ timeout: MEDIA_TIMEOUT });
    assert.equal(await phone.locator('#live-state').getAttribute('role'), 'status');
    // Another camera keeps the proctor's link (handed to it, not a new one).
    await chooseCamera(phone, 'Front camera');
    await phone
      .locator('#live-state', { hasText: 'Your proctor can see this camera.' })
      .waitFor({ timeout: MEDIA_TIMEOUT });
    await assertPhoneFriendly(phone, 'phone, live');
    await screenshot(phone, 'phone', 'live');
  });
});
