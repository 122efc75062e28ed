/**
 * The administration's Data protection tab in Chromium (docs/data-protection.md): the record of
 * processing offered as a PDF in the institute's language or another one, read back with poppler;
 * the page in Arabic (right to left); a teacher who opens it is told the service refused. Every
 * screen gets axe and a screenshot, and the page is checked at 390 px.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { pdfPages } from '../helpers/pdf.ts';
import { browserDialects } from '../helpers/server.ts';
import {
  assertNoHorizontalScroll,
  checkScreen,
  newPage,
  signedInPage,
  signIn,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';

/** The text of a PDF without the direction marks pdftotext puts around right-to-left stretches. */
function pdfText(bytes: Uint8Array): string {
  return pdfPages(bytes)
    .join('\n')
    .replace(/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, '')
    .replace(/[ \t]+/g, ' ');
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console record of processing in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let admin: StaffUser;
    let teacher: StaffUser;
    let page: Page;

    before(async () => {
      world = await startConsoleWorld(dialect);
      admin = await world.staff('administrator');
      teacher = await world.staff('teacher');
      await world.server.app.database.db
        .updateTable('institutes')
        .set({ dpo_name: 'Dr. Ines Achterberg', dpo_email: 'dpo@example.edu', session_retention_period: 90 })
        .where('id', '=', world.instituteId)
        .execute();
      page = await signedInPage(world, admin);
    });

    after(async () => {
      await world?.close();
    });

    it('offers the record of processing from the administration tabs, in the institute’s language', async () => {
      await page.goto(`${world.baseUrl}/console/admin`);
      await page.getByRole('heading', { level: 1, name: /Institute settings/ }).waitFor();
      const tabs = page.getByRole('navigation', { name: 'Administration' });
      await tabs.getByRole('link', { name: 'Data protection' }).click();
      await page.getByRole('heading', { level: 1, name: /Administration · Data protection/ }).waitFor();
      await page.getByRole('heading', { level: 2, name: 'Record of processing' }).waitFor();
      assert.equal(
        await tabs.getByRole('link', { name: 'Data protection' }).getAttribute('aria-current'),
        'page',
      );
      await checkScreen(page, `data-protection-${dialect}`);

      const download = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Record of processing (PDF)' }).click();
      const file = await download;
      assert.equal(file.suggestedFilename(), `institute-${world.instituteId}-record-of-processing.pdf`);
      const bytes = fs.readFileSync(await file.path());
      assert.equal(bytes.subarray(0, 5).toString('latin1'), '%PDF-');
      const text = pdfText(bytes);
      for (const expected of [
        'Record of processing activities',
        'Example University',
        'Dr. Ines Achterberg <dpo@example.edu>',
        'Deleted 90 days after the session ends',
        'A mail server is configured',
      ]) {
        assert.ok(text.includes(expected), `the record shows "${expected}":\n${text}`);
      }
    });

    it('writes it in the language the administrator picks (Arabic)', async () => {
      await page.goto(`${world.baseUrl}/console/admin/data-protection`);
      await page.getByLabel('Language of the document').selectOption('ar');
      const download = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Record of processing (PDF)' }).click();
      const text = pdfText(fs.readFileSync(await (await download).path()));
      for (const expected of ['سجل أنشطة المعالجة', 'مسؤول حماية البيانات', 'Dr. Ines Achterberg']) {
        assert.ok(text.includes(expected), `the record shows "${expected}":\n${text}`);
      }
      assert.doesNotMatch(text, /Record of processing activities|\[U\+/);
    });

    it('shows the page in Arabic, right to left', async () => {
      await page.goto(`${world.baseUrl}/console/admin/data-protection?lang=ar`);
      await page.getByRole('heading', { level: 2, name: 'سجل أنشطة المعالجة' }).waitFor();
      const html = await page.evaluate(() => ({
        lang: document.documentElement.lang,
        dir: document.documentElement.dir,
      }));
      assert.deepEqual(html, { lang: 'ar', dir: 'rtl' });
      await page.getByRole('button', { name: 'سجل أنشطة المعالجة (PDF)' }).waitFor();
      await checkScreen(page, `data-protection-ar-${dialect}`);
    });

    it('fits a phone’s width', async () => {
      const narrow = await newPage(world, { width: 390, height: 844 });
      await signIn(narrow, world.baseUrl, admin.email);
      await narrow.goto(`${world.baseUrl}/console/admin/data-protection`);
      await narrow.getByRole('button', { name: 'Record of processing (PDF)' }).waitFor();
      await assertNoHorizontalScroll(narrow, 'data protection at 390 px');
      await checkScreen(narrow, `data-protection-narrow-${dialect}`);
      await narrow.context().close();
    });

    it('tells a teacher the service refused the record', async () => {
      const teacherPage = await signedInPage(world, teacher);
      await teacherPage.goto(`${world.baseUrl}/console/admin/data-protection`);
      await teacherPage.getByRole('button', { name: 'Record of processing (PDF)' }).click();
      const refusal = teacherPage.locator('.error-message[role="alert"]');
      await refusal.waitFor();
      assert.match(await refusal.innerText(), /not allowed/);
      await checkScreen(teacherPage, `data-protection-refused-${dialect}`);
      await teacherPage.context().close();
    });
  });
}
