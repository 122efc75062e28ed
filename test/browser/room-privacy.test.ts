/**
 * The privacy panel in Chromium (docs/room.md "Privacy panel"), in English and in Arabic (right to
 * left): the room shows it before any check, and no camera, microphone, screen or device list is
 * asked for before the candidate accepts it (navigator.mediaDevices is instrumented by an init
 * script that records every call and whether the panel was accepted by then). The start sends the
 * accepted version with the terms and the server keeps both; a panel changed since it was accepted
 * is shown again. The phone page shows the same panel before its camera is used. Axe on every
 * screen; screenshots in test-output/screenshots/room-privacy-*.png.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { catalogue } from '../../src/i18n/catalogues.ts';
import { textDirection, type PageLocale } from '../../src/i18n/locales.ts';
import { Translator, type MessageValues } from '../../src/i18n/translate.ts';
import { launchChromium, SCREENSHOT_DIR, type TestBrowser } from '../helpers/browser.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { browserDialects, startTestServer, type TestServer } from '../helpers/server.ts';
import type { Scalar } from '../helpers/signing.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';

type TestUser = Awaited<ReturnType<TestServer['user']>>;

const TERMS = 'I work alone and keep my camera on.';
const PHONE_VIEWPORT = { width: 390, height: 844 };

/** One call the page made to navigator.mediaDevices, and whether the panel was accepted by then. */
interface MediaCall {
  readonly name: string;
  readonly accepted: boolean;
}

/** A page's words in `locale`, from the catalogue the page uses. */
function wordsOf(locale: PageLocale): (key: string, values?: MessageValues) => string {
  const translator = new Translator(locale, catalogue(locale));
  return (key, values) => translator.t(key, values);
}

/**
 * Wraps getUserMedia, getDisplayMedia and enumerateDevices before any page script runs, so every
 * call is recorded in window.__mediaCalls with whether #privacy-accept had been clicked by then.
 */
async function instrumentMedia(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const calls: { name: string; accepted: boolean }[] = [];
    const state = { accepted: false };
    Object.assign(window, { __mediaCalls: calls });
    document.addEventListener(
      'click',
      (event) => {
        if (event.target instanceof Element && event.target.closest('#privacy-accept') !== null)
          state.accepted = true;
      },
      true,
    );
    const devices = navigator.mediaDevices as unknown as Record<string, unknown> | undefined;
    if (devices === undefined) return;
    for (const name of ['getUserMedia', 'getDisplayMedia', 'enumerateDevices']) {
      const original = devices[name];
      if (typeof original !== 'function') continue;
      devices[name] = (...args: unknown[]) => {
        calls.push({ name, accepted: state.accepted });
        return (original as (...values: unknown[]) => unknown).apply(navigator.mediaDevices, args);
      };
    }
  });
}

async function mediaCalls(page: Page): Promise<MediaCall[]> {
  return page.evaluate(() => (window as unknown as { __mediaCalls: MediaCall[] }).__mediaCalls);
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`the privacy panel before any check [${dialect}]`, () => {
    let server: TestServer;
    let chromium: TestBrowser;
    let owner: TestUser;
    let instituteId: number;
    let recordedExam: number;
    let plainExam: number;
    let phoneExam: number;
    let sequence = 0;

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      server = await startTestServer(dialect);
      instituteId = await server.institute('Example University');
      owner = await server.user(instituteId, 'teacher');
      await setInstitute({
        privacy_contact: 'privacy@uni.example.org',
        dpo_name: 'Ada Byron',
        dpo_email: 'dpo@uni.example.org',
        appeal_period_days: 14,
        session_retention_period: 30,
      });
      recordedExam = await createExam({
        web_cam: true,
        screen_share: true,
        upload_answers: true,
        automated_flags: true,
        terms: TERMS,
      });
      plainExam = await createExam({ type: 'classroom', terms: TERMS });
      phoneExam = await createExam({ web_cam: true, mobile_cam: true });
      chromium = await launchChromium();
    });

    after(async () => {
      await chromium?.close();
      await server?.close();
    });

    async function setInstitute(values: Record<string, string | number | null>): Promise<void> {
      await server.app.database.db
        .updateTable('institutes')
        .set(values)
        .where('id', '=', instituteId)
        .execute();
    }

    async function createExam(params: Record<string, Scalar>): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams', {
        name: 'Organic chemistry',
        type: 'record_review',
        duration_minutes: 30,
        ...params,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam').id as number;
    }

    async function student(examId: number, language: string): Promise<{ token: string; id: number }> {
      sequence += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Ada Lovelace',
        email: `privacy${sequence}@example.org`,
        language,
      });
      assert.equal(answer.status, 201, answer.text);
      const record = object(object(answer.json, 'body').student, 'student');
      return { token: record.token as string, id: record.id as number };
    }

    async function screenshot(page: Page, name: string): Promise<void> {
      await page.evaluate(() => window.scrollTo(0, 0));
      const file = path.join(SCREENSHOT_DIR, `room-privacy-${dialect}-${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      assert.ok(fs.statSync(file).size > 0);
    }

    async function assertLanguage(page: Page, locale: PageLocale): Promise<void> {
      const root = await page.evaluate(() => ({
        lang: document.documentElement.lang,
        dir: document.documentElement.dir,
      }));
      assert.deepEqual(root, { lang: locale, dir: textDirection(locale) });
    }

    async function assertNoAlert(page: Page): Promise<void> {
      const alert = page.locator('#alert');
      if (await alert.isVisible()) assert.fail(`the page shows an error: ${await alert.textContent()}`);
    }

    for (const locale of ['en', 'ar'] as const) {
      it(`shows the panel first in ${locale} and asks for no device before it is accepted`, async () => {
        const t = wordsOf(locale);
        const { token } = await student(recordedExam, locale);
        const page = await chromium.browser.newPage();
        try {
          await instrumentMedia(page);
          await page.goto(`${server.baseUrl}/room/${token}`);
          await page.getByRole('heading', { name: t('candidate.privacy.heading') }).waitFor();
          await assertLanguage(page, locale);
          await assertNoAlert(page);
          // Generated from the exam's settings: each recorded kind, the detectors on the device.
          assert.deepEqual(
            await page
              .locator('#privacy-recorded li')
              .evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.kind)),
            ['camera', 'microphone', 'screen', 'id_photo', 'face_photo', 'uploads', 'flags', 'events'],
          );
          assert.equal(
            await page.locator('#privacy-recorded li[data-kind="camera"]').textContent(),
            t('candidate.privacy.recorded.camera'),
          );
          assert.equal(await page.locator('#privacy-device li[data-kind="flag_detectors"]').count(), 1);
          assert.match(await page.locator('#privacy-kept li[data-kind="recordings"]').innerText(), /30/);
          assert.match(await page.locator('#privacy-contact').innerText(), /dpo@uni\.example\.org/);
          assert.match(await page.locator('#privacy-contact').innerText(), /privacy@uni\.example\.org/);
          assert.match(await page.locator('#privacy-appeal').innerText(), /14/);
          // Nothing that asks for a device yet: no check, no photo, no practice link, no start.
          for (const selector of ['#checks-heading', '#run-camera', '#take-id_card', '#start-exam'])
            assert.equal(await page.locator(selector).count(), 0, selector);
          // Give the page time to do anything it would do by itself.
          await page.waitForTimeout(1500);
          assert.deepEqual(await mediaCalls(page), []);
          await assertNoSeriousAxeViolations(page, `privacy panel in ${locale}`);
          await screenshot(page, `${locale}-01-panel`);

          await page.getByRole('button', { name: t('candidate.privacy.accept') }).click();
          await page.locator('#checks-heading').waitFor();
          assert.equal(await page.evaluate(() => document.activeElement?.id), 'checks-heading');
          // The panel folds away and stays readable.
          assert.equal(
            await page.locator('#privacy-summary').textContent(),
            t('candidate.privacy.acceptedSummary'),
          );
          assert.deepEqual(await mediaCalls(page), []);
          await page.getByRole('button', { name: t('room.setup.camera.button') }).click();
          await page.locator('li[data-check="webcam_check"].succeeded').waitFor();
          const calls = await mediaCalls(page);
          assert.ok(
            calls.some((call) => call.name === 'getUserMedia'),
            JSON.stringify(calls),
          );
          assert.ok(
            calls.every((call) => call.accepted),
            `a device was asked for before the panel was accepted: ${JSON.stringify(calls)}`,
          );
          await assertNoSeriousAxeViolations(page, `after the panel in ${locale}`);
          await screenshot(page, `${locale}-02-accepted`);

          // A reload in the same tab does not ask for the same panel again.
          await page.reload();
          await page.locator('#checks-heading').waitFor();
          assert.equal(await page.locator('#privacy-accept').count(), 0);
        } finally {
          await page.close();
        }
      });
    }

    it('starts with the terms and the panel accepted together, and asks again for a changed panel', async () => {
      const t = wordsOf('en');
      const { token, id } = await student(plainExam, 'en');
      const page = await chromium.browser.newPage();
      try {
        await page.goto(`${server.baseUrl}/room/${token}`);
        await page.locator('#privacy-accept').click();
        await page.getByRole('checkbox', { name: t('room.setup.terms.accept') }).check();
        // The institute changes what the panel states meanwhile: the start is refused, the panel shown again.
        await setInstitute({ appeal_period_days: 21 });
        await page.getByRole('button', { name: t('room.setup.start.button') }).click();
        await page.locator('#privacy-changed').waitFor();
        assert.equal(await page.locator('#privacy-changed').textContent(), t('candidate.privacy.changed'));
        assert.match(await page.locator('#privacy-appeal').innerText(), /21/);
        assert.equal(await page.locator('#start-exam').count(), 0);
        await assertNoSeriousAxeViolations(page, 'privacy panel changed');
        await screenshot(page, 'en-03-changed');

        await page.locator('#privacy-accept').click();
        await page.getByRole('checkbox', { name: t('room.setup.terms.accept') }).check();
        await page.getByRole('button', { name: t('room.setup.start.button') }).click();
        await page.locator('#stage-exam').waitFor();
        const view = await httpRequest({ url: `${server.baseUrl}/api/room/${token}` });
        const version = object(object(view.json, 'body').privacy, 'privacy').version as string;
        const row = await server.app.database.db
          .selectFrom('student_sessions')
          .select(['terms_sha256', 'terms_accepted_at'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        const termsSha256 = crypto.createHash('sha256').update(TERMS, 'utf8').digest('hex');
        assert.equal(row.terms_sha256, `terms:${termsSha256};privacy:${version}`);
        assert.notEqual(row.terms_accepted_at, null);
      } finally {
        await page.close();
        await setInstitute({ appeal_period_days: 14 });
      }
    });

    for (const locale of ['en', 'ar'] as const) {
      it(`shows the same panel on the phone in ${locale} before its camera is used`, async () => {
        const t = wordsOf(locale);
        const { token } = await student(phoneExam, locale);
        const room = await httpRequest({ url: `${server.baseUrl}/api/room/${token}` });
        const roomPrivacy = object(object(room.json, 'body').privacy, 'privacy');
        const url = object(object(room.json, 'body').mobile, 'mobile').pairing_url as string;
        const phone = await chromium.browser.newPage();
        try {
          await phone.setViewportSize(PHONE_VIEWPORT);
          await instrumentMedia(phone);
          await phone.goto(`${server.baseUrl}/m/${url.slice(url.lastIndexOf('/') + 1)}`);
          await phone.getByRole('heading', { name: t('candidate.privacy.heading') }).waitFor();
          await assertLanguage(phone, locale);
          assert.deepEqual(
            await phone
              .locator('#privacy-recorded li')
              .evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.kind)),
            roomPrivacy.recorded,
          );
          assert.equal(await phone.locator('#camera-front').count(), 0);
          await phone.waitForTimeout(1500);
          assert.deepEqual(await mediaCalls(phone), []);
          await assertNoSeriousAxeViolations(phone, `phone privacy panel in ${locale}`);
          await screenshot(phone, `${locale}-04-phone-panel`);

          await phone.getByRole('button', { name: t('candidate.privacy.accept') }).click();
          await phone.locator('#camera-front').click();
          await phone.locator('#framing-guide:not([hidden])').waitFor();
          const calls = await mediaCalls(phone);
          assert.ok(
            calls.some((call) => call.name === 'getUserMedia'),
            JSON.stringify(calls),
          );
          assert.ok(
            calls.every((call) => call.accepted),
            JSON.stringify(calls),
          );
          await assertNoSeriousAxeViolations(phone, `phone camera after the panel in ${locale}`);
          await screenshot(phone, `${locale}-05-phone-camera`);
        } finally {
          await phone.close();
        }
      });
    }
  });
}
