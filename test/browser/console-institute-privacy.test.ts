/**
 * The privacy settings of the console's *Institute settings* in Chromium: the privacy contact, the
 * data protection officer and the appeal period are saved, read back through the signed API and
 * after a reload; a value the service refuses is named next to its field; an appeal period outside
 * 0 to 365 is stopped by the field itself. Axe and a screenshot of the form.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserDialects } from '../helpers/server.ts';
import {
  checkScreen,
  signedInPage,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';

type Json = Record<string, unknown>;

for (const dialect of browserDialects(import.meta.url)) {
  describe(`institute privacy settings in the console [${dialect}]`, () => {
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

    async function stored(): Promise<Json> {
      const answer = await admin.client.v3('GET', '/institutes/:id', { id: world.instituteId });
      assert.equal(answer.status, 200, answer.text);
      return (answer.json as { institute: Json }).institute;
    }

    it('saves the privacy contact, the data protection officer and the appeal period', async () => {
      await page.goto(`${world.baseUrl}/console/admin`);
      await page.getByLabel('Appeal period (days)').waitFor();
      assert.equal(await page.getByLabel('Appeal period (days)').inputValue(), '14');

      // A name longer than the service keeps is refused by it, named under its field; nothing is saved.
      await page.getByLabel('Data protection officer', { exact: true }).evaluate((input) => {
        (input as HTMLInputElement).removeAttribute('maxlength');
      });
      await page.getByLabel('Data protection officer', { exact: true }).fill('x'.repeat(501));
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.locator('#dpo-name-error').waitFor();
      assert.match(await page.locator('#dpo-name-error').innerText(), /too long/);
      assert.equal((await stored()).dpo_name, null);

      // An appeal period outside 0 to 365 is stopped by the field before anything is sent.
      await page.getByLabel('Appeal period (days)').fill('400');
      assert.equal(
        await page
          .getByLabel('Appeal period (days)')
          .evaluate((input) => (input as HTMLInputElement).validity.valid),
        false,
      );

      await page.getByLabel('Privacy contact').fill('privacy@uni.example.org');
      await page.getByLabel('Data protection officer', { exact: true }).fill('Ada Byron');
      await page.getByLabel('Data protection officer’s email').fill('dpo@uni.example.org');
      await page.getByLabel('Appeal period (days)').fill('30');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
      await checkScreen(page, `admin-institute-privacy-${dialect}`);

      const institute = await stored();
      assert.equal(institute.privacy_contact, 'privacy@uni.example.org');
      assert.equal(institute.dpo_name, 'Ada Byron');
      assert.equal(institute.dpo_email, 'dpo@uni.example.org');
      assert.equal(institute.appeal_period_days, 30);

      await page.reload();
      await page.getByLabel('Appeal period (days)').waitFor();
      assert.equal(await page.getByLabel('Appeal period (days)').inputValue(), '30');
      assert.equal(await page.getByLabel('Privacy contact').inputValue(), 'privacy@uni.example.org');

      // Emptied, the contact and the officer are cleared.
      await page.getByLabel('Privacy contact').fill('');
      await page.getByLabel('Data protection officer’s email').fill('');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
      const cleared = await stored();
      assert.equal(cleared.privacy_contact, null);
      assert.equal(cleared.dpo_email, null);
      assert.equal(cleared.dpo_name, 'Ada Byron');
    });
  });
}
