/**
 * The connection check in Chromium on a slow line (throttled through the DevTools protocol): the
 * page shows the download's progress, gives advice when the line is slow, and lets the student of a
 * recorded exam start anyway with a warning, while a live-proctored exam insists on the speed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchChromium, SCREENSHOT_DIR, type TestBrowser } from '../helpers/browser.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { browserDialects, startTestServer, type TestServer } from '../helpers/server.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import { acceptPrivacy } from './privacy-support.ts';

type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** About 0.33 Mbit/s: the 2 MiB probe would take about 50 s, so the check measures for its 10 s. */
const SLOW_BYTES_PER_SECOND = 40 * 1024;

for (const dialect of browserDialects(import.meta.url)) {
  describe(`candidate exam room in Chromium: a slow connection [${dialect}]`, () => {
    let server: TestServer;
    let chromium: TestBrowser;
    let page: Page;
    let owner: TestUser;

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      server = await startTestServer(dialect);
      owner = await server.user(await server.institute(), 'teacher');
      chromium = await launchChromium();
      page = await chromium.browser.newPage();
    });

    after(async () => {
      await chromium?.close();
      await server?.close();
    });

    /** Creates an open exam that records the screen, and one student of it. Returns the room token and session id. */
    async function examWithStudent(type: string, name: string): Promise<{ token: string; id: number }> {
      const exam = await owner.client.v3('POST', '/exams', {
        name,
        type,
        duration_minutes: 20,
        screen_share: true,
      });
      assert.equal(exam.status, 201, exam.text);
      const student = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: object(object(exam.json, 'body').exam, 'exam').id as number,
        name: 'Katherine Johnson',
        email: `kj-${type}@example.org`,
      });
      assert.equal(student.status, 201, student.text);
      const record = object(object(student.json, 'body').student, 'student');
      return { token: record.token as string, id: record.id as number };
    }

    async function screenshot(name: string): Promise<void> {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({
        path: path.join(SCREENSHOT_DIR, `connection-${dialect}-${name}.png`),
        fullPage: true,
      });
    }

    it('shows the progress of a slow measurement, advice, and lets a recorded exam start with a warning', async () => {
      const { token, id } = await examWithStudent('record_review', 'Orbital mechanics');
      await page.goto(`${server.baseUrl}/room/${token}`);
      await page.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(page);
      await page.getByRole('button', { name: 'Share your screen' }).click();
      await page.getByText('Screen sharing: passed').waitFor();

      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: SLOW_BYTES_PER_SECOND,
        uploadThroughput: -1,
      });
      await page.getByRole('button', { name: 'Measure your connection' }).click();
      // Part of the probe has arrived, and the page says how much.
      await page.waitForFunction(() => {
        const bar = document.getElementById('bandwidth-progress') as HTMLProgressElement | null;
        return bar !== null && bar.value > 0 && bar.value < 100;
      });
      assert.match(
        (await page.locator('#bandwidth-percent').textContent()) ?? '',
        /^\d{1,2}% \(\d+ KB of 2\.0 MB\)$/,
      );
      assert.ok(await page.locator('#bandwidth-box').isVisible());
      await screenshot('measuring');
      await page.getByText(/Connection speed: failed \(0\.\d+ Mbit\/s, slow\)/).waitFor({ timeout: 30_000 });
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: -1,
      });

      // Cut short at the time limit: it says what was measured, not a bar stuck midway.
      assert.match(
        (await page.locator('#bandwidth-percent').textContent()) ?? '',
        /^Done: \d+ KB in \d+\.\d s$/,
      );
      const advice = page.locator('#bandwidth-advice');
      assert.ok(await advice.isVisible(), 'advice for a slow line');
      assert.ok(
        await advice.getByText('Use a network cable, or move closer to your Wi-Fi router.').isVisible(),
      );
      assert.match(
        (await page.locator('#bandwidth-way-forward').textContent()) ?? '',
        /^You can also start with this connection/,
      );
      const start = page.getByRole('button', { name: 'Start the exam' });
      assert.ok(await start.isEnabled(), 'a slow line does not stop a recorded exam');
      assert.match(
        (await page.locator('#start-help').textContent()) ?? '',
        /You can start, but your connection is slow/,
      );
      const focused = await page.evaluate(() => document.activeElement?.id);
      assert.equal(focused, 'run-bandwidth', 'the focus stays on the check’s button');
      await assertNoSeriousAxeViolations(page, 'setup with a slow connection');
      await screenshot('slow');

      await start.click();
      await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      const record = await owner.client.v3('GET', '/student_sessions/:id', { id });
      const student = object(object(record.json, 'body').student, 'student');
      assert.equal(student.status, 'exam_started');
      assert.equal(student.bandwidth_check, 'failed');
      assert.ok(Number(student.bandwidth_speed) < 1 && Number(student.bandwidth_speed) > 0);
    });

    it('keeps a live-proctored exam closed to a slow connection, saying why', async () => {
      const { token } = await examWithStudent('live_proctoring', 'Live orbital mechanics');
      const checks = await httpRequest({
        url: `${server.baseUrl}/api/room/${token}/checks`,
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          screenshare_check: 'succeeded',
          bandwidth_check: 'failed',
          bandwidth_speed: 0.4,
        }),
      });
      assert.equal(checks.status, 200, checks.text);
      await page.goto(`${server.baseUrl}/room/${token}`);
      await page.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(page);
      assert.ok(await page.getByText('Connection speed: failed (0.4 Mbit/s, slow)').isVisible());
      assert.match(
        (await page.locator('#bandwidth-way-forward').textContent()) ?? '',
        /^This exam is proctored live and needs a faster connection to start\./,
      );
      assert.ok(await page.getByRole('button', { name: 'Start the exam' }).isDisabled());
      assert.match(
        (await page.locator('#start-help').textContent()) ?? '',
        /Connection speed check \(failed\)/,
      );
      await assertNoSeriousAxeViolations(page, 'setup of a live exam with a slow connection');
      await screenshot('live-slow');
      const refused = await httpRequest({ url: `${server.baseUrl}/api/room/${token}/start`, method: 'POST' });
      assert.equal(refused.status, 409, refused.text);
      assert.match(refused.text, /bandwidth_check/);
    });
  });
}
