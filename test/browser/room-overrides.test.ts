/**
 * An institute's own wording reaching its candidates, in Chromium (docs/languages.md, "An
 * institute's own wording"): an administrator rewords the room's setup heading in English and in
 * Dutch and the exam-link email through the signed V3 API; the emails say the institute's words in
 * each student's language, an English and a Dutch candidate open the room from their email and read
 * the institute's heading (the Dutch one switching to English in the menu gets the English wording
 * at once), and the setup names the exam's time zone, not the browser's. On the console's Wording
 * screen a wording with an unknown placeholder or broken ICU is refused with the reason under the
 * field, and nothing is saved. axe and a screenshot of each page.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { catalogue } from '../../src/i18n/catalogues.ts';
import { SCREENSHOT_DIR } from '../helpers/browser.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import { runDueJobs } from '../mail/support.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import {
  checkScreen,
  createExam,
  signedInPage,
  startConsoleWorld,
  v3Call,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';

const EXAM_NAME = 'Organic chemistry';
const EXAM_ZONE = 'Europe/Amsterdam';
/** The candidates' browsers run six hours behind the exam, so a time in the wrong zone shows. */
const BROWSER_ZONE = 'America/New_York';

/** The institute's wording, per locale and key (each keeps the catalogue's placeholders). */
const WORDING = {
  en: {
    'room.setup.heading': 'Get ready with Example University',
    'email.examLink.subject': 'Example University exam link: {exam}',
    'email.examLink.personal': 'This link is yours alone: please keep it to yourself.',
  },
  nl: {
    'room.setup.heading': 'Voorbereiding bij Example University',
    'email.examLink.subject': 'Examenlink van Example University: {exam}',
  },
} as const;

/** A message the refused wordings try to change: its placeholder is `{time}`. */
const START_FROM = 'room.setup.about.startFrom';

for (const dialect of browserDialects(import.meta.url)) {
  describe(`an institute's wording in the room, the emails and the Wording screen [${dialect}]`, () => {
    let world: ConsoleWorld;
    let admin: StaffUser;
    let examId: number;
    const links = new Map<string, string>();

    before(async () => {
      world = await startConsoleWorld(dialect);
      admin = await world.staff('administrator');
    });

    after(async () => {
      await world?.close();
    });

    /** A candidate's page: its own cookies, its browser in BROWSER_ZONE. */
    async function candidatePage(): Promise<Page> {
      const context = await world.chromium.newContext({
        viewport: { width: 1280, height: 900 },
        timezoneId: BROWSER_ZONE,
      });
      return context.newPage();
    }

    async function screenshot(page: Page, name: string): Promise<void> {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({
        path: path.join(SCREENSHOT_DIR, `room-overrides-${dialect}-${name}.png`),
        fullPage: true,
      });
    }

    it('sends each student the institute’s wording of the exam email, in their language', async () => {
      for (const [locale, messages] of Object.entries(WORDING)) {
        for (const [key, message] of Object.entries(messages)) {
          const saved = await v3Call(admin, 'PUT', '/institutes/:id/message_overrides', {
            id: world.instituteId,
            locale,
            key,
            message,
          });
          assert.equal(object(saved.message, 'message').override, message);
        }
      }
      examId = await createExam(admin, EXAM_NAME, {
        timezone: EXAM_ZONE,
        start_time: '2027-01-15T08:00:00Z',
        end_time: '2027-01-15T17:00:00Z',
      });
      for (const [email, language] of [
        ['ada@example.org', undefined],
        ['bram@example.org', 'nl'],
      ] as const) {
        await v3Call(
          admin,
          'POST',
          '/exams/:exam_id/student_sessions',
          { exam_id: examId, name: email.split('@')[0] ?? email, email, ...(language ? { language } : {}) },
          201,
        );
      }
      await v3Call(admin, 'POST', '/exams/:id/send_emails', { id: examId });
      await runDueJobs(world.server, dialect, world.server.app.clock);

      const mail = (to: string) => {
        const found = world.smtp.messages.find((message) => message.to.includes(to));
        assert.ok(found?.text !== undefined && found.html !== undefined, `the email to ${to} arrived`);
        const link = /https?:\/\/\S+\/room\/[0-9a-f]{32}/.exec(found.text);
        assert.ok(link, `the email to ${to} holds the room link`);
        links.set(to, link[0]);
        return { subject: found.subject, text: found.text, html: found.html };
      };
      const english = mail('ada@example.org');
      assert.equal(english.subject, `Example University exam link: ${EXAM_NAME}`);
      assert.ok(english.text.includes(WORDING.en['email.examLink.personal']), english.text);
      assert.ok(english.html.includes(WORDING.en['email.examLink.personal']), english.html);
      assert.ok(!english.text.includes(catalogue('en')['email.examLink.personal'] ?? '?'));
      // Dutch: the institute's Dutch subject, and the catalogue's Dutch where it reworded nothing.
      const dutch = mail('bram@example.org');
      assert.equal(dutch.subject, `Examenlink van Example University: ${EXAM_NAME}`);
      assert.ok(dutch.text.includes(catalogue('nl')['email.examLink.personal'] ?? '?'), dutch.text);
    });

    it('shows an English candidate the institute’s heading and the exam’s times in its zone', async () => {
      const page = await candidatePage();
      const link = links.get('ada@example.org');
      assert.ok(link);
      await page.goto(link);
      await page.getByRole('heading', { name: WORDING.en['room.setup.heading'], level: 2 }).waitFor();
      assert.equal(await page.getByRole('heading', { name: 'Before you start' }).count(), 0);
      // 08:00 UTC is 09:00 in Amsterdam (and 03:00 in the browser's New York): the exam's zone is named.
      const facts = await page.locator('#about-heading + .facts').innerText();
      assert.match(facts, /You can start from Jan 15, 2027, 09:00 AM \S+/);
      assert.match(facts, /The exam closes at Jan 15, 2027, 06:00 PM \S+/);
      assert.ok(facts.includes(`Times are shown in the exam’s time zone (${EXAM_ZONE}).`), facts);
      assert.ok(!facts.includes('03:00'), facts);
      await assertNoSeriousAxeViolations(page, 'room with the institute’s wording');
      await screenshot(page, 'english');
      await page.context().close();
    });

    it('shows a Dutch candidate the Dutch wording, and the English one after a switch in the menu', async () => {
      const page = await candidatePage();
      const link = links.get('bram@example.org');
      assert.ok(link);
      await page.goto(link);
      await page.getByRole('heading', { name: WORDING.nl['room.setup.heading'], level: 2 }).waitFor();
      assert.equal(await page.evaluate(() => document.documentElement.lang), 'nl');
      const facts = await page.locator('#about-heading + .facts').innerText();
      assert.ok(facts.includes(`Tijden staan in de tijdzone van het examen (${EXAM_ZONE}).`), facts);
      await assertNoSeriousAxeViolations(page, 'Dutch room with the institute’s wording');
      await screenshot(page, 'dutch');

      await page.locator('#language-select').selectOption('en');
      await page.getByRole('heading', { name: WORDING.en['room.setup.heading'], level: 2 }).waitFor();
      assert.equal(await page.evaluate(() => document.documentElement.lang), 'en');
      await page.context().close();
    });

    it('refuses a wording with an unknown placeholder or broken ICU on the Wording screen', async () => {
      const page = await signedInPage(world, admin);
      await page.goto(`${world.baseUrl}/console/admin/wording`);
      await page.getByRole('heading', { name: /Administration · Wording/, level: 1 }).waitFor();
      await page.getByLabel('Language').selectOption('en');

      // The wording saved through the API is the one the screen shows.
      await page.getByLabel('Search').fill('room.setup.heading');
      const heading = page.locator('#message-room-setup-heading');
      await heading.waitFor();
      assert.equal(await heading.inputValue(), WORDING.en['room.setup.heading']);

      await page.getByLabel('Search').fill(START_FROM);
      const id = `message-${START_FROM.replaceAll('.', '-')}`;
      const field = page.locator(`#${id}`);
      await field.waitFor();
      const save = page
        .locator('li')
        .filter({ has: field })
        .getByRole('button', { name: 'Save', exact: true });
      const error = page.locator(`#${id}-error`);

      await field.fill('You may begin at {when}.');
      await save.click();
      await error.waitFor();
      assert.equal(
        await error.innerText(),
        'The message has missing placeholder {time}; unknown placeholder {when}.',
      );
      assert.equal(await field.getAttribute('aria-invalid'), 'true');
      assert.match((await field.getAttribute('aria-describedby')) ?? '', new RegExp(`${id}-error`));
      await checkScreen(page, `room-overrides-unknown-placeholder-${dialect}`);

      await field.fill('You can start from {oops');
      await save.click();
      await error.filter({ hasText: /cannot be read/ }).waitFor();
      assert.match(await error.innerText(), /^The message cannot be read: .+\.$/);
      assert.equal(await field.getAttribute('aria-invalid'), 'true');
      await checkScreen(page, `room-overrides-broken-icu-${dialect}`);

      // Nothing was saved: the listing and the room's view still hold the catalogue's text.
      const listed = await v3Call(admin, 'GET', '/institutes/:id/message_overrides', {
        id: world.instituteId,
        locale: 'en',
      });
      const messages = listed.messages as { key: string; override: string | null }[];
      assert.equal(messages.find((message) => message.key === START_FROM)?.override, null);
      const token = (links.get('ada@example.org') ?? '').split('/').pop() ?? '';
      const view = await httpRequest({ url: `${world.baseUrl}/api/room/${token}` });
      assert.deepEqual(object(view.json, 'body').message_overrides, {
        en: { 'room.setup.heading': WORDING.en['room.setup.heading'] },
        nl: { 'room.setup.heading': WORDING.nl['room.setup.heading'] },
      });
      await page.context().close();
    });
  });
}
