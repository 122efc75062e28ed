/**
 * An exempt-webcam candidate in Chromium (issue 26, docs/accommodations.md): the browser has the
 * camera refused, the setup shows the camera and the two photos as "not needed for you" and never
 * asks for the camera, only the microphone; the candidate starts the exam and reaches it. Once in
 * English and once in Arabic (right to left), with axe on the setup and screenshots in
 * test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { catalogue } from '../../src/i18n/catalogues.ts';
import { type PageLocale, textDirection } from '../../src/i18n/locales.ts';
import { type MessageValues, Translator } from '../../src/i18n/translate.ts';
import { CHROMIUM_FLAGS, CHROMIUM_PATH, SCREENSHOT_DIR } from '../helpers/browser.ts';
import { object } from '../helpers/json.ts';
import { browserDialects, startTestServer, type TestServer } from '../helpers/server.ts';
import { acceptPrivacy } from './privacy-support.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const NO_CAMERA = { exemptions: [{ check: 'webcam', reason: 'Broken camera, confirmed by the office' }] };

/** A page's words in `locale`, straight from the catalogue the page uses. */
function wordsOf(locale: PageLocale): (key: string, values?: MessageValues) => string {
  const translator = new Translator(locale, catalogue(locale));
  return (key, values) => translator.t(key, values);
}

/**
 * Chromium with a fake microphone only: the camera is refused. Without the flag that allows every
 * device unasked, only the microphone permission is granted; and the page's getUserMedia refuses
 * any request for video (as a browser without a usable camera does) and notes every request, so
 * the test can tell the setup never asked for the camera.
 */
async function launchWithoutCamera(
  origin: string,
): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS.filter((flag) => flag !== '--use-fake-ui-for-media-stream'),
    ignoreDefaultArgs: ['--headless'],
    viewport: { width: 1280, height: 900 },
  });
  await context.grantPermissions(['microphone'], { origin });
  await context.addInitScript(() => {
    const asks: { video: boolean; audio: boolean }[] = [];
    (window as unknown as { mediaAsks: typeof asks }).mediaAsks = asks;
    const devices = navigator.mediaDevices;
    const original = devices.getUserMedia.bind(devices);
    devices.getUserMedia = (constraints?: MediaStreamConstraints) => {
      const video = Boolean(constraints?.video);
      asks.push({ video, audio: Boolean(constraints?.audio) });
      if (video) return Promise.reject(new DOMException('Permission denied', 'NotAllowedError'));
      return original(constraints);
    };
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`exempt-webcam candidate in Chromium [${dialect}]`, () => {
    let server: TestServer;
    let owner: TestUser;
    let examId: number;
    let sequence = 0;

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      server = await startTestServer(dialect);
      owner = await server.user(await server.institute(), 'teacher');
      const exam = await owner.client.v3('POST', '/exams', {
        name: 'Statistics',
        type: 'record_review',
        duration_minutes: 30,
        web_cam: true,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = object(object(exam.json, 'body').exam, 'exam').id as number;
      const document = await owner.client.v3('POST', '/exams/:exam_id/documents', {
        exam_id: examId,
        exam_content: '<p>Answer all questions.</p>',
      });
      assert.equal(document.status, 201, document.text);
    });

    after(async () => {
      await server?.close();
    });

    async function student(language: string): Promise<{ token: string; id: number }> {
      sequence += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Grace Hopper',
        email: `grace${sequence}@example.org`,
        language,
        accommodations: JSON.stringify(NO_CAMERA),
      });
      assert.equal(answer.status, 201, answer.text);
      const record = object(object(answer.json, 'body').student, 'student');
      return { token: record.token as string, id: record.id as number };
    }

    async function record(id: number): Promise<Json> {
      const answer = await owner.client.v3('GET', '/student_sessions/:id', { id });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').student, 'student');
    }

    async function screenshot(page: Page, name: string): Promise<void> {
      await page.evaluate(() => window.scrollTo(0, 0));
      const file = path.join(SCREENSHOT_DIR, `room-exemptions-${dialect}-${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      assert.ok(fs.statSync(file).size > 0);
    }

    async function assertNoAlert(page: Page): Promise<void> {
      const alert = page.locator('#alert');
      if (await alert.isVisible()) assert.fail(`the room shows an error: ${await alert.textContent()}`);
    }

    for (const locale of ['en', 'ar'] as const) {
      it(`starts without a camera, in ${locale}`, async () => {
        const t = wordsOf(locale);
        const { token, id } = await student(locale);
        const browser = await launchWithoutCamera(server.baseUrl);
        try {
          const page = await browser.context.newPage();
          await page.goto(`${server.baseUrl}/room/${token}`);
          await page.getByRole('heading', { name: t('room.setup.heading') }).waitFor();
          await acceptPrivacy(page);
          const root = await page.evaluate(() => document.documentElement.dir);
          assert.equal(root, textDirection(locale));

          // The camera and both photos are not needed; the reason (staff only) is nowhere.
          const notNeeded = (name: string) => t('room.setup.exempt.line', { check: name });
          await page
            .getByText(notNeeded(t('room.checks.name.webcam')))
            .first()
            .waitFor();
          await page.getByText(notNeeded(t('room.checks.name.idPhoto'))).waitFor();
          await page.getByText(notNeeded(t('room.checks.name.facePhoto'))).waitFor();
          assert.equal(await page.getByText(NO_CAMERA.exemptions[0]?.reason ?? '').count(), 0);
          // "Your exam" says what is recorded: the microphone, not the camera.
          await page.getByText(t('room.setup.about.recordedMicrophoneOnly')).waitFor();
          assert.equal(await page.getByRole('button', { name: t('room.setup.camera.button') }).count(), 0);
          assert.equal(
            await page.getByRole('button', { name: t('room.setup.photos.takeIdCard') }).count(),
            0,
          );
          // The exempt check is marked skipped for the record, without the candidate doing anything.
          for (let round = 0; round < 50 && (await record(id)).webcam_check !== 'skipped'; round += 1) {
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          assert.equal((await record(id)).webcam_check, 'skipped');
          await assertNoSeriousAxeViolations(page, `exempt setup in ${locale}`);
          await screenshot(page, `${locale}-01-setup`);

          // Only the microphone is asked for, and the connection measured.
          const passed = (field: string) => page.locator(`li[data-check="${field}"].succeeded`).waitFor();
          const microphone = page.getByRole('button', { name: t('room.setup.camera.buttonMicrophone') });
          await microphone.focus();
          await page.keyboard.press('Enter');
          await passed('microphone_check');
          await page.getByRole('button', { name: t('room.setup.bandwidth.button') }).click();
          await passed('bandwidth_check');
          await page.locator('#start-help', { hasText: t('room.setup.start.ready') }).waitFor();
          await assertNoAlert(page);
          await assertNoSeriousAxeViolations(page, `exempt setup done in ${locale}`);
          await screenshot(page, `${locale}-02-ready`);

          const start = page.getByRole('button', { name: t('room.setup.start.button') });
          await start.focus();
          await page.keyboard.press('Enter');
          await page.getByRole('heading', { name: t('room.exam.heading') }).waitFor();
          await assertNoAlert(page);
          await screenshot(page, `${locale}-03-exam`);

          const asks = await page.evaluate(
            () => (window as unknown as { mediaAsks: { video: boolean; audio: boolean }[] }).mediaAsks,
          );
          assert.ok(asks.length > 0, 'the microphone was asked for');
          assert.deepEqual(
            asks.filter((ask) => ask.video),
            [],
            'the camera was never asked for',
          );
          const stored = await record(id);
          assert.equal(stored.status, 'exam_started');
          assert.equal(stored.webcam_check, 'skipped');
          assert.equal(stored.microphone_check, 'succeeded');
        } finally {
          await browser.close();
        }
      });
    }
  });
}
