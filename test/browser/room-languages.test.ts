/**
 * The exam room in the candidate's own language, in Chromium: a Dutch and an Arabic candidate (the
 * student's `language`, set through V3) go the whole way (every check, the photos, the terms, the
 * start, the exam with an answer file, the finish), each page in their language and Arabic right to
 * left, with axe on every stage. A candidate who switches language in the menu mid-exam gets the
 * new words at once, without a reload, and the recording goes on. In the pseudo-locale no stage
 * shows a word that skipped the catalogue. Screenshots land in test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { catalogue } from '../../src/i18n/catalogues.ts';
import { PSEUDO_LOCALE, textDirection, type PageLocale } from '../../src/i18n/locales.ts';
import { Translator, type MessageValues } from '../../src/i18n/translate.ts';
import { launchChromium, SCREENSHOT_DIR, type TestBrowser } from '../helpers/browser.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { SAMPLE } from '../helpers/multipart.ts';
import { browserDialects, startTestServer, type TestServer } from '../helpers/server.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import { assertNoEnglish } from './pseudo.ts';
import { acceptPrivacy } from './privacy-support.ts';

type TestUser = Awaited<ReturnType<TestServer['user']>>;

const EXAM_NAME = 'Organic chemistry';
const STUDENT_NAME = 'Ada Lovelace';
/** Named in the privacy panel (data, as the exam's name). */
const INSTITUTE_NAME = 'Example University';
const TERMS = 'I work alone and keep my camera on.';
const INSTRUCTIONS = '<p>Answer all questions.</p>';
const FILE_NAME = 'answers.pdf';

/** A page's words in `locale`, straight from the catalogue the page uses. */
function wordsOf(locale: PageLocale): (key: string, values?: MessageValues) => string {
  const translator = new Translator(locale, catalogue(locale));
  return (key, values) => translator.t(key, values);
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`candidate exam room in the candidate's language [${dialect}]`, () => {
    let server: TestServer;
    let chromium: TestBrowser;
    let owner: TestUser;
    let examId: number;
    let sequence = 0;

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      server = await startTestServer(dialect, { env: { PSEUDO_LOCALE: 'true' } });
      owner = await server.user(await server.institute(INSTITUTE_NAME), 'teacher');
      chromium = await launchChromium();
      const exam = await owner.client.v3('POST', '/exams', {
        name: EXAM_NAME,
        type: 'record_review',
        duration_minutes: 30,
        web_cam: true,
        screen_share: true,
        upload_answers: true,
        allow_calculator: true,
        allowed_calculator_type: 'scientific',
        terms: TERMS,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = object(object(exam.json, 'body').exam, 'exam').id as number;
      const document = await owner.client.v3('POST', '/exams/:exam_id/documents', {
        exam_id: examId,
        exam_content: INSTRUCTIONS,
      });
      assert.equal(document.status, 201, document.text);
    });

    after(async () => {
      await chromium?.close();
      await server?.close();
    });

    /** A new student of the exam (in `language` when given). Returns the room token and the id. */
    async function student(language?: string): Promise<{ token: string; id: number }> {
      sequence += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: STUDENT_NAME,
        email: `ada${sequence}@example.org`,
        ...(language === undefined ? {} : { language }),
      });
      assert.equal(answer.status, 201, answer.text);
      const record = object(object(answer.json, 'body').student, 'student');
      return { token: record.token as string, id: record.id as number };
    }

    /** The server's count of the camera's recording parts of a session. */
    async function cameraParts(token: string): Promise<number> {
      const room = await httpRequest({ url: `${server.baseUrl}/api/room/${token}` });
      return Number(object(object(room.json, 'body').session, 'session').recording_chunks_count);
    }

    async function screenshot(page: Page, name: string): Promise<void> {
      await page.evaluate(() => window.scrollTo(0, 0));
      const file = path.join(SCREENSHOT_DIR, `room-languages-${dialect}-${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      assert.ok(fs.statSync(file).size > 0);
    }

    async function assertNoAlert(page: Page): Promise<void> {
      const alert = page.locator('#alert');
      if (await alert.isVisible()) assert.fail(`the room shows an error: ${await alert.textContent()}`);
    }

    /** The page's language and direction as <html> says them. */
    async function assertLanguage(page: Page, locale: PageLocale): Promise<void> {
      const root = await page.evaluate(() => ({
        lang: document.documentElement.lang,
        dir: document.documentElement.dir,
      }));
      assert.deepEqual(root, { lang: locale, dir: textDirection(locale) });
    }

    /** Runs the checks, takes the photos and ticks the terms, in `locale`'s words. */
    async function setUp(page: Page, t: ReturnType<typeof wordsOf>): Promise<void> {
      const passed = (field: string) => page.locator(`li[data-check="${field}"].succeeded`).waitFor();
      await acceptPrivacy(page);
      await page.getByRole('button', { name: t('room.setup.camera.button') }).click();
      await passed('webcam_check');
      await passed('microphone_check');
      await page.getByRole('button', { name: t('room.setup.screen.button') }).click();
      await passed('screenshare_check');
      await page.getByRole('button', { name: t('room.setup.speakers.button') }).click();
      await page.getByRole('button', { name: t('room.setup.speakers.yes') }).click();
      await passed('speakers_check');
      await page.getByRole('button', { name: t('room.setup.bandwidth.button') }).click();
      await passed('bandwidth_check');
      await page.getByRole('button', { name: t('room.setup.photos.takeIdCard') }).click();
      await page.locator('#id_card-state', { hasText: t('room.setup.photos.saved') }).waitFor();
      await page.getByRole('button', { name: t('room.setup.photos.takeFace') }).click();
      await page.locator('#face_photo-state', { hasText: t('room.setup.photos.saved') }).waitFor();
      await page.getByRole('checkbox', { name: t('room.setup.terms.accept') }).check();
      await page.locator('#start-help', { hasText: t('room.setup.start.ready') }).waitFor();
    }

    for (const locale of ['nl', 'ar'] as const) {
      it(`takes a candidate in ${locale} the whole way in their language`, async () => {
        const t = wordsOf(locale);
        const { token } = await student(locale);
        const page = await chromium.browser.newPage();
        try {
          await page.goto(`${server.baseUrl}/room/${token}`);
          await page.getByRole('heading', { name: t('room.setup.heading') }).waitFor();
          await assertLanguage(page, locale);
          await assertNoAlert(page);
          // The name sits between Unicode isolates in a right-to-left sentence.
          const name = textDirection(locale) === 'rtl' ? `\u2068${STUDENT_NAME}\u2069` : STUDENT_NAME;
          assert.equal(await page.locator('#student-name').textContent(), t('room.page.candidate', { name }));
          assert.equal(await page.title(), t('room.page.title', { exam: EXAM_NAME }));
          assert.ok(await page.getByText(t('room.setup.about.duration', { minutes: 30 })).isVisible());
          assert.ok(
            await page
              .getByText(
                t('room.setup.about.allowedDetail', {
                  aid: 'calculator',
                  detail: textDirection(locale) === 'rtl' ? '\u2068scientific\u2069' : 'scientific',
                }),
              )
              .isVisible(),
          );
          // The menu offers the languages by their own names, the current one chosen.
          const menu = page.getByLabel(t('candidate.language.label'));
          assert.equal(await menu.inputValue(), locale);
          await assertNoSeriousAxeViolations(page, `setup in ${locale}`);
          await screenshot(page, `${locale}-01-setup`);

          await setUp(page, t);
          await assertNoAlert(page);
          await assertNoSeriousAxeViolations(page, `setup done in ${locale}`);
          await screenshot(page, `${locale}-02-checks-done`);

          await page.getByRole('button', { name: t('room.setup.start.button') }).click();
          await page.getByRole('heading', { name: t('room.exam.heading') }).waitFor();
          await page.locator('#recording-state', { hasText: t('room.exam.recording.both') }).waitFor();
          // The countdown reads left to right in either direction: minutes, then seconds.
          assert.match((await page.locator('#time-left').textContent()) ?? '', /^(30:00|29:\d\d)$/);
          assert.equal(await page.locator('#time-left').getAttribute('dir'), 'ltr');
          await page.getByLabel(t('room.exam.answers.file')).setInputFiles({
            name: FILE_NAME,
            mimeType: 'application/pdf',
            buffer: SAMPLE.pdf,
          });
          await page.getByRole('button', { name: t('room.exam.answers.upload') }).click();
          await page.locator('#uploaded-files li').waitFor();
          assert.ok(((await page.locator('#uploaded-files li').textContent()) ?? '').includes(FILE_NAME));
          await assertNoAlert(page);
          await assertNoSeriousAxeViolations(page, `exam in ${locale}`);
          await screenshot(page, `${locale}-03-exam`);

          await page.waitForTimeout(5000);
          await page.getByRole('button', { name: t('room.exam.finish.button') }).click();
          await page.getByRole('dialog', { name: t('room.exam.finish.question') }).waitFor();
          await assertNoSeriousAxeViolations(page, `finish dialog in ${locale}`);
          await screenshot(page, `${locale}-04-finish-dialog`);
          await page.getByRole('button', { name: t('room.exam.finish.yes') }).click();
          await page.getByRole('heading', { name: t('room.finished.heading') }).waitFor({ timeout: 45_000 });
          assert.ok(await page.getByText(t('room.finished.finished')).isVisible());
          assert.ok(
            await page.getByText(t('room.finished.answers', { count: 1 })).isVisible(),
            'the answer file is counted in the candidate’s language',
          );
          assert.equal(await page.locator('#arrival-summary').textContent(), t('room.finished.allArrived'));
          await assertLanguage(page, locale);
          await assertNoAlert(page);
          await assertNoSeriousAxeViolations(page, `finished in ${locale}`);
          await screenshot(page, `${locale}-05-finished`);
        } finally {
          await page.close();
        }
      });
    }

    it('switches language from the menu during the exam without a reload, and the recording goes on', async () => {
      const en = wordsOf('en');
      const de = wordsOf('de');
      const { token, id } = await student();
      const page = await chromium.browser.newPage();
      try {
        await page.goto(`${server.baseUrl}/room/${token}`);
        await page.getByRole('heading', { name: en('room.setup.heading') }).waitFor();
        await assertLanguage(page, 'en');
        await setUp(page, en);
        await page.getByRole('button', { name: en('room.setup.start.button') }).click();
        await page.locator('#recording-state', { hasText: en('room.exam.recording.both') }).waitFor();
        // A mark on the window: a reload would take it away.
        await page.evaluate(() => Object.assign(window, { sameDocument: true }));
        const before = await cameraParts(token);

        await page.getByLabel(en('candidate.language.label')).selectOption('de');
        await page.getByRole('heading', { name: de('room.exam.heading') }).waitFor();
        await assertLanguage(page, 'de');
        assert.equal(await page.evaluate(() => 'sameDocument' in window), true, 'no reload');
        await page.locator('#recording-state', { hasText: de('room.exam.recording.both') }).waitFor();
        assert.equal(await page.getByLabel(de('candidate.language.label')).inputValue(), 'de');
        await screenshot(page, 'switched-de-exam');

        // Recording parts keep arriving after the switch (4-second parts; a loaded machine is slower).
        let after = before;
        for (let waited = 0; waited < 60_000 && after < before + 2; waited += 1000) {
          await page.waitForTimeout(1000);
          after = await cameraParts(token);
        }
        assert.ok(after >= before + 2, `parts keep arriving: ${before} → ${after}`);
        await assertNoAlert(page);
        // The choice is kept for the session: the staff see it, and a reload opens in German.
        const record = await owner.client.v3('GET', '/student_sessions/:id', { id });
        assert.equal(object(object(record.json, 'body').student, 'student').chosen_language, 'de');
        await page.reload();
        await page.getByRole('heading', { name: de('room.exam.heading') }).waitFor();
        await assertLanguage(page, 'de');
      } finally {
        await page.close();
      }
    });

    it('shows no word outside the catalogue with a phone camera either (the pseudo-locale)', async () => {
      const t = wordsOf(PSEUDO_LOCALE);
      const exam = await owner.client.v3('POST', '/exams', {
        name: EXAM_NAME,
        type: 'record_review',
        duration_minutes: 30,
        mobile_cam: true,
      });
      assert.equal(exam.status, 201, exam.text);
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: object(object(exam.json, 'body').exam, 'exam').id as number,
        name: STUDENT_NAME,
        email: 'ada-phone@example.org',
        skip_requirements: true,
      });
      assert.equal(answer.status, 201, answer.text);
      const token = object(object(answer.json, 'body').student, 'student').token as string;
      const page = await chromium.browser.newPage();
      try {
        await page.goto(`${server.baseUrl}/room/${token}?lang=${PSEUDO_LOCALE}`);
        await page.locator('#privacy-accept').waitFor();
        await assertNoEnglish(page, 'privacy panel with a phone', [EXAM_NAME, STUDENT_NAME, INSTITUTE_NAME]);
        await acceptPrivacy(page);
        await page.getByRole('heading', { name: t('room.setup.phone.heading') }).waitFor();
        // The short address and the PIN of the pairing block are data.
        const address = (await page.locator('[data-pairing="address"]').first().textContent()) ?? '';
        const pin = (await page.locator('[data-pairing="pin"]').first().textContent()) ?? '';
        const data = [EXAM_NAME, STUDENT_NAME, INSTITUTE_NAME, address, pin];
        await assertNoEnglish(page, 'setup with a phone', data);
        await screenshot(page, 'pseudo-04-phone-setup');
        await page.getByRole('button', { name: t('room.setup.start.button') }).click();
        await page.getByRole('heading', { name: t('room.exam.heading') }).waitFor();
        await page.locator('#phone-away').waitFor();
        await assertNoEnglish(page, 'exam with the phone away', data);
        await screenshot(page, 'pseudo-05-phone-away');
      } finally {
        await page.close();
      }
    });

    it('shows no word outside the catalogue in any stage (the pseudo-locale)', async () => {
      const t = wordsOf(PSEUDO_LOCALE);
      const { token } = await student();
      const page = await chromium.browser.newPage();
      const data = [
        EXAM_NAME,
        STUDENT_NAME,
        INSTITUTE_NAME,
        TERMS,
        'Answer all questions.',
        FILE_NAME,
        'scientific',
      ];
      try {
        await page.goto(`${server.baseUrl}/room/${token}?lang=${PSEUDO_LOCALE}`);
        await page.getByRole('heading', { name: t('room.setup.heading') }).waitFor();
        await assertLanguage(page, PSEUDO_LOCALE);
        await assertNoEnglish(page, 'setup', data);
        await setUp(page, t);
        await assertNoEnglish(page, 'setup done', data);
        await screenshot(page, 'pseudo-01-setup');
        await page.getByRole('button', { name: t('room.setup.start.button') }).click();
        await page.locator('#recording-state', { hasText: t('room.exam.recording.both') }).waitFor();
        await assertNoEnglish(page, 'exam', data);
        await page.getByLabel(t('room.exam.answers.file')).setInputFiles({
          name: FILE_NAME,
          mimeType: 'application/pdf',
          buffer: SAMPLE.pdf,
        });
        await page.getByRole('button', { name: t('room.exam.answers.upload') }).click();
        await page.locator('#uploaded-files li').waitFor();
        await page.context().setOffline(true);
        await page.locator('#connection').waitFor({ state: 'visible', timeout: 20_000 });
        await assertNoEnglish(page, 'exam, connection lost', data);
        await page.context().setOffline(false);
        await screenshot(page, 'pseudo-02-exam');
        await page.getByRole('button', { name: t('room.exam.finish.button') }).click();
        await page.getByRole('dialog', { name: t('room.exam.finish.question') }).waitFor();
        await assertNoEnglish(page, 'finish dialog', data);
        await page.getByRole('button', { name: t('room.exam.finish.yes') }).click();
        await page.getByRole('heading', { name: t('room.finished.heading') }).waitFor({ timeout: 45_000 });
        await assertNoEnglish(page, 'finished', data);
        await screenshot(page, 'pseudo-03-finished');
      } finally {
        await page.close();
      }
    });
  });
}
