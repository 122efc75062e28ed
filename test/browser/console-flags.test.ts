/**
 * Automated flags in the console, in Chromium, on SQLite and PostgreSQL (docs/automated-flags.md):
 * an exam office turns the flags on in the exam form and sets the thresholds in its advanced group
 * (a refused threshold is named under its field); a candidate's room reports flags through the room
 * API while the exam runs; the review queue shows each session's suspicion score and ranks by it;
 * the review screen draws the flags in their own lane, colour and shape with their type, confidence
 * and span, and a reviewer dismisses one (kept, greyed, "dismissed by you") and restores it. Every
 * screen gets axe and a screenshot; 390 px too.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { httpRequest } from '../helpers/http.ts';
import { multipartBody } from '../helpers/multipart.ts';
import { browserDialects } from '../helpers/server.ts';
import { runDueJobs } from '../mail/support.ts';
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

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/recordings');
const CAMERA = Array.from({ length: 5 }, (_, index) =>
  fs.readFileSync(path.join(FIXTURES, `camera-a-${index}.webm`)),
);
/** When the recorded session ends, in seconds after its start (five 4 s chunks). */
const ENDS_AT = 20;

type Json = Record<string, unknown>;

interface FlagReport {
  readonly key: string;
  readonly type: string;
  readonly confidence: number;
  readonly offset_time: number;
  readonly end_offset_time: number | null;
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console automated flags in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let teacher: StaffUser;
    let reviewer: StaffUser;
    let page: Page;
    let examId: number;
    let ada: { id: number; token: string };
    let students = 0;

    async function startedSession(name: string): Promise<{ id: number; token: string }> {
      students += 1;
      const answer = await teacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name,
        email: `flagged${students}@example.org`,
        skip_requirements: true,
      });
      assert.equal(answer.status, 201, answer.text);
      const student = (answer.json as { student: { id: number; token: string } }).student;
      await room(student.token, 'start');
      return { id: student.id, token: student.token };
    }

    async function room(token: string, action: string): Promise<void> {
      const answer = await httpRequest({
        url: `${world.baseUrl}/api/room/${token}/${action}`,
        method: 'POST',
      });
      assert.equal(answer.status, 200, answer.text);
    }

    /** Reports a flag as the candidate's room does. */
    async function flag(token: string, report: FlagReport): Promise<void> {
      const answer = await httpRequest({
        url: `${world.baseUrl}/api/room/${token}/flags`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(report),
      });
      assert.ok(answer.status === 200 || answer.status === 201, answer.text);
    }

    async function incident(sessionId: number, comment: string, offset: number): Promise<void> {
      const answer = await teacher.client.v3('POST', '/student_sessions/:id/incidents', {
        id: sessionId,
        comment,
        offset_time: offset,
      });
      assert.equal(answer.status, 201, answer.text);
    }

    async function recordWebcam(token: string): Promise<void> {
      for (const [sequence, bytes] of CAMERA.entries()) {
        const { body, contentType } = multipartBody({ sequence: String(sequence), source: 'webcam' }, [
          { field: 'file', fileName: 'chunk.webm', contentType: 'video/webm', bytes },
        ]);
        const answer = await httpRequest({
          url: `${world.baseUrl}/api/room/${token}/recordings`,
          method: 'POST',
          headers: { 'content-type': contentType },
          body,
        });
        assert.ok(answer.status === 200 || answer.status === 201, answer.text);
      }
    }

    /** Puts the recorded session on its own clock: a chunk every 4 s, ending at ENDS_AT. */
    async function spreadOverTime(sessionId: number): Promise<void> {
      const db = world.server.app.database.db;
      const row = await db
        .selectFrom('student_sessions')
        .select('start_time')
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow();
      const start = Number(row.start_time);
      for (let sequence = 0; sequence < CAMERA.length; sequence += 1) {
        const at = Math.min(4 * (sequence + 1), 4 * (CAMERA.length - 1) + 0.5) + 0.15;
        await db
          .updateTable('session_files')
          .set({ created_at: start + Math.round(at * 1000) })
          .where('student_session_id', '=', sessionId)
          .where('kind', '=', 'recording')
          .where('sequence', '=', sequence)
          .execute();
      }
      await db
        .updateTable('student_sessions')
        .set({
          recording_started_at: start,
          recording_ended_at: start + ENDS_AT * 1000,
          end_time: start + ENDS_AT * 1000,
        })
        .where('id', '=', sessionId)
        .execute();
    }

    async function incidentsOf(sessionId: number): Promise<Json[]> {
      const answer = await reviewer.client.v3('GET', '/student_sessions/:id', { id: sessionId });
      assert.equal(answer.status, 200, answer.text);
      return (answer.json as { student: { incidents: Json[] } }).student.incidents;
    }

    before(async () => {
      world = await startConsoleWorld(dialect);
      teacher = await world.staff('teacher');
      reviewer = await world.staff('reviewer');
      const exam = await teacher.client.v3('POST', '/exams', {
        name: 'Chemistry final',
        type: 'record_review',
        duration_minutes: 60,
        web_cam: true,
        automated_flags: true,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = (exam.json as { exam: { id: number } }).exam.id;

      // Sessions with flags reported by the room while the exam ran.
      ada = await startedSession('Ada Flagged');
      await recordWebcam(ada.token);
      await flag(ada.token, {
        key: 'ada-1',
        type: 'no_face',
        confidence: 0.9,
        offset_time: 3,
        end_offset_time: null,
      });
      await flag(ada.token, {
        key: 'ada-1',
        type: 'no_face',
        confidence: 0.9,
        offset_time: 3,
        end_offset_time: 9,
      });
      await flag(ada.token, {
        key: 'ada-2',
        type: 'tab_switch',
        confidence: 1,
        offset_time: 12,
        end_offset_time: 14,
      });
      await flag(ada.token, {
        key: 'ada-3',
        type: 'multiple_faces',
        confidence: 0.8,
        offset_time: 15,
        end_offset_time: null,
      });
      await room(ada.token, 'finish');
      await spreadOverTime(ada.id);
      const bob = await startedSession('Bob Glance');
      await flag(bob.token, {
        key: 'bob-1',
        type: 'tab_switch',
        confidence: 0.5,
        offset_time: 4,
        end_offset_time: 5,
      });
      await room(bob.token, 'finish');
      const cleo = await startedSession('Cleo Noted');
      for (const offset of [2, 4, 6, 8, 10]) await incident(cleo.id, `Talking at ${offset}`, offset);
      await room(cleo.token, 'finish');
      await runDueJobs(world.server, dialect, world.server.app.clock);
      page = await signedInPage(world, reviewer);
    });

    after(async () => {
      await world.close();
    });

    it('turns automated flags on in the exam form, thresholds in the advanced group', async () => {
      const office = await signedInPage(world, teacher);
      await office.goto(`${world.baseUrl}/console/exams/new`);
      await office.getByLabel('Exam name (required)').fill('Physics final');
      await office.getByLabel('Time limit in minutes').fill('90');
      await office.getByLabel('Webcam and microphone').check();
      const toggle = office.getByLabel("Flag moments worth a look, on the student's device");
      assert.equal(await toggle.isChecked(), false);
      await office.getByText('no picture or sound leaves it for this').waitFor();
      await toggle.check();
      // The thresholds are folded away until asked for.
      assert.equal(await office.getByLabel('Seconds without a face').isVisible(), false);
      await office.getByText('Advanced: when a flag is raised').click();
      await office.getByLabel('Seconds without a face').fill('8');
      await office.getByLabel('Seconds looking away').fill('2.5');
      await office.getByLabel('Talking is not allowed').check();
      await office.getByLabel('Seconds of speech').fill('4');
      await office.getByLabel('Compare the face with the face photo').uncheck();
      await checkScreen(office, 'flags-exam-form');

      // A refused threshold: named under its field, which takes the focus; nothing is created.
      await office.getByRole('button', { name: 'Create exam' }).click();
      const looking = office.getByLabel('Seconds looking away');
      await office.waitForFunction(
        () => document.getElementById('exam-looking-away-seconds')?.getAttribute('aria-invalid') === 'true',
      );
      await office.getByText('Seconds looking away must be a whole number of seconds.').first().waitFor();
      assert.equal(await looking.evaluate((input) => input === document.activeElement), true);
      await checkScreen(office, 'flags-exam-form-refused');

      await looking.fill('6');
      await office.getByRole('button', { name: 'Create exam' }).click();
      await office.waitForURL(/\/console\/exams\/\d+/);
      const physicsId = Number(/\/console\/exams\/(\d+)/.exec(office.url())?.[1]);
      assert.ok(physicsId > 0);
      const answer = await teacher.client.v3('GET', '/exams/:id', { id: physicsId });
      const exam = (answer.json as { exam: Json & { flag_settings: Json } }).exam;
      assert.equal(exam.automated_flags, true);
      assert.equal(exam.flag_settings.no_face_seconds, 8);
      assert.equal(exam.flag_settings.looking_away_seconds, 6);
      assert.equal(exam.flag_settings.speech_forbidden, true);
      assert.equal(exam.flag_settings.speech_seconds, 4);
      assert.equal(exam.flag_settings.face_match, false);
      // The stored exam shows its thresholds (the defaults filled in) and keeps them on a save.
      await office.getByLabel("Flag moments worth a look, on the student's device").waitFor();
      assert.equal(
        await office.getByLabel("Flag moments worth a look, on the student's device").isChecked(),
        true,
      );
      await office.getByText('Advanced: when a flag is raised').click();
      assert.equal(await office.getByLabel('Seconds without a face').inputValue(), '8');
      assert.equal(
        await office.getByLabel('Seconds with several faces').inputValue(),
        String(exam.flag_settings.multiple_faces_seconds),
      );
      await office.getByLabel('Seconds with several faces').fill('3');
      await office.getByRole('button', { name: 'Save settings' }).click();
      await office.getByText('Saved.').waitFor();
      const saved = await teacher.client.v3('GET', '/exams/:id', { id: physicsId });
      const settings = (saved.json as { exam: { flag_settings: Json } }).exam.flag_settings;
      assert.equal(settings.multiple_faces_seconds, 3);
      assert.equal(settings.no_face_seconds, 8);
      assert.equal(settings.face_match, false);
      await office.context().close();
    });

    it('ranks the review queue by suspicion score, most suspicious first', async () => {
      await page.goto(`${world.baseUrl}/console/exams/${examId}/review`);
      await page.getByRole('link', { name: 'Cleo Noted' }).waitFor();
      const rows = page.locator('table.review-queue tbody tr');
      const names = await rows.locator('td[data-label="Student"] a').allTextContents();
      assert.deepEqual(names, ['Ada Flagged', 'Bob Glance', 'Cleo Noted']);
      const scores = (await rows.locator('td[data-label="Suspicion"]').allTextContents()).map((text) =>
        Number(/\d+/.exec(text)?.[0]),
      );
      // Ada: 10 × 0.9 × 1.1 (6 s) + 8 × 1 × (1 + 2/60) + 15 × 0.8 (no end) = 30; Bob: 8 × 0.5 × (1 + 1/60) = 4.
      assert.deepEqual(scores, [30, 4, 0]);
      await page.getByRole('cell', { name: /· none/ }).waitFor();
      assert.equal(await page.getByLabel('Order').inputValue(), 'suspicion');
      await checkScreen(page, 'flags-queue');

      // Another order, then back: the score column stays.
      await page.getByLabel('Order').selectOption('incidents');
      await page.waitForFunction(
        () =>
          document.querySelector('table.review-queue tbody tr td[data-label="Student"] a')?.textContent ===
          'Cleo Noted',
      );
      await page.getByLabel('Order').selectOption('suspicion');
      await page.waitForFunction(
        () =>
          document.querySelector('table.review-queue tbody tr td[data-label="Student"] a')?.textContent ===
          'Ada Flagged',
      );
    });

    it('shows the flags on the review timeline in their own lane, colour and words', async () => {
      await page.getByRole('link', { name: 'Ada Flagged' }).click();
      await page.waitForURL(`**/console/sessions/${ada.id}/review`);
      await page.waitForFunction(() => document.querySelector('video')?.readyState !== undefined);
      const lane = page.getByRole('list', { name: 'Automatic flags on the timeline' });
      const noFace = lane.getByRole('button', {
        name: 'Automatic flag 00:03 to 00:09: No face in view, confidence 90%',
      });
      await noFace.waitFor();
      await lane
        .getByRole('button', { name: /^Automatic flag 00:12 to 00:14: Tab or window switch/ })
        .waitFor();
      await lane
        .getByRole('button', { name: /^Automatic flag from 00:15: Several faces in view, confidence 80%$/ })
        .waitFor();
      // Flags are not among the ordinary incident markers, and have their own colour.
      const ordinary = page.getByRole('list', { name: 'Incidents on the timeline' });
      assert.equal(await ordinary.getByRole('button', { name: /Automatic flag/ }).count(), 0);
      const colour = await noFace.evaluate((button) => getComputedStyle(button, '::before').backgroundColor);
      assert.equal(colour, 'rgb(106, 44, 145)');
      await page.getByText('Dismissed flag', { exact: true }).waitFor();

      // The table: "Automatic", the type in words, confidence, the span; a click on the time seeks.
      const row = page.locator('tr.flag-row').filter({ hasText: 'No face in view' });
      await row.getByText('Automatic', { exact: true }).waitFor();
      await row.getByText(', confidence 90%').waitFor();
      await row.getByRole('button', { name: /^00:03–00:09\s?: go there$/ }).waitFor();
      await noFace.click();
      await page.waitForFunction(
        () => Math.abs((document.querySelector('video')?.currentTime ?? -1) - 3) < 0.5,
      );
      await checkScreen(page, 'flags-review');
    });

    it('dismisses a flag (kept, greyed, by whom) and restores it', async () => {
      const dismiss = page.getByRole('button', { name: 'Dismiss flag: Several faces in view, from 00:15' });
      await dismiss.click();
      await page.getByText('Flag “Several faces in view” at 00:15 dismissed.').waitFor();
      const row = page.locator('tr.flag-row.dismissed');
      await row.getByText(/^Dismissed by you, /).waitFor();
      await page
        .getByRole('list', { name: 'Automatic flags on the timeline' })
        .getByRole('button', { name: /Several faces in view, confidence 80%, dismissed$/ })
        .waitFor();
      const restore = page.getByRole('button', { name: 'Restore flag: Several faces in view, from 00:15' });
      // The same button, now Restore, keeps the focus for the keyboard.
      assert.equal(await restore.evaluate((button) => button === document.activeElement), true);
      let several = (await incidentsOf(ada.id)).find((item) => item.type === 'multiple_faces');
      assert.equal(several?.dismissed, true);
      assert.equal(several?.dismissed_by, reviewer.id);
      await checkScreen(page, 'flags-dismissed');

      // The queue's score went down with it.
      const queue = await reviewer.client.v3('GET', '/exams/:exam_id/review_queue', { exam_id: examId });
      const entry = (queue.json as { review_queue: Json[] }).review_queue.find((item) => item.id === ada.id);
      assert.ok(entry !== undefined);

      await restore.press('Enter');
      await page.getByText('Flag “Several faces in view” at 00:15 restored.').waitFor();
      await page.getByRole('button', { name: 'Dismiss flag: Several faces in view, from 00:15' }).waitFor();
      assert.equal(await page.locator('tr.flag-row.dismissed').count(), 0);
      several = (await incidentsOf(ada.id)).find((item) => item.type === 'multiple_faces');
      assert.equal(several?.dismissed, false);
      const after = await reviewer.client.v3('GET', '/exams/:exam_id/review_queue', { exam_id: examId });
      const restored = (after.json as { review_queue: Json[] }).review_queue.find(
        (item) => item.id === ada.id,
      );
      assert.ok(Number(restored?.suspicion_score) > Number(entry.suspicion_score));
    });

    it('reads at 390 px without horizontal scrolling', async () => {
      const narrow = await newPage(world, { width: 390, height: 844 });
      await signIn(narrow, world.baseUrl, reviewer.email);
      await narrow.goto(`${world.baseUrl}/console/exams/${examId}/review`);
      await narrow.getByRole('link', { name: 'Ada Flagged' }).waitFor();
      await assertNoHorizontalScroll(narrow, 'review queue with scores at 390 px');
      await checkScreen(narrow, 'flags-queue-narrow');
      await narrow.getByRole('link', { name: 'Ada Flagged' }).click();
      await narrow
        .getByRole('list', { name: 'Automatic flags on the timeline' })
        .getByRole('button')
        .first()
        .waitFor();
      await narrow.getByRole('button', { name: /^Dismiss flag: No face in view/ }).waitFor();
      await assertNoHorizontalScroll(narrow, 'review screen with flags at 390 px');
      await checkScreen(narrow, 'flags-review-narrow');
      await narrow.context().close();

      const form = await newPage(world, { width: 390, height: 844 });
      await signIn(form, world.baseUrl, teacher.email);
      await form.goto(`${world.baseUrl}/console/exams/${examId}`);
      await form.getByText('Advanced: when a flag is raised').click();
      await form.getByLabel('Seconds without a face').waitFor();
      await assertNoHorizontalScroll(form, 'exam form with automated flags at 390 px');
      await checkScreen(form, 'flags-exam-form-narrow');
      await form.context().close();
    });
  });
}
