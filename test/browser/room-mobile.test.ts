/**
 * The computer's exam room in a `mobile_cam` exam, in Chromium: the setup shows how to open the
 * phone camera page (the QR code, the short address and the PIN), a new code replaces the old
 * phone link, and the page follows a phone that the test plays over plain HTTP against the phone
 * API (hello, check clip, heartbeats, recording chunks, leave): paired, check passed, sending
 * video; during the exam the header's indicator, the alert of a lost phone with the code again, and
 * its return; the finished page counts the phone's recording. Screenshots:
 * test-output/screenshots/room-mobile-<database>-NN-<step>.png.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchChromium, SCREENSHOT_DIR, type TestBrowser } from '../helpers/browser.ts';
import { type HttpAnswer, httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { multipartBody } from '../helpers/multipart.ts';
import { browserDialects, startTestServer, type TestServer } from '../helpers/server.ts';
import { freePort } from '../mail/support.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import { acceptPrivacy } from './privacy-support.ts';

type Json = Record<string, unknown>;

/** Real chunks of Chromium's MediaRecorder: chunk 0 opens the WebM stream (test/fixtures/recordings). */
const CHUNKS = [0, 1, 2, 3].map((n) =>
  fs.readFileSync(path.resolve(import.meta.dirname, `../fixtures/recordings/camera-a-${n}.webm`)),
);
/** The phone's check clip: a short WebM from a camera. */
const CHECK_CLIP = CHUNKS[0] as Buffer;
/** Generous: the page reads its view every 5 s on a shared two-core machine. */
const FOLLOW_MS = 45_000;
const DEVICE = 'Chrome 131 on Android 14';
const WIDE = { width: 1280, height: 800 };

/**
 * A phone as the phone page would drive the phone API, played over plain HTTP: it says hello,
 * sends its check clip, keeps itself heard (heartbeats) and, during the exam, sends 4-second
 * chunks, until it goes silent or says it is leaving.
 */
class SimulatedPhone {
  private timer: NodeJS.Timeout | undefined;
  private busy: Promise<unknown> = Promise.resolve();
  sequence = 0;
  sent = 0;

  private readonly baseUrl: string;
  readonly token: string;

  constructor(baseUrl: string, token: string) {
    this.baseUrl = baseUrl;
    this.token = token;
  }

  private async post(route: string, body?: Json): Promise<HttpAnswer> {
    return httpRequest({
      url: `${this.baseUrl}/api/mobile/${this.token}${route}`,
      method: 'POST',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  /** The phone page opened. Returns the phone view. */
  async hello(): Promise<Json> {
    const answer = await this.post('/hello', { device: DEVICE });
    assert.equal(answer.status, 200, answer.text);
    const mobile = object(object(answer.json, 'body').mobile, 'mobile');
    this.sequence = mobile.next_sequence as number;
    // A page opened again starts a new recorder: its first chunk opens a new WebM stream.
    this.sent = 0;
    return mobile;
  }

  async heartbeat(): Promise<void> {
    const answer = await this.post('/heartbeat', { battery_level: 0.8, charging: true, visible: true });
    assert.equal(answer.status, 200, answer.text);
  }

  /** The camera check's clip. Returns the phone view's `mobile`. */
  async check(clip: Buffer): Promise<Json> {
    const { body, contentType } = multipartBody({}, [
      { field: 'file', fileName: 'check.webm', contentType: 'video/webm', bytes: clip },
    ]);
    const answer = await httpRequest({
      url: `${this.baseUrl}/api/mobile/${this.token}/check`,
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
    });
    assert.equal(answer.status, 200, answer.text);
    return object(object(answer.json, 'body').mobile, 'mobile');
  }

  /** One recording chunk in turn (chunk 0 of a new recorder opens the WebM stream). */
  async chunk(): Promise<void> {
    const bytes = CHUNKS[this.sent % CHUNKS.length] as Buffer;
    const { body, contentType } = multipartBody({ sequence: String(this.sequence), source: 'mobile' }, [
      { field: 'file', fileName: `mobile-${this.sequence}.webm`, contentType: 'video/webm', bytes },
    ]);
    const answer = await httpRequest({
      url: `${this.baseUrl}/api/mobile/${this.token}/recordings`,
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
    });
    assert.equal(answer.status, 201, answer.text);
    this.sequence = object(answer.json, 'body').next_sequence as number;
    this.sent += 1;
  }

  async leave(): Promise<void> {
    this.stop();
    const answer = await this.post('/leave');
    assert.ok(answer.status < 300, answer.text);
  }

  /** Keeps the phone heard every 4 s: with heartbeats in setup, with chunks while recording. */
  run(mode: 'heartbeat' | 'recording'): void {
    this.stop();
    const beat = () => {
      this.busy = this.busy.then(() => (mode === 'recording' ? this.chunk() : this.heartbeat()));
    };
    beat();
    this.timer = setInterval(beat, 4000);
  }

  /** Goes silent (the page is closed without a word, the phone is off the network). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Waits for what is on its way, and fails on its error. */
  async settle(): Promise<void> {
    await this.busy;
  }
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`candidate exam room in Chromium: the phone as a second camera [${dialect}]`, () => {
    let server: TestServer;
    let chromium: TestBrowser;
    let page: Page;
    let token: string;
    let sessionId: number;
    let owner: Awaited<ReturnType<TestServer['user']>>;
    let phone: SimulatedPhone;
    let step = 0;

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      // PUBLIC_URL names the server itself: the address shown for typing is the real one.
      const port = await freePort();
      server = await startTestServer(dialect, { port, env: { PUBLIC_URL: `http://127.0.0.1:${port}` } });
      owner = await server.user(await server.institute(), 'teacher');
      const exam = await owner.client.v3('POST', '/exams', {
        name: 'Field botany',
        type: 'record_review',
        duration_minutes: 30,
        screen_share: true,
        mobile_cam: true,
      });
      assert.equal(exam.status, 201, exam.text);
      const student = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: object(object(exam.json, 'body').exam, 'exam').id as number,
        name: 'Ynes Mexia',
        email: 'ynes@example.org',
      });
      assert.equal(student.status, 201, student.text);
      const record = object(object(student.json, 'body').student, 'student');
      token = record.token as string;
      sessionId = record.id as number;
      chromium = await launchChromium(WIDE);
      page = await chromium.browser.newPage();
    });

    after(async () => {
      phone?.stop();
      await chromium?.close();
      await server?.close();
    });

    /** The room view's phone, read over HTTP as any client reads it. */
    async function roomMobile(): Promise<Json> {
      const answer = await httpRequest({ url: `${server.baseUrl}/api/room/${token}` });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').mobile, 'mobile');
    }

    /** The phone's token: the last path segment of the pairing URL. */
    function phoneToken(mobile: Json): string {
      const url = new URL(mobile.pairing_url as string);
      const last = url.pathname.split('/').filter(Boolean).pop();
      assert.ok(last, `a pairing URL with a token: ${url.href}`);
      return last;
    }

    async function screenshot(name: string): Promise<void> {
      step += 1;
      const file = path.join(
        SCREENSHOT_DIR,
        `room-mobile-${dialect}-${String(step).padStart(2, '0')}-${name}.png`,
      );
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: file, fullPage: true });
      assert.ok(fs.statSync(file).size > 0);
    }

    /** Waits until the element's text is `text` (or matches it), reading the page as it polls. */
    async function waitForText(selector: string, text: string | RegExp): Promise<void> {
      const source = typeof text === 'string' ? null : text.source;
      const exact = typeof text === 'string' ? text : null;
      try {
        await page.waitForFunction(
          ([css, whole, pattern]) => {
            const element = document.querySelector(css ?? '');
            const shown = element?.textContent?.trim() ?? '';
            return whole !== null ? shown === whole : new RegExp(pattern ?? '').test(shown);
          },
          [selector, exact, source] as const,
          { timeout: FOLLOW_MS },
        );
      } catch (error) {
        const shown = await page
          .locator(selector)
          .textContent()
          .catch(() => null);
        assert.fail(
          `${selector} should read ${String(text)}, reads ${JSON.stringify(shown)}: ${String(error)}`,
        );
      }
    }

    /** Every visible QR code has loaded a picture (no broken image). */
    async function assertQrLoaded(id: string): Promise<void> {
      await page.waitForFunction(
        (imageId) => {
          const image = document.getElementById(imageId);
          return image instanceof HTMLImageElement && image.complete && image.naturalWidth > 0;
        },
        id,
        { timeout: FOLLOW_MS },
      );
      assert.ok(await page.locator(`#${id}`).isVisible(), `#${id} shows`);
    }

    async function assertNoAlert(): Promise<void> {
      const alert = page.locator('#alert');
      if (await alert.isVisible()) assert.fail(`the room shows an error: ${await alert.textContent()}`);
    }

    /** Nothing is wider than the window. */
    async function assertNoSidewaysScroll(): Promise<void> {
      const widths = await page.evaluate(() => [
        document.documentElement.scrollWidth,
        document.documentElement.clientWidth,
      ]);
      assert.ok((widths[0] ?? 0) <= (widths[1] ?? 0) + 1, `scrolls sideways: ${widths.join(' > ')}`);
    }

    it('shows the QR code, the address and the PIN, and waits for the phone', async () => {
      await page.goto(`${server.baseUrl}/room/${token}`);
      await page.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(page);
      await assertNoAlert();
      const mobile = await roomMobile();
      assert.equal(mobile.status, 'not_paired');
      assert.match(mobile.pin_code as string, /^\d{6}$/);
      assert.ok(await page.getByRole('heading', { name: 'Your phone' }).isVisible());
      assert.ok(
        await page.getByRole('img', { name: 'QR code that opens the phone camera page' }).isVisible(),
      );
      await assertQrLoaded('setup-qr');
      assert.equal(mobile.pairing_address, `${server.baseUrl}/m`);
      assert.equal(
        (await page.locator('#setup-pairing-manual').textContent())?.trim(),
        `Or open ${server.baseUrl}/m on your phone and type the PIN ${mobile.pin_code as string} and your email.`,
      );
      assert.equal(await page.locator('#phone-status').getAttribute('role'), 'status');
      await waitForText('#phone-status', 'Waiting for your phone');
      await waitForText('[data-check="mobile_check"]', 'Phone camera: not checked yet');
      assert.match(
        (await page.locator('#start-help').textContent()) ?? '',
        /Still needed before you can start: .*Phone camera check \(not checked yet\)/,
      );
      assert.ok(await page.getByRole('button', { name: 'Start the exam' }).isDisabled());
      await assertNoSeriousAxeViolations(page, 'setup, phone waiting');
      await screenshot('waiting');
    });

    it('makes a new code on request: the QR code changes and the old phone link answers 404', async () => {
      const old = await roomMobile();
      const oldToken = phoneToken(old);
      const oldSource = await page.locator('#setup-qr').getAttribute('src');
      const button = page.getByRole('button', { name: 'Get a new code' });
      assert.equal(
        await button.getAttribute('aria-describedby'),
        'renew-help',
        'the button says that the old link stops working',
      );
      assert.match((await page.locator('#renew-help').textContent()) ?? '', /old code stops working/);
      await button.click();
      await page.waitForFunction(
        (before) => document.getElementById('setup-qr')?.getAttribute('src') !== before,
        oldSource,
        { timeout: FOLLOW_MS },
      );
      await assertQrLoaded('setup-qr');
      const focused = await page.evaluate(() => document.activeElement?.id ?? 'none');
      assert.equal(focused, 'renew-pairing', 'the focus stays on “Get a new code”');
      await assertNoAlert();
      const renewed = await roomMobile();
      assert.notEqual(renewed.pairing_url, old.pairing_url);
      const gone = await httpRequest({ url: `${server.baseUrl}/api/mobile/${oldToken}` });
      assert.equal(gone.status, 404, gone.text);
      const fresh = await httpRequest({ url: `${server.baseUrl}/api/mobile/${phoneToken(renewed)}` });
      assert.equal(fresh.status, 200, fresh.text);
      phone = new SimulatedPhone(server.baseUrl, phoneToken(renewed));
    });

    it('follows the phone: connected, check passed, sending video', async () => {
      await phone.hello();
      phone.run('heartbeat');
      await waitForText('#phone-status', 'Phone connected — run the camera check on the phone');
      await waitForText('#phone-device', `Your phone: ${DEVICE}`);
      await screenshot('paired');

      const mobile = await phone.check(CHECK_CLIP);
      assert.equal(mobile.status, 'streaming');
      await waitForText('[data-check="mobile_check"]', 'Phone camera: passed');
      await waitForText('#phone-status', 'Phone camera is sending video');
      assert.doesNotMatch((await page.locator('#start-help').textContent()) ?? '', /Phone camera/);
      await screenshot('check-passed');
    });

    it('lets the exam start once the computer’s checks passed too, on a wide and a narrow window', async () => {
      await page.getByRole('button', { name: 'Share your screen' }).click();
      await page.getByText('Screen sharing: passed').waitFor();
      await page.getByRole('button', { name: 'Measure your connection' }).click();
      await page.getByText(/Connection speed: (passed|failed)/).waitFor({ timeout: FOLLOW_MS });
      const start = page.getByRole('button', { name: 'Start the exam' });
      await page.waitForFunction(
        () => !(document.getElementById('start-exam') as HTMLButtonElement | null)?.disabled,
        undefined,
        { timeout: FOLLOW_MS },
      );
      assert.ok(await start.isEnabled());
      await assertNoAlert();
      await assertNoSeriousAxeViolations(page, 'setup, phone checked');
      await screenshot('ready');
      await page.setViewportSize({ width: 480, height: 800 });
      await assertNoSidewaysScroll();
      await page.locator('#check-phone').scrollIntoViewIfNeeded();
      await page.screenshot({
        path: path.join(
          SCREENSHOT_DIR,
          `room-mobile-${dialect}-${String((step += 1)).padStart(2, '0')}-narrow-setup.png`,
        ),
      });
      await page.setViewportSize(WIDE);
    });

    it('shows the phone recording during the exam', async () => {
      await phone.settle();
      await page.getByRole('button', { name: 'Start the exam' }).click();
      await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      phone.run('recording');
      await waitForText('#phone-indicator-text', 'Phone: recording');
      assert.ok(await page.locator('#phone-indicator').isVisible());
      await phone.settle();
      const mobile = await roomMobile();
      assert.equal(mobile.status, 'streaming');
      assert.ok((mobile.chunks_count as number) >= 1, 'the phone’s chunks arrive');
      assert.ok(!(await page.locator('#phone-away').isVisible()), 'no alert while the phone records');
      await assertNoAlert();
      await assertNoSeriousAxeViolations(page, 'exam, phone recording');
      await screenshot('exam-recording');
    });

    it('says what to do when the phone goes silent, with the code again, and hears its return', async () => {
      phone.stop();
      await phone.settle();
      // Nothing heard for 15 s: the server calls it lost at the next read.
      await waitForText('#phone-indicator-text', 'Phone: not responding');
      await waitForText(
        '#phone-away-text',
        'Your phone stopped recording. Open the phone page again (scan the code below) and keep it plugged in; the exam continues meanwhile.',
      );
      assert.equal(await page.locator('#phone-away-text').getAttribute('role'), 'alert');
      await assertQrLoaded('exam-qr');
      const mobile = await roomMobile();
      assert.equal(mobile.status, 'lost');
      assert.match(
        (await page.locator('#exam-pairing-manual').textContent()) ?? '',
        new RegExp(`type the PIN ${mobile.pin_code as string} and your email`),
      );
      assert.ok(await page.getByRole('link', { name: 'What to do' }).isVisible());
      await assertNoSeriousAxeViolations(page, 'exam, phone lost');
      await screenshot('exam-lost');
      await page.setViewportSize({ width: 480, height: 800 });
      await assertNoSidewaysScroll();
      await page.getByRole('link', { name: 'What to do' }).click();
      await page.screenshot({
        path: path.join(
          SCREENSHOT_DIR,
          `room-mobile-${dialect}-${String((step += 1)).padStart(2, '0')}-narrow-lost.png`,
        ),
      });
      await page.setViewportSize(WIDE);

      // The phone page opens again and records on in the same numbering.
      await phone.hello();
      phone.run('recording');
      await waitForText('#phone-indicator-text', 'Phone: recording');
      assert.ok(!(await page.locator('#phone-away').isVisible()), 'the alert went away');
      await waitForText('#status', 'Phone recording again.');
      await screenshot('exam-back');
    });

    it('shows the phone lost at once when its page says it is leaving, and back again', async () => {
      await phone.settle();
      await phone.leave();
      await waitForText('#phone-indicator-text', 'Phone: not responding');
      assert.ok(await page.locator('#phone-away').isVisible());
      await phone.hello();
      phone.run('recording');
      await waitForText('#phone-indicator-text', 'Phone: recording');
      assert.ok(!(await page.locator('#phone-away').isVisible()));
    });

    it('counts the phone’s recording on the finished page', async () => {
      phone.stop();
      await phone.settle();
      await page.getByRole('button', { name: 'Finish the exam' }).click();
      await page.getByRole('button', { name: 'Yes, finish now' }).click();
      await page.getByRole('heading', { name: 'Your exam is finished' }).waitFor({ timeout: 60_000 });
      const parts = phone.sequence === 1 ? '1 part' : `${phone.sequence} parts`;
      await page.locator('#arrival-list').getByText(`Phone recording: ${parts} received`).waitFor();
      assert.ok(!(await page.locator('#phone-indicator').isVisible()), 'no phone indicator once finished');
      const record = await owner.client.v3('GET', '/student_sessions/:id', { id: sessionId });
      const student = object(object(record.json, 'body').student, 'student');
      assert.equal(student.status, 'exam_finished');
      assert.equal(student.mobile_check, 'succeeded');
      await assertNoSeriousAxeViolations(page, 'finished');
      await screenshot('finished');
    });
  });
}
