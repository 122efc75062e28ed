/**
 * The console in other languages, in Chromium: the exam list, the exam editor and the students list
 * in German and in Arabic (right to left), chosen with `?lang=`, and without it from the browser's
 * own languages. Each screen says its language and direction on <html>, has its words from the
 * catalogue (the pseudo-locale shows no plain English), passes axe, and is saved as a screenshot.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { object } from '../helpers/json.ts';
import { assertNoEnglish } from './pseudo.ts';
import { browserDialects } from '../helpers/server.ts';
import {
  assertNoHorizontalScroll,
  checkScreen,
  createExam,
  newPage,
  signIn,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';

/** The words each language shows in the shell and on an exam's tabs. */
const WORDS = {
  de: { exams: 'Prüfungen', signOut: 'Abmelden', students: 'Studierende', settings: 'Einstellungen' },
  ar: { exams: 'الامتحانات', signOut: 'تسجيل الخروج', students: 'الطلاب', settings: 'الإعدادات' },
} as const;

for (const dialect of browserDialects(import.meta.url)) {
  describe(`the console in German and Arabic in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let admin: StaffUser;
    let examId: number;
    let page: Page;

    before(async () => {
      world = await startConsoleWorld(dialect);
      admin = await world.staff('administrator');
      examId = await createExam(admin, 'Organische Chemie');
      const student = await admin.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Lise Meitner',
        email: `lise-${dialect}@example.org`,
      });
      assert.equal(student.status, 201, student.text);
      assert.ok(object(object(student.json, 'body').student, 'student').id);
      page = await newPage(world);
      await signIn(page, world.baseUrl, admin.email);
    });

    after(async () => {
      await world?.close();
    });

    /** Opens `path` of the console in `lang` and waits for its first heading. */
    async function open(path: string, lang: string): Promise<void> {
      await page.goto(`${world.baseUrl}/console${path}?lang=${lang}`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
    }

    async function htmlLanguage(): Promise<{ lang: string; dir: string }> {
      return page.evaluate(() => ({
        lang: document.documentElement.lang,
        dir: document.documentElement.dir,
      }));
    }

    for (const [lang, dir] of [
      ['de', 'ltr'],
      ['ar', 'rtl'],
    ] as const) {
      it(`shows the exam list, the exam editor and the students in ${lang} (${dir})`, async () => {
        const words = WORDS[lang];

        await open('/exams', lang);
        assert.deepEqual(await htmlLanguage(), { lang, dir });
        const navigation = page.getByRole('navigation').first();
        await navigation.getByRole('link', { name: words.exams }).waitFor();
        await page.getByRole('button', { name: words.signOut }).waitFor();
        assert.match(await page.title(), new RegExp(`^${words.exams} · Invigil$`));
        await checkScreen(page, `languages-exams-${lang}-${dialect}`);
        await assertNoHorizontalScroll(page, `exam list in ${lang}`);

        await open(`/exams/${examId}`, lang);
        assert.deepEqual(await htmlLanguage(), { lang, dir });
        const tabs = page.getByRole('navigation').nth(1);
        await tabs.getByRole('link', { name: words.settings }).waitFor();
        await tabs.getByRole('link', { name: words.students }).waitFor();
        await checkScreen(page, `languages-exam-editor-${lang}-${dialect}`);

        await open(`/exams/${examId}/students`, lang);
        assert.deepEqual(await htmlLanguage(), { lang, dir });
        await page.getByText('Lise Meitner').first().waitFor();
        await checkScreen(page, `languages-students-${lang}-${dialect}`);

        // The header reads from the inline start: in Arabic, the brand is at the right.
        const brand = await page.locator('header.top .brand').boundingBox();
        const viewport = page.viewportSize();
        assert.ok(brand !== null && viewport !== null);
        const atRight = brand.x + brand.width > viewport.width / 2;
        assert.equal(atRight, dir === 'rtl', `the brand sits at the ${atRight ? 'right' : 'left'}`);
      });
    }

    it('shows no plain English in the pseudo-locale', async () => {
      // Data stays as it is: the exam's, the student's and the signed-in user's names ("User 2"), the
      // emails and the institute.
      const allow = [
        'Organische Chemie',
        'Lise Meitner',
        `lise-${dialect}@example.org`,
        'Example University',
        admin.email,
        'User',
      ];
      await open('/exams', 'en-XA');
      assert.deepEqual(await htmlLanguage(), { lang: 'en-XA', dir: 'ltr' });
      await assertNoEnglish(page, 'the exam list', allow);
      await open(`/exams/${examId}/students`, 'en-XA');
      await page.getByText('Lise Meitner').first().waitFor();
      await assertNoEnglish(page, 'the students list', allow);
      await checkScreen(page, `languages-students-pseudo-${dialect}`);
    });

    it('keeps the language picked under My account with the user: another browser opens in it', async () => {
      const user = await world.staff('teacher');
      const first = await newPage(world);
      await signIn(first, world.baseUrl, user.email);
      await first.goto(`${world.baseUrl}/console/account`);
      await first.getByLabel('Language of the console').selectOption('nl');
      await first.getByRole('navigation').first().getByRole('link', { name: 'Examens' }).waitFor();
      assert.equal(await first.evaluate(() => document.documentElement.lang), 'nl');
      // The service keeps it: the session says so, and it takes a moment to be written.
      const saved = async () =>
        first.evaluate(async () => {
          const answer = await fetch('/auth/session', { credentials: 'same-origin' });
          return ((await answer.json()) as { user: { language: string | null } }).user.language;
        });
      for (let tries = 0; tries < 50 && (await saved()) !== 'nl'; tries += 1) await first.waitForTimeout(100);
      assert.equal(await saved(), 'nl');
      await first.context().close();

      // A new browser (English, nothing stored) signs in and follows the user's language.
      const context = await world.chromium.newContext({
        viewport: { width: 1280, height: 900 },
        locale: 'en-GB',
      });
      const second = await context.newPage();
      await signIn(second, world.baseUrl, user.email);
      await second.getByRole('navigation').first().getByRole('link', { name: 'Examens' }).waitFor();
      assert.equal(await second.evaluate(() => document.documentElement.lang), 'nl');
      await context.close();
    });

    it('follows the browser’s languages when no language is asked for, and keeps English otherwise', async () => {
      // The same signed-in session, in a browser set to German.
      const context = await world.chromium.newContext({
        viewport: { width: 1280, height: 900 },
        locale: 'de-DE',
        storageState: await page.context().storageState(),
      });
      const german = await context.newPage();
      await german.goto(`${world.baseUrl}/console/exams`);
      await german.getByRole('navigation').first().getByRole('link', { name: WORDS.de.exams }).waitFor();
      assert.equal(await german.evaluate(() => document.documentElement.lang), 'de');
      await context.close();

      await page.goto(`${world.baseUrl}/console/exams`);
      await page.getByRole('navigation').first().getByRole('link', { name: 'Exams' }).waitFor();
      assert.deepEqual(await htmlLanguage(), { lang: 'en', dir: 'ltr' });
    });
  });
}
