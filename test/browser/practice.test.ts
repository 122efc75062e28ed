/**
 * The practice run in Chromium (docs/practice.md): a student with the fake camera, microphone and
 * screen runs every check, the photos and the 30-second test recordings and reads "You are ready";
 * a student whose browser refuses the camera (Chromium without the fake devices' permission) reads
 * which check failed and what to do. Then the office's V3 list shows both outcomes, and the
 * sessions' status is unchanged. A second run in Arabic shows the page right to left. Screenshots
 * land in test-output/screenshots/practice-*.png.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { catalogue } from '../../src/i18n/catalogues.ts';
import { Translator } from '../../src/i18n/translate.ts';
import {
  CHROMIUM_FLAGS,
  CHROMIUM_PATH,
  launchChromium,
  SCREENSHOT_DIR,
  type TestBrowser,
} from '../helpers/browser.ts';
import { object } from '../helpers/json.ts';
import { browserDialects, startTestServer, type TestServer } from '../helpers/server.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import { signIn, TEST_PASSWORD } from './console/support.ts';
import { freePort } from '../mail/support.ts';

type TestUser = Awaited<ReturnType<TestServer['user']>>;

const en = new Translator('en', catalogue('en'));
const OWNER_EMAIL = 'practice-owner@example.org';
const ar = new Translator('ar', catalogue('ar'));

for (const dialect of browserDialects(import.meta.url)) {
  describe(`practice run in Chromium [${dialect}]`, () => {
    let server: TestServer;
    let chromiumFake: TestBrowser;
    let refusing: Browser;
    let owner: TestUser;
    let examId: number;
    let students = 0;

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      // The console's sign-in checks the page's origin against PUBLIC_URL: the server's own address.
      const port = await freePort();
      server = await startTestServer(dialect, { port, env: { PUBLIC_URL: `http://127.0.0.1:${port}` } });
      owner = await server.user(await server.institute(), 'teacher', OWNER_EMAIL);
      chromiumFake = await launchChromium();
      // No fake devices and no automatic yes: the browser refuses the camera the page asks for.
      refusing = await chromium.launch({
        executablePath: CHROMIUM_PATH,
        headless: true,
        args: CHROMIUM_FLAGS.filter(
          (flag) =>
            flag !== '--use-fake-ui-for-media-stream' && flag !== '--use-fake-device-for-media-stream',
        ),
        ignoreDefaultArgs: ['--headless'],
      });
      const exam = await owner.client.v3('POST', '/exams', {
        name: 'Practised chemistry',
        type: 'record_review',
        duration_minutes: 30,
        web_cam: true,
        screen_share: true,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = object(object(exam.json, 'body').exam, 'exam').id as number;
    });

    after(async () => {
      await chromiumFake?.close();
      await refusing?.close();
      await server?.close();
    });

    async function student(language?: string): Promise<{ token: string; id: number }> {
      students += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: `Practising ${students}`,
        email: `practising${students}@example.org`,
        ...(language === undefined ? {} : { language }),
      });
      assert.equal(answer.status, 201, answer.text);
      const record = object(object(answer.json, 'body').student, 'student');
      return { token: record.token as string, id: record.id as number };
    }

    async function screenshot(page: Page, name: string): Promise<void> {
      const file = path.join(SCREENSHOT_DIR, `practice-${dialect}-${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      assert.ok(fs.statSync(file).size > 0);
    }

    async function practice(page: Page, token: string, t: Translator, screen: boolean): Promise<void> {
      await page.goto(`${server.baseUrl}/room/${token}/practice`);
      await page.getByRole('button', { name: t.t('practice.start') }).click();
      if (screen) await page.getByRole('button', { name: t.t('practice.shareScreen') }).click();
      await page.locator('#verdict-heading').waitFor({ timeout: 90_000 });
    }

    async function listed(status: string): Promise<number[]> {
      const answer = await owner.client.v3('GET', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        practice_status: status,
      });
      assert.equal(answer.status, 200, answer.text);
      const students = object(answer.json, 'body').students as Record<string, unknown>[];
      return students.map((record) => record.id as number);
    }

    it('passes with the fake camera and screen, and fails naming the camera when the browser refuses it', async () => {
      const ready = await student();
      const page = await chromiumFake.browser.newPage();
      await page.goto(`${server.baseUrl}/room/${ready.token}/practice`);
      await page.getByRole('button', { name: en.t('practice.start') }).waitFor();
      await assertNoSeriousAxeViolations(page, 'practice intro');
      await screenshot(page, 'intro-en');
      await page.getByRole('button', { name: en.t('practice.start') }).click();
      await page.getByRole('button', { name: en.t('practice.shareScreen') }).click();
      await page.locator('#verdict-heading').waitFor({ timeout: 90_000 });
      assert.equal(
        (await page.locator('#verdict-heading').textContent())?.trim(),
        en.t('practice.ready.heading'),
      );
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'verdict-heading');
      await assertNoSeriousAxeViolations(page, 'practice passed');
      await screenshot(page, 'passed-en');
      await page.close();

      const refused = await student();
      const context = await refusing.newContext();
      const denied = await context.newPage();
      // A headless Chromium without the fake devices leaves the camera's permission prompt open
      // for ever; the answer a candidate gives by refusing it is what the page must handle.
      await denied.addInitScript(() => {
        const refuse = () => Promise.reject(new DOMException('Permission denied', 'NotAllowedError'));
        navigator.mediaDevices.getUserMedia = refuse;
        navigator.mediaDevices.getDisplayMedia = refuse;
      });
      await denied.goto(`${server.baseUrl}/room/${refused.token}/practice`);
      await denied.getByRole('button', { name: en.t('practice.start') }).click();
      // The screen is refused too (no automatic choice): the camera is the first to fail.
      const share = denied.getByRole('button', { name: en.t('practice.shareScreen') });
      await share.click();
      await denied.locator('#verdict-heading').waitFor({ timeout: 90_000 });
      assert.equal(
        (await denied.locator('#verdict-heading').textContent())?.trim(),
        en.t('practice.failed.heading', { check: en.t('practice.check.webcam') }),
      );
      assert.ok(
        (await denied.locator('li[data-check="webcam"] .fix').textContent())?.includes(
          en.t('practice.fix.webcam').slice(0, 20),
        ),
      );
      await screenshot(denied, 'failed-en');
      await context.close();

      // The office sees both: through V3, and in the console's readiness column.
      assert.ok((await listed('passed')).includes(ready.id));
      assert.ok((await listed('failed')).includes(refused.id));
      await server.app.services.staffAuth.setPassword(owner.id, TEST_PASSWORD);
      const office = await chromiumFake.browser.newPage();
      await signIn(office, server.baseUrl, OWNER_EMAIL);
      await office.goto(`${server.baseUrl}/console/exams/${examId}/students`);
      const readiness = (name: string) =>
        office.getByRole('row', { name: new RegExp(name) }).locator('.practice');
      await readiness('Practising 1').waitFor();
      assert.match((await readiness('Practising 1').textContent()) ?? '', /^Passed \(/);
      assert.match((await readiness('Practising 2').textContent()) ?? '', /^Failed: Webcam \(/);
      await assertNoSeriousAxeViolations(office, 'students with readiness');
      await screenshot(office, 'console-readiness-en');
      await office.close();
      const record = await owner.client.v3('GET', '/student_sessions/:id', { id: refused.id });
      assert.equal(record.status, 200, record.text);
      const fields = object(object(record.json, 'body').student, 'student');
      assert.equal(fields.status, 'registered', 'the practice moved no status');
    });

    it('reads right to left in Arabic', async () => {
      const arabic = await student('ar');
      const page = await chromiumFake.browser.newPage();
      await practice(page, arabic.token, ar, true);
      const root = await page.evaluate(() => ({
        lang: document.documentElement.lang,
        dir: document.documentElement.dir,
      }));
      assert.deepEqual(root, { lang: 'ar', dir: 'rtl' });
      assert.equal(
        (await page.locator('#verdict-heading').textContent())?.trim(),
        ar.t('practice.ready.heading'),
      );
      await screenshot(page, 'passed-ar');
      await page.close();
    });
  });
}
