/**
 * The candidate room in Chromium when things go wrong: the page is reloaded during the exam (the
 * recording resumes where the server says it stopped, and the reload is an incident), and the time
 * runs out by the server's clock (the session finishes itself with end_reason time_up).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchChromium, SCREENSHOT_DIR, type TestBrowser } from '../helpers/browser.ts';
import { fetchAddress } from '../helpers/files.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { browserDialects, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import { acceptPrivacy } from './privacy-support.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const EBML_MAGIC = Buffer.from([0x1a, 0x45, 0xdf, 0xa3]);
const MINUTE = 60_000;

for (const dialect of browserDialects(import.meta.url)) {
  describe(`candidate exam room in Chromium: reload and time up [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let chromium: TestBrowser;
    let page: Page;
    let owner: TestUser;
    let sessionId: number;
    let token: string;

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      server = await startTestServer(dialect, { clock });
      owner = await server.user(await server.institute(), 'teacher');
      const exam = await owner.client.v3('POST', '/exams', {
        name: 'Statistics resit',
        type: 'live_proctoring',
        duration_minutes: 30,
        web_cam: true,
      });
      assert.equal(exam.status, 201, exam.text);
      const student = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: object(object(exam.json, 'body').exam, 'exam').id as number,
        name: 'Grace Hopper',
        email: 'grace@example.org',
        skip_requirements: true,
      });
      assert.equal(student.status, 201, student.text);
      const record = object(object(student.json, 'body').student, 'student');
      sessionId = record.id as number;
      token = record.token as string;
      chromium = await launchChromium();
      page = await chromium.browser.newPage();
    });

    after(async () => {
      await chromium?.close();
      await server?.close();
    });

    async function roomView(): Promise<Json> {
      const answer = await httpRequest({ url: `${server.baseUrl}/api/room/${token}` });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').session, 'session');
    }

    /** Waits until the server holds at least `count` webcam chunks. */
    async function chunksStored(count: number): Promise<number> {
      for (let round = 0; round < 100; round += 1) {
        const stored = (await roomView()).recording_chunks_count as number;
        if (stored >= count) return stored;
        await page.waitForTimeout(200);
      }
      assert.fail(`fewer than ${count} recording chunks arrived`);
    }

    async function screenshot(name: string): Promise<void> {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({
        path: path.join(SCREENSHOT_DIR, `recovery-${dialect}-${name}.png`),
        fullPage: true,
      });
    }

    async function v3Status(): Promise<string> {
      const answer = await owner.client.v3('GET', '/student_sessions/:id', { id: sessionId });
      return object(object(answer.json, 'body').student, 'student').status as string;
    }

    it('steps back to exam_not_started when the page is closed during setup, and in again on return', async () => {
      const first = await chromium.browser.newPage();
      await first.goto(`${server.baseUrl}/room/${token}`);
      await first.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(first);
      assert.equal(await v3Status(), 'in_setup');
      await first.close({ runBeforeUnload: true });
      for (let round = 0; round < 50 && (await v3Status()) !== 'exam_not_started'; round += 1) {
        await page.waitForTimeout(100);
      }
      assert.equal(await v3Status(), 'exam_not_started', 'the leave beacon arrived');
    });

    it('lets a student who skips the requirements start at once, then asks to begin recording', async () => {
      await page.goto(`${server.baseUrl}/room/${token}`);
      await page.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(page);
      assert.equal(await v3Status(), 'in_setup', 'entered again');
      const start = page.getByRole('button', { name: 'Start the exam' });
      assert.ok(await start.isEnabled(), 'nothing to check first');
      await start.click();
      await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      await page.getByRole('button', { name: 'Start recording' }).click();
      await page.locator('#recording-state', { hasText: 'Recording your camera' }).waitFor();
      // The button hides itself once recording runs; the focus goes to the line that says so.
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'recording-state');
      await chunksStored(1);
    });

    it('resumes the recording after a reload, numbered on from what the server holds', async () => {
      await page.reload();
      await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      const before = (await roomView()).recording_chunks_count as number;
      // The camera was allowed before: it records again without a click.
      await page.locator('#recording-state', { hasText: 'Recording your camera' }).waitFor();
      await screenshot('reloaded');
      await chunksStored(before + 1);

      const files = await owner.client.v3('GET', '/student_sessions/:id/files', {
        id: sessionId,
        kind: 'recording',
      });
      assert.equal(files.status, 200, files.text);
      const chunks = object(files.json, 'body').files as Json[];
      assert.deepEqual(
        chunks.map((chunk) => chunk.sequence),
        chunks.map((_chunk, index) => index),
        'one sequence without gaps across the reload',
      );
      const resumed = chunks[before];
      assert.ok(resumed, 'the first chunk after the reload is stored');
      const bytes = (await fetchAddress(server, String(resumed.url))).bytes;
      assert.ok(bytes.subarray(0, 4).equals(EBML_MAGIC), 'the resumed recording starts a new WebM segment');

      const record = await owner.client.v3('GET', '/student_sessions/:id', { id: sessionId });
      const incidents = object(object(record.json, 'body').student, 'student').incidents as Json[];
      assert.deepEqual(
        incidents.map((incident) => incident.comment),
        ['The exam room page was reloaded'],
        'the reload, once; starting without the checks is no incident',
      );
    });

    it('counts down to zero and shows the finished page when the server clock says time is up', async () => {
      const before = await owner.client.v3('GET', '/student_sessions/:id', { id: sessionId });
      const startedAt = Date.parse(String(object(object(before.json, 'body').student, 'student').start_time));
      const deadline = startedAt + 30 * MINUTE;
      clock.current = deadline - 3000;
      await page.reload();
      await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      assert.match((await page.locator('#time-left').textContent()) ?? '', /^00:0[0-3]$/);
      await screenshot('last-seconds');
      clock.current = deadline + 1000;
      // No reload: the page reaches zero by itself and asks the server until it has finished.
      await page.getByRole('heading', { name: 'Your exam is finished' }).waitFor({ timeout: 20_000 });
      assert.ok(await page.getByText('The time for this exam ran out.').isVisible());
      assert.match(
        (await page.locator('#arrival-list').textContent()) ?? '',
        /Camera recording: \d+ parts? received/,
      );
      await assertNoSeriousAxeViolations(page, 'finished by time up');
      await screenshot('time-up');
      const record = await owner.client.v3('GET', '/student_sessions/:id', { id: sessionId });
      const student = object(object(record.json, 'body').student, 'student');
      assert.equal(student.status, 'exam_finished');
      assert.equal(student.end_reason, 'time_up');
      assert.equal(student.end_time, new Date(deadline).toISOString(), 'ended when the time ran out');
      assert.equal(student.recording_ended_at, new Date(deadline).toISOString());
    });
  });
}
