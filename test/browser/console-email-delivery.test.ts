/**
 * The console's students and emails screens where the service has no mail server (SMTP_URL unset,
 * the quick start's default): each exam email shows as held, not sent, on the send confirmation and
 * on the students screen, with a banner saying why and what to do and a Copy link action on each row;
 * sending for an exam without instructions asks first. Also the smaller fixes of the same screens:
 * no-shows (derived from the exam's window), no `/exams/NaN` request when leaving the emails and
 * review screens, the institute's name in the header, and a reviewer's verdict column and way back.
 * Every state is checked by axe and saved as a screenshot.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import type { Scalar } from '../helpers/signing.ts';
import { runDueJobs } from '../mail/support.ts';
import {
  checkScreen,
  createExam as createConsoleExam,
  newPage,
  signedInPage,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
  v3Call,
} from './console/support.ts';

type Json = Record<string, unknown>;

const HOUR = 60 * 60 * 1000;

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console email delivery without a mail server, in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let admin: StaffUser;
    let page: Page;

    before(async () => {
      world = await startConsoleWorld(dialect, { env: { SMTP_URL: '' } });
      admin = await world.staff('administrator');
      page = await signedInPage(world, admin);
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.baseUrl });
    });

    after(async () => {
      await world?.close();
    });

    const v3 = (method: string, route: string, params: Record<string, Scalar>, status = 200) =>
      v3Call(admin, method, route, params, status);
    const createExam = (name: string, settings: Record<string, Scalar> = {}) =>
      createConsoleExam(admin, name, settings);

    async function addStudent(examId: number, name: string): Promise<Json> {
      const email = `${name.split(' ')[0]?.toLowerCase()}@example.org`;
      const body = await v3(
        'POST',
        '/exams/:exam_id/student_sessions',
        { exam_id: examId, name, email },
        201,
      );
      return object(body.student, 'student');
    }

    it('shows held mail as held on the send confirmation and the students screen, with a banner and Copy link', async () => {
      const examId = await createExam('Held chemistry');
      const ada = await addStudent(examId, 'Ada Lovelace');
      await addStudent(examId, 'Bob Babbage');

      await page.goto(`${world.baseUrl}/console/exams/${examId}/students/emails`);
      await page.getByText('2 students have not been emailed yet.').waitFor();
      // No instructions: the page and the confirmation both say so before anything is sent.
      await page.getByText('This exam has no instructions yet').waitFor();
      await page.getByRole('button', { name: 'Send 2 exam emails' }).click();
      const dialog = page.getByRole('dialog', { name: 'Send 2 exam emails?' });
      await dialog.getByText('This exam has no instructions.').waitFor();
      await checkScreen(page, `emails-confirm-no-instructions-${dialect}`);
      await dialog.getByRole('button', { name: 'Send without instructions' }).click();

      await page.getByText('2 exam emails were written to the outbox.').waitFor();
      assert.equal(await page.getByText(/on the way/).count(), 0, 'nothing claims the mail is on its way');
      // The service has no mail server: the banner says so at once, before the worker has held them.
      const banner = page.getByRole('alert').filter({ hasText: 'held, not sent' });
      await banner.getByRole('heading', { name: '2 exam emails are held, not sent' }).waitFor();
      assert.match(await banner.innerText(), /SMTP_URL is not set/);
      assert.match(await banner.innerText(), /copy each student's room link/);

      await runDueJobs(world.server, dialect, world.server.app.clock);
      const sent = page.getByRole('list', { name: 'Delivery of the emails just sent' });
      await sent.getByText('Email held').nth(1).waitFor();
      assert.equal(await sent.getByText('Email held').count(), 2);
      await checkScreen(page, `emails-sent-held-${dialect}`);

      await page.getByRole('link', { name: 'Go to the students' }).click();
      await page.getByRole('heading', { level: 2, name: '2 exam emails are held, not sent' }).waitFor();
      const row = page.getByRole('row', { name: /Ada Lovelace/ });
      await row.getByText('Email held').waitFor();
      assert.equal(await page.getByRole('cell', { name: 'Email sent', exact: true }).count(), 0);
      await row.getByRole('button', { name: 'Copy link of Ada Lovelace' }).click();
      await page.getByText('The room link of Ada Lovelace is copied.').waitFor();
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      assert.equal(copied, `${world.baseUrl}/room/${String(ada.token)}`);
      await checkScreen(page, `students-held-${dialect}`);

      // The contract's fields are untouched: the V3 record still says the email was sent.
      const listed = await v3('GET', '/exams/:exam_id/student_sessions', { exam_id: examId });
      assert.ok(
        (listed.students as Json[]).every((s) => s.status === 'email_sent' && s.is_email_sent === true),
      );
    });

    it('asks nothing about instructions when the exam has them', async () => {
      const examId = await createExam('Instructed physics');
      await v3(
        'POST',
        '/exams/:exam_id/documents',
        { exam_id: examId, exam_content: '<p>Bring a pen.</p>' },
        201,
      );
      await addStudent(examId, 'Cleo Curie');
      await page.goto(`${world.baseUrl}/console/exams/${examId}/students/emails`);
      await page.getByText('1 student has not been emailed yet.').waitFor();
      await page.getByRole('button', { name: 'Send 1 exam email' }).click();
      const dialog = page.getByRole('dialog', { name: 'Send 1 exam email?' });
      await dialog.getByRole('button', { name: 'Send now' }).waitFor();
      assert.equal(await page.getByText(/has no instructions/).count(), 0);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
    });

    it('shows sessions that never started before the window closed as no-shows, with their own filter', async () => {
      const now = Date.now();
      const examId = await createExam('Closed biology', {
        start_time: new Date(now - 3 * HOUR).toISOString(),
        end_time: new Date(now - HOUR).toISOString(),
      });
      await addStudent(examId, 'Dan Darwin');
      const eve = await addStudent(examId, 'Eve Euler');
      await v3('POST', '/student_sessions/:id/end_exam', { id: Number(eve.id) });

      await page.goto(`${world.baseUrl}/console/exams/${examId}/students`);
      await page
        .getByRole('row', { name: /Dan Darwin/ })
        .getByText('No-show')
        .waitFor();
      await page
        .getByRole('row', { name: /Eve Euler/ })
        .getByText('Finished')
        .waitFor();
      await page.getByLabel('Status').selectOption({ label: 'No-show' });
      await page.waitForURL(/status=no_show/);
      await page.getByRole('row', { name: /Dan Darwin/ }).waitFor();
      await page.getByRole('row', { name: /Eve Euler/ }).waitFor({ state: 'detached' });
      await checkScreen(page, `students-no-show-${dialect}`);

      // While the window is open, nobody is a no-show.
      const open = await createExam('Open biology', { end_time: new Date(now + HOUR).toISOString() });
      await addStudent(open, 'Fay Fermi');
      await page.goto(`${world.baseUrl}/console/exams/${open}/students?status=no_show`);
      await page.getByText("No no-shows: the exam's window has not closed yet").waitFor();
      await page.goto(`${world.baseUrl}/console/exams/${open}/students`);
      await page
        .getByRole('row', { name: /Fay Fermi/ })
        .getByText('Registered')
        .waitFor();
    });

    it('asks for no exam named NaN when leaving the emails and review screens', async () => {
      const examId = await createExam('Leaving history');
      const asked: string[] = [];
      const watch = (request: { url(): string }) => {
        if (request.url().includes('NaN')) asked.push(request.url());
      };
      page.on('request', watch);
      try {
        for (const screen of ['students/emails', 'review']) {
          await page.goto(`${world.baseUrl}/console/exams/${examId}/${screen}`);
          await page.getByRole('heading', { level: 1, name: /Leaving history/ }).waitFor();
          await page.waitForLoadState('networkidle');
          await page
            .getByRole('navigation', { name: 'Console' })
            .getByRole('link', { name: 'Outbox' })
            .click();
          await page.getByRole('heading', { level: 1, name: 'Outbox' }).waitFor();
          await page.waitForLoadState('networkidle');
        }
      } finally {
        page.off('request', watch);
      }
      assert.deepEqual(asked, []);
    });

    it("shows the institute's name in the header, to a teacher too", async () => {
      const teacher = await world.staff('teacher');
      const teacherPage = await signedInPage(world, teacher);
      try {
        const header = teacherPage.getByRole('banner');
        await header.getByText('Example University').waitFor();
        await checkScreen(teacherPage, `header-institute-${dialect}`);
      } finally {
        await teacherPage.context().close();
      }
    });

    it("gives a reviewer each session's verdict, and a way back from an exam's page to My sessions", async () => {
      const reviewer = await world.staff('reviewer');
      const examId = await createExam('Reviewed geology');
      const gus = await addStudent(examId, 'Gus Gauss');
      await v3('POST', '/student_sessions/:id/end_exam', { id: Number(gus.id) });
      await v3('PUT', '/student_sessions/:id/review', { id: Number(gus.id), verdict: 'suspicious' });
      const reviewerPage = await newPage(world);
      try {
        const { signIn } = await import('./console/support.ts');
        await signIn(reviewerPage, world.baseUrl, reviewer.email);
        await reviewerPage.getByRole('heading', { level: 1, name: 'My sessions' }).waitFor();
        await reviewerPage.getByRole('columnheader', { name: 'Verdict' }).waitFor();
        const row = reviewerPage.getByRole('row', { name: /Gus Gauss/ });
        await row.getByText('Suspicious').waitFor();
        await checkScreen(reviewerPage, `my-sessions-reviewer-${dialect}`);

        await row.getByRole('link', { name: 'Reviewed geology' }).click();
        await reviewerPage.getByRole('heading', { level: 1, name: /Reviewed geology/ }).waitFor();
        const tabs = reviewerPage.getByRole('navigation', { name: 'This exam' });
        assert.equal(await tabs.getByRole('link', { name: 'Settings' }).count(), 0);
        await reviewerPage.getByRole('link', { name: 'Review', exact: true }).click();
        await reviewerPage.getByRole('heading', { level: 1, name: /Reviewed geology · Review/ }).waitFor();
        await reviewerPage.locator('.breadcrumb').getByRole('link', { name: 'My sessions' }).click();
        await reviewerPage.getByRole('heading', { level: 1, name: 'My sessions' }).waitFor();
        assert.equal(await reviewerPage.getByText('Not available to your role').count(), 0);
      } finally {
        await reviewerPage.context().close();
      }
    });
  });
}
