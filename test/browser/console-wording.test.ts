/**
 * The console's Wording screen in Chromium (docs/languages.md, "An institute's own wording"): an
 * administrator picks Dutch, finds a candidate message, sees the standard text, is refused a
 * wording that drops a placeholder (the reason under the field), saves one that keeps it (the room's
 * view then carries it) and goes back to the standard text. axe and a screenshot of each state.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { catalogue } from '../../src/i18n/catalogues.ts';
import { browserDialects } from '../helpers/server.ts';
import {
  checkScreen,
  signedInPage,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';

/** A candidate message with a placeholder, as the catalogue has it now. */
function placeholderKey(): string {
  const key = Object.keys(catalogue('en')).find(
    (name) => name.startsWith('candidate.') && /\{[a-zA-Z]+\}/.test(catalogue('en')[name] ?? ''),
  );
  assert.ok(key, 'a candidate message with a placeholder');
  return key;
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console wording in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let admin: StaffUser;
    let page: Page;

    before(async () => {
      world = await startConsoleWorld(dialect);
      admin = await world.staff('administrator');
      page = await signedInPage(world, admin);
    });

    after(async () => {
      await world?.close();
    });

    it('rewords a candidate message in Dutch, refusing a wording that drops a placeholder', async () => {
      await page.goto(`${world.baseUrl}/console/admin/wording`);
      await page.getByRole('heading', { name: /Administration · Wording/, level: 1 }).waitFor();
      await page
        .getByRole('navigation', { name: 'Administration' })
        .getByRole('link', { name: 'Wording' })
        .waitFor();
      await page.getByLabel('Language').selectOption('nl');
      const key = placeholderKey();
      await page.getByLabel('Search').fill(key);
      const id = `message-${key.replaceAll('.', '-')}`;
      const field = page.locator(`#${id}`);
      await field.waitFor();
      assert.equal(
        await page.locator(`#${id}-standard`).innerText(),
        `Standard text: ${catalogue('nl')[key] ?? ''}`,
      );
      await checkScreen(page, `admin-wording-${dialect}`);

      await field.fill('Er ging iets mis.');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.locator(`#${id}-error`).waitFor();
      assert.match(await page.locator(`#${id}-error`).innerText(), /missing placeholder/);
      assert.equal(await field.getAttribute('aria-invalid'), 'true');
      await checkScreen(page, `admin-wording-refused-${dialect}`);

      const wording = `Helaas: ${catalogue('nl')[key] ?? ''}`;
      await field.fill(wording);
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      const listed = await admin.client.v3('GET', '/institutes/:id/message_overrides', {
        id: world.instituteId,
        locale: 'nl',
      });
      const messages = (listed.json as { messages: { key: string; override: string | null }[] }).messages;
      assert.equal(messages.find((message) => message.key === key)?.override, wording);

      await page.getByRole('button', { name: 'Use the standard text' }).click();
      await page.getByRole('status').filter({ hasText: 'Standard text restored.' }).waitFor();
      assert.equal(await field.inputValue(), '');
    });
  });
}
