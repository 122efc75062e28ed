/**
 * The console's outbox and exam export in Chromium, on SQLite and PostgreSQL: an exam link the SMTP
 * server refused for good is shown as failed with its text, sent again from the console, and
 * received by the real SMTP test server; an exam with a finished session is exported: the page
 * shows the job's progress, then the download, and the downloaded zip opens with the hand-in,
 * students.csv and manifest.json. A teacher is not offered the outbox and sees the service's
 * refusal at its address; a proctor sees the refusal on an exam's export. Every screen and state
 * gets axe and a screenshot; 390 px too.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { browserDialects } from '../helpers/server.ts';
import { digestZip } from '../helpers/zip-archive.ts';
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

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console outbox and export in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let admin: StaffUser;
    let teacher: StaffUser;
    let adminPage: Page;
    let failedId: number;
    let examId: number;
    let sessionId: number;
    const handedIn = Buffer.from('My answers to question 1 and 2.\n', 'utf8');

    /** Runs every due job (mail delivery, the zip) as a worker would. */
    const runJobs = () => runDueJobs(world.server, dialect, world.server.app.clock);

    before(async () => {
      world = await startConsoleWorld(dialect);
      admin = await world.staff('administrator');
      teacher = await world.staff('teacher');
      adminPage = await signedInPage(world, admin);

      // An exam link the mail server refuses for good (550): the email ends failed.
      const exam = await teacher.client.v3('POST', '/exams', {
        name: 'Biology midterm',
        type: 'record_review',
        duration_minutes: 60,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = (exam.json as { exam: { id: number } }).exam.id;
      const student = await teacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Ada Student',
        email: 'ada.student@example.org',
      });
      assert.equal(student.status, 201, student.text);
      sessionId = (student.json as { student: { id: number } }).student.id;
      const sent = await teacher.client.v3('POST', '/exams/:id/send_emails', { id: examId });
      assert.equal(sent.status, 200, sent.text);
      world.smtp.mode = 'reject';
      await runJobs();
      world.smtp.mode = 'accept';
      const row = await world.server.app.database.db
        .selectFrom('outbox')
        .select(['id', 'status'])
        .where('student_session_id', '=', sessionId)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'failed');
      failedId = row.id;

      // The student hands in a file and the session is ended: a finished session to export.
      const file = await world.server.app.services.files.keepStream(Readable.from([handedIn]), {
        originalName: 'answers.txt',
        contentType: 'text/plain',
        instituteId: world.instituteId,
      });
      await world.server.app.database.db
        .insertInto('session_files')
        .values({
          student_session_id: sessionId,
          kind: 'upload',
          file_id: file.id,
          sequence: 1,
          created_at: Date.now(),
        })
        .execute();
      const ended = await teacher.client.v3('POST', '/student_sessions/:id/end_exam', { id: sessionId });
      assert.equal(ended.status, 200, ended.text);
    });

    after(async () => {
      await world?.close();
    });

    it('shows a failed email with its text and sends it again through the SMTP server', async () => {
      const page = adminPage;
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Outbox' }).click();
      await page.getByRole('heading', { name: 'Outbox', level: 1 }).waitFor();
      await page.getByRole('cell', { name: 'ada.student@example.org', exact: true }).first().waitFor();
      await checkScreen(page, `outbox-${dialect}`);

      await page
        .getByRole('navigation', { name: 'Emails by status' })
        .getByRole('link', { name: 'Failed' })
        .click();
      await page.waitForURL(/status=failed/);
      // Only the refused exam link: the end notice of the same student is on its way, not failed.
      await page.getByRole('row').filter({ hasText: 'Your exam has ended' }).waitFor({ state: 'detached' });
      const row = page.getByRole('row').filter({ hasText: 'ada.student@example.org' });
      await row.waitFor();
      assert.match(await row.innerText(), /Failed[\s\S]*No such mailbox/);
      await checkScreen(page, `outbox-failed-${dialect}`);
      // Nothing sent is listed as failed.
      await page
        .getByRole('navigation', { name: 'Emails by status' })
        .getByRole('link', { name: 'Sent' })
        .click();
      await page.getByText('No emails match').waitFor();
      await page
        .getByRole('navigation', { name: 'Emails by status' })
        .getByRole('link', { name: 'Failed' })
        .click();

      await page.getByRole('link', { name: /Biology midterm/ }).click();
      await page.waitForURL(new RegExp(`/console/outbox/${failedId}$`));
      await page.getByRole('heading', { level: 1, name: /Biology midterm/ }).waitFor();
      const text = await page.locator('pre.mail-text').innerText();
      assert.match(text, /Ada Student/);
      assert.match(text, /\/room\//);
      assert.match(await page.locator('dl.facts').innerText(), /Failed[\s\S]*No such mailbox/);
      await checkScreen(page, `outbox-message-failed-${dialect}`);

      await page.getByRole('button', { name: 'Send again' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await checkScreen(page, `outbox-message-confirm-${dialect}`);
      await dialog.getByRole('button', { name: 'Send again' }).click();
      await page.getByRole('status').filter({ hasText: 'Queued for delivery again' }).waitFor();
      assert.match(await page.locator('dl.facts').innerText(), /Waiting to be sent/);
      await checkScreen(page, `outbox-message-queued-${dialect}`);

      const before = world.smtp.messages.length;
      await runJobs();
      const delivered = world.smtp.messages
        .slice(before)
        .find((mail) => mail.envelopeTo.includes('ada.student@example.org'));
      assert.ok(delivered !== undefined, 'the SMTP server received the email');
      assert.match(delivered.subject, /Biology midterm/);

      await page.reload();
      await page.locator('dl.facts .badge').getByText('Sent', { exact: true }).waitFor();
      assert.equal(
        await page.getByRole('button', { name: 'Send again' }).count(),
        0,
        'a sent email is not offered again',
      );
      await checkScreen(page, `outbox-message-sent-${dialect}`);
    });

    it('exports an exam with a finished session: progress, then a zip that opens', async () => {
      const page = await signedInPage(world, teacher);
      await page.goto(`${world.baseUrl}/console/exams/${examId}/export`);
      await page.getByRole('heading', { level: 1, name: /Biology midterm/ }).waitFor();
      await page.getByText('No archive has been prepared for this exam yet.').waitFor();
      await checkScreen(page, `export-never-run-${dialect}`);

      await page.getByRole('button', { name: 'Prepare the archive' }).click();
      const progress = page
        .getByRole('status')
        .filter({ hasText: 'Waiting for a worker to build the archive' });
      await progress.waitFor();
      await checkScreen(page, `export-queued-${dialect}`);

      await runJobs();
      // The page looks again by itself and offers the download.
      await page.getByText('The archive is ready.').waitFor({ timeout: 15_000 });
      await checkScreen(page, `export-ready-${dialect}`);

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download the archive (zip)' }).click(),
      ]);
      assert.equal(download.suggestedFilename(), `exam-${examId}-documents.zip`);
      const file = await download.path();
      const entries = await digestZip(file);
      const upload = entries.get(`${sessionId}-ada.student@example.org/answers.txt`);
      assert.ok(upload !== undefined, [...entries.keys()].join(', '));
      assert.equal(upload.sha256, crypto.createHash('sha256').update(handedIn).digest('hex'));
      assert.match(entries.get('students.csv')?.text ?? '', /Ada Student[\s\S]*exam_finished/);
      const manifest = JSON.parse(entries.get('manifest.json')?.text ?? '{}') as { exam_id?: number };
      assert.equal(manifest.exam_id, examId);
      await page.context().close();
    });

    it('is readable at 390 px wide', async () => {
      const phone = await newPage(world, { width: 390, height: 844 });
      await signIn(phone, world.baseUrl, admin.email);
      for (const [path, name] of [
        ['/outbox', 'outbox'],
        [`/outbox/${failedId}`, 'outbox-message'],
        [`/exams/${examId}/export`, 'export'],
      ] as const) {
        await phone.goto(`${world.baseUrl}/console${path}`);
        await phone.getByRole('heading', { level: 1 }).waitFor();
        await phone.waitForLoadState('networkidle');
        await assertNoHorizontalScroll(phone, `${path} at 390 px`);
        await checkScreen(phone, `${name}-390px-${dialect}`);
      }
      await phone.context().close();
    });

    it('does not offer the outbox to a teacher, and shows the service’s refusal there and on a proctor’s export', async () => {
      const page = await signedInPage(world, teacher);
      const navigation = page.getByRole('navigation', { name: 'Console' });
      await navigation.getByRole('link', { name: 'Exams' }).waitFor();
      assert.equal(await navigation.getByRole('link', { name: 'Outbox' }).count(), 0);
      await page.goto(`${world.baseUrl}/console/outbox`);
      await page.getByRole('alert').waitFor();
      assert.match(await page.getByRole('alert').innerText(), /not allowed to do this/);
      assert.equal(await page.locator('table').count(), 0, 'no email list');
      await checkScreen(page, `outbox-refused-${dialect}`);
      await page.goto(`${world.baseUrl}/console/outbox/${failedId}`);
      await page.getByRole('alert').waitFor();
      assert.equal(await page.locator('pre.mail-text').count(), 0, 'no email text');
      await page.context().close();

      const proctor = await world.staff('proctor');
      const proctorPage = await signedInPage(world, proctor);
      await proctorPage.goto(`${world.baseUrl}/console/exams/${examId}/export`);
      await proctorPage.getByRole('alert').waitFor();
      assert.match(await proctorPage.getByRole('alert').innerText(), /Only those who manage this exam/);
      assert.equal(await proctorPage.getByRole('button', { name: /Prepare|Download/ }).count(), 0);
      await checkScreen(proctorPage, `export-refused-${dialect}`);
      await proctorPage.context().close();
    });
  });
}
