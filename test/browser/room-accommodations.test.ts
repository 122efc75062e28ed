/**
 * Accommodations in Chromium on the service's test clock (docs/accommodations.md): a student with
 * 50% extra time and one 10-minute rest break on a 30-minute exam with a phone camera runs 55
 * minutes of service-clock time. The exam room's countdown and the phone's show the one clock's
 * time throughout (both counting from the server's figure of their latest view); the break screen
 * hides the questions and both countdowns stand still; the break ends by itself at its allowance,
 * leaving its two incidents; the worker's sweep finishes the session by time_up at the right second;
 * and the console's review screen shows the break. Screenshots of the break screen in English and
 * Arabic (and the phone during the break) land in test-output/screenshots/accommodations-*.png.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromiumBrowser, SCREENSHOT_DIR } from '../helpers/browser.ts';
import { object } from '../helpers/json.ts';
import { browserDialects, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { freePort } from '../mail/support.ts';
import { signIn, TEST_PASSWORD } from './console/support.ts';
import { DESKTOP_VIEWPORT, PHONE_USER_AGENT, PHONE_VIEWPORT } from './mobile-support.ts';
import { acceptPrivacy } from './privacy-support.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const MINUTE = 60_000;
/** How far a page's countdown may be from the server's figure: the pages run on by real time. */
const TOLERANCE_SECONDS = 3;
/** The room re-reads its view every 5 s in a phone exam, the phone every 5 s (its heartbeat). */
const FOLLOW_MS = 20_000;
const QUESTION = 'Question 1: explain the median.';

/** A countdown's text as whole seconds ("44:59" → 2699, "1:02:03" → 3723). */
function secondsOf(text: string | null): number {
  return (text ?? '')
    .trim()
    .split(':')
    .map(Number)
    .reduce((sum, part) => sum * 60 + part, 0);
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`accommodations in Chromium: extra time and a rest break, room and phone [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let baseUrl: string;
    let chromium: Browser;
    let room: Page;
    let phone: Page;
    let owner: TestUser;
    let ownerEmail: string;
    let sessionId: number;
    let token: string;

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      // PUBLIC_URL on the server's own address: the phone's pairing link and the console's sign-in.
      server = await startTestServer(dialect, { clock, port, env: { PUBLIC_URL: baseUrl } });
      ownerEmail = 'breaks-teacher@example.org';
      owner = await server.user(await server.institute(), 'teacher', ownerEmail);
      await server.app.services.staffAuth.setPassword(owner.id, TEST_PASSWORD);
      const exam = await owner.client.v3('POST', '/exams', {
        name: 'Statistics with breaks',
        type: 'record_review',
        duration_minutes: 30,
        mobile_cam: true,
      });
      assert.equal(exam.status, 201, exam.text);
      const examId = object(object(exam.json, 'body').exam, 'exam').id as number;
      const document = await owner.client.v3('POST', '/exams/:exam_id/documents', {
        exam_id: examId,
        exam_content: QUESTION,
      });
      assert.equal(document.status, 201, document.text);
      const student = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Grace Hopper',
        email: 'grace-breaks@example.org',
        skip_requirements: true,
        accommodations: JSON.stringify({ extra_time_percent: 50, breaks: { count: 1, minutes: 10 } }),
      });
      assert.equal(student.status, 201, student.text);
      const record = object(object(student.json, 'body').student, 'student');
      sessionId = record.id as number;
      token = record.token as string;
      chromium = await launchChromiumBrowser();
      room = await (await chromium.newContext({ viewport: DESKTOP_VIEWPORT })).newPage();
      const phoneContext = await chromium.newContext({
        viewport: PHONE_VIEWPORT,
        screen: PHONE_VIEWPORT,
        deviceScaleFactor: 2,
        isMobile: true,
        hasTouch: true,
        userAgent: PHONE_USER_AGENT,
      });
      phone = await phoneContext.newPage();
    });

    after(async () => {
      await chromium?.close();
      await server?.close();
    });

    async function screenshot(page: Page, name: string): Promise<void> {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({
        path: path.join(SCREENSHOT_DIR, `accommodations-${dialect}-${name}.png`),
        fullPage: true,
      });
    }

    async function countdown(page: Page): Promise<number> {
      return secondsOf(await page.locator('#time-left').textContent());
    }

    /**
     * Waits until both the room's and the phone's countdowns show `seconds` (within the tolerance:
     * each runs on by real time from its latest view), then checks they agree with each other.
     */
    async function bothShow(seconds: number, what: string): Promise<void> {
      for (const [name, page] of [
        ['room', room],
        ['phone', phone],
      ] as const) {
        const deadline = Date.now() + FOLLOW_MS;
        let shown = await countdown(page);
        while (Math.abs(shown - seconds) > TOLERANCE_SECONDS && Date.now() < deadline) {
          await page.waitForTimeout(250);
          shown = await countdown(page);
        }
        assert.ok(
          Math.abs(shown - seconds) <= TOLERANCE_SECONDS,
          `${what}: the ${name} shows ${shown}, not ${seconds}`,
        );
      }
      const difference = Math.abs((await countdown(room)) - (await countdown(phone)));
      assert.ok(difference <= TOLERANCE_SECONDS, `${what}: room and phone differ by ${difference} s`);
    }

    it('runs 55 minutes: one clock on both pages, a break that stops it, time_up at the right second', async () => {
      await room.goto(`${baseUrl}/room/${token}`);
      // The phone opens the pairing link the room's QR code holds.
      const view = (await (await fetch(`${baseUrl}/api/room/${token}`)).json()) as Json;
      await phone.goto(object(view.mobile, 'mobile').pairing_url as string);
      await acceptPrivacy(room);
      await room.getByRole('button', { name: 'Start the exam' }).click();
      await room.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      const startedAt = clock.current;
      await phone.locator('#stage-exam').waitFor({ timeout: FOLLOW_MS });
      // The one clock: 30 minutes and 50% more.
      await bothShow(45 * 60, 'at the start');
      await room.locator('#breaks-left', { hasText: '1 break left' }).waitFor();
      await room.getByText(QUESTION).waitFor();

      clock.current = startedAt + 20 * MINUTE;
      await bothShow(25 * 60, 'twenty minutes in');

      // A rest break: the questions go, both clocks stand still.
      await room.getByRole('button', { name: 'Take a break' }).click();
      await room.getByRole('heading', { name: 'You are on a rest break' }).waitFor();
      assert.equal(await room.getByText(QUESTION).count(), 0, 'the questions are hidden during the break');
      await phone.locator('#phone-break').waitFor({ timeout: FOLLOW_MS });
      assert.ok(
        Math.abs(secondsOf(await room.locator('#break-time-left').textContent()) - 600) <= TOLERANCE_SECONDS,
      );
      clock.current = startedAt + 25 * MINUTE;
      await room.waitForTimeout(6000);
      assert.equal(await countdown(room), 25 * 60, 'the room’s clock stands still during the break');
      assert.equal(await countdown(phone), 25 * 60, 'the phone’s clock stands still during the break');
      await screenshot(room, 'break-en');
      await screenshot(phone, 'phone-break-en');

      // The same break screen in Arabic, right to left.
      await room.goto(`${baseUrl}/room/${token}?lang=ar`);
      await room.locator('#rest-break').waitFor();
      assert.equal(await room.locator('html').getAttribute('dir'), 'rtl');
      await screenshot(room, 'break-ar');
      await room.goto(`${baseUrl}/room/${token}?lang=en`);
      await room.locator('#rest-break').waitFor();

      // Past the allowance: the break ended by itself at ten minutes; the exam shows again.
      clock.current = startedAt + 31 * MINUTE;
      await room.getByText(QUESTION).waitFor({ timeout: FOLLOW_MS });
      await bothShow(24 * 60, 'after the break');
      await phone.locator('#phone-break').waitFor({ state: 'detached', timeout: FOLLOW_MS });
      assert.equal(await room.getByRole('button', { name: 'Take a break' }).isDisabled(), true);

      clock.current = startedAt + 50 * MINUTE;
      await bothShow(5 * 60, 'five minutes before the end');

      // 55 minutes after the start (45 of work, 10 of rest) the worker's sweep finishes it.
      clock.current = startedAt + 55 * MINUTE - 1000;
      assert.equal((await server.app.services.room.finishTimedOut()).finished, 0);
      clock.current = startedAt + 55 * MINUTE;
      assert.equal((await server.app.services.room.finishTimedOut()).finished, 1);
      const answer = await owner.client.v3('GET', '/student_sessions/:id', { id: sessionId });
      const record = object(object(answer.json, 'body').student, 'student');
      assert.equal(record.status, 'exam_finished');
      assert.equal(record.end_reason, 'time_up');
      assert.equal(record.end_time, new Date(startedAt + 55 * MINUTE).toISOString());
      const breaks = (record.incidents as Json[]).filter((incident) =>
        String(incident.type).startsWith('break_'),
      );
      assert.deepEqual(
        breaks.map((incident) => [incident.type, incident.offset_time]),
        [
          ['break_started', 20 * 60],
          ['break_ended', 30 * 60],
        ],
      );
      await room.getByRole('heading', { name: 'Your exam is finished' }).waitFor({ timeout: FOLLOW_MS });

      // The review screen lists the break, so it is not read as an absence.
      const review = await (await chromium.newContext({ viewport: DESKTOP_VIEWPORT })).newPage();
      await signIn(review, baseUrl, ownerEmail);
      await review.goto(`${baseUrl}/console/sessions/${sessionId}/review`);
      await review.getByText('The student started a rest break').first().waitFor({ timeout: FOLLOW_MS });
      await review.getByText('The rest break ended by itself at its allowance').first().waitFor();
      await screenshot(review, 'review');
    });

    it('pauses the recording during a break when the exam does not record breaks, then goes on', async () => {
      const exam = await owner.client.v3('POST', '/exams', {
        name: 'Essay exam',
        type: 'record_review',
        duration_minutes: 30,
        web_cam: true,
        record_during_breaks: false,
      });
      assert.equal(exam.status, 201, exam.text);
      const student = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: object(object(exam.json, 'body').exam, 'exam').id as number,
        name: 'Alan Turing',
        email: 'alan-breaks@example.org',
        skip_requirements: true,
        accommodations: JSON.stringify({ breaks: { count: 1, minutes: 10 } }),
      });
      assert.equal(student.status, 201, student.text);
      const examToken = object(object(student.json, 'body').student, 'student').token as string;
      const page = await (await chromium.newContext({ viewport: DESKTOP_VIEWPORT })).newPage();
      const chunks = async (): Promise<number> => {
        const answer = await fetch(`${baseUrl}/api/room/${examToken}`);
        return object(((await answer.json()) as Json).session, 'session').recording_chunks_count as number;
      };
      const atLeast = async (count: number): Promise<number> => {
        for (let round = 0; round < 100; round += 1) {
          const stored = await chunks();
          if (stored >= count) return stored;
          await page.waitForTimeout(200);
        }
        return assert.fail(`fewer than ${count} chunks arrived`);
      };
      await page.goto(`${baseUrl}/room/${examToken}`);
      await acceptPrivacy(page);
      await page.getByRole('button', { name: 'Start the exam' }).click();
      await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      await page.getByRole('button', { name: 'Start recording' }).click();
      await atLeast(1);
      await page.getByRole('button', { name: 'Take a break' }).click();
      await page.locator('#break-recording', { hasText: 'Recording is paused during the break.' }).waitFor();
      await page.locator('#recording-state', { hasText: 'Recording is paused during the break.' }).waitFor();
      // A chunk cut before the pause may still arrive; then nothing for two chunks' time and more.
      await page.waitForTimeout(2000);
      const paused = await chunks();
      await page.waitForTimeout(9000);
      assert.equal(await chunks(), paused, 'no chunk is recorded during the break');
      await page.getByRole('button', { name: 'End break' }).click();
      await page.locator('#rest-break').waitFor({ state: 'detached' });
      // Recording goes on in the same numbering (the server takes only the next sequence).
      await atLeast(paused + 1);
      await page.close();
    });

    it('records only the sound of a candidate exempt from the webcam, asking for no camera', async () => {
      const exam = await owner.client.v3('POST', '/exams', {
        name: 'Oral exam',
        type: 'record_review',
        duration_minutes: 30,
        web_cam: true,
      });
      assert.equal(exam.status, 201, exam.text);
      const student = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: object(object(exam.json, 'body').exam, 'exam').id as number,
        name: 'Ray Charles',
        email: 'ray@example.org',
        skip_requirements: true,
        accommodations: JSON.stringify({ exemptions: [{ check: 'webcam', reason: 'No usable camera' }] }),
      });
      assert.equal(student.status, 201, student.text);
      const examToken = object(object(student.json, 'body').student, 'student').token as string;
      const page = await (await chromium.newContext({ viewport: DESKTOP_VIEWPORT })).newPage();
      // Notes what the page asks the browser for.
      await page.addInitScript(() => {
        const asked: MediaStreamConstraints[] = [];
        Object.assign(window, { askedMedia: asked });
        const original = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
        navigator.mediaDevices.getUserMedia = (constraints?: MediaStreamConstraints) => {
          asked.push(constraints ?? {});
          return original(constraints);
        };
      });
      await page.goto(`${baseUrl}/room/${examToken}`);
      await acceptPrivacy(page);
      await page.getByRole('button', { name: 'Start the exam' }).click();
      await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      await page.getByRole('button', { name: 'Start recording' }).click();
      const asked = (await page.evaluate(
        () => (window as unknown as { askedMedia: unknown[] }).askedMedia,
      )) as Json[];
      assert.deepEqual(asked.at(-1), { video: false, audio: true });
      // The sound alone is recorded, as the webcam recording.
      for (let round = 0; round < 100; round += 1) {
        const answer = await fetch(`${baseUrl}/api/room/${examToken}`);
        const session = object(((await answer.json()) as Json).session, 'session');
        if ((session.recording_chunks_count as number) >= 1) break;
        await page.waitForTimeout(200);
      }
      const files = await server.app.database.db
        .selectFrom('session_files')
        .innerJoin('files', 'files.id', 'session_files.file_id')
        .innerJoin('student_sessions', 'student_sessions.id', 'session_files.student_session_id')
        .select(['session_files.kind', 'files.content_type'])
        .where('student_sessions.token', '=', examToken)
        .execute();
      assert.ok(files.length >= 1, 'a chunk of the sound arrived');
      assert.ok(
        files.every((file) => file.kind === 'recording'),
        JSON.stringify(files),
      );
      await page.close();
    });
  });
}
