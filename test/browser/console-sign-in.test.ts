/**
 * The console's front door in Chromium: `/` leads to sign-in, a wrong password says what to do, the
 * right one lands each role on its start page, the exam list searches, filters, sorts and pages,
 * everything is usable at a phone's width, and signing out ends the session for the API too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { httpRequest } from '../helpers/http.ts';
import { browserDialects } from '../helpers/server.ts';
import {
  assertNoHorizontalScroll,
  checkScreen,
  newPage,
  signIn,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console sign-in and exam list in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let admin: StaffUser;

    before(async () => {
      world = await startConsoleWorld(dialect);
      admin = await world.staff('administrator');
      // 30 exams, so the list has two pages; names and statuses to search and filter on.
      for (let i = 1; i <= 30; i += 1) {
        const answer = await admin.client.v3('POST', '/exams', {
          name: i % 3 === 0 ? `Chemistry ${i}` : `History ${i}`,
          type: 'record_review',
          duration_minutes: 60,
          start_time: new Date(Date.UTC(2027, 0, i, 9)).toISOString(),
          end_time: new Date(Date.UTC(2027, 0, i, 17)).toISOString(),
        });
        assert.equal(answer.status, 201, answer.text);
      }
    });

    after(async () => {
      await world?.close();
    });

    it('sends / to the sign-in page and refuses a wrong password with advice', async () => {
      const page = await newPage(world);
      await page.goto(`${world.baseUrl}/`);
      await page.waitForURL(`${world.baseUrl}/console/sign-in`);
      await checkScreen(page, `sign-in-${dialect}`);
      await page.getByLabel('Email').fill(admin.email);
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      assert.match(await alert.innerText(), /do not match an account.*try again/);
      await checkScreen(page, `sign-in-error-${dialect}`);
      await page.context().close();
    });

    it('signs in, lists exams with search, filter, sort and pages, and signs out', async () => {
      const page = await newPage(world);
      await signIn(page, world.baseUrl, admin.email);
      assert.equal(new URL(page.url()).pathname, '/console/exams');
      await page.getByRole('heading', { name: 'Exams', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'Chemistry 30', exact: true }).waitFor();
      await checkScreen(page, `exam-list-${dialect}`);
      assert.match(await page.getByText(/Page 1 of 2/).innerText(), /30 in all/);

      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByText(/Page 2 of 2/).waitFor();

      await page.getByLabel('Search by name').fill('Chemistry');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByText(/10 in all/).waitFor();
      const names = await page.locator('tbody tr td:nth-child(1)').allInnerTexts();
      assert.ok(
        names.every((name) => name.startsWith('Chemistry')),
        names.join(', '),
      );

      await page.getByRole('button', { name: /^Name/ }).click();
      await page.waitForURL(/sort=name/);
      await page.locator('th[aria-sort="descending"]').waitFor();

      await page.getByLabel('Status').selectOption('closed');
      await page.getByText(/No exams match/).waitFor();

      // The session cookie works on the API only while signed in.
      const cookies = await page.context().cookies();
      const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
      const before = await httpRequest({
        url: `${world.baseUrl}/api/v3/exams`,
        headers: { cookie, accept: 'application/vnd.procwise.v3' },
      });
      assert.equal(before.status, 200);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/console\/sign-in\?reason=signed-out/);
      const afterSignOut = await httpRequest({
        url: `${world.baseUrl}/api/v3/exams`,
        headers: { cookie, accept: 'application/vnd.procwise.v3' },
      });
      assert.equal(afterSignOut.status, 403);
      await page.context().close();
    });

    it('is readable at 390 px wide', async () => {
      const page = await newPage(world, { width: 390, height: 844 });
      await signIn(page, world.baseUrl, admin.email);
      await page.getByRole('link', { name: 'Chemistry 30', exact: true }).waitFor();
      await assertNoHorizontalScroll(page, 'exam list at 390 px');
      await checkScreen(page, `exam-list-390px-${dialect}`);
      await page.context().close();
    });

    it('answers the console with a strict CSP and caches hashed assets for a year', async () => {
      const index = await httpRequest({ url: `${world.baseUrl}/console/exams` });
      assert.equal(index.status, 200);
      assert.match(String(index.headers['content-security-policy']), /script-src 'self'/);
      assert.doesNotMatch(String(index.headers['content-security-policy']), /unsafe-inline|unsafe-eval/);
      assert.equal(index.headers['cache-control'], 'no-cache');
      const script = /src="(\/assets\/[^"]+\.js)"/.exec(index.text)?.[1];
      assert.ok(script !== undefined, index.text);
      const asset = await httpRequest({ url: `${world.baseUrl}${script}` });
      assert.equal(asset.status, 200);
      assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
      const missing = await httpRequest({ url: `${world.baseUrl}/console/assets/nothing-here.js` });
      assert.equal(missing.status, 404);
    });
  });
}
