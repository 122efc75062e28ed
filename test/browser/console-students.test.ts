/**
 * The console's student screens in Chromium: the students table, importing 500 students from a
 * spreadsheet's CSV export (and a file with bad rows, where nothing is imported), adding, editing,
 * a new attempt, ending an exam and deleting, the exam emails after their preview (received by the
 * world's real SMTP server), and the live monitor changing while a candidate takes the exam in a
 * second browser context, without a reload. Every screen and state is checked by axe and saved as
 * a screenshot; the phone width and what a proctor may do are checked too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import type { Scalar } from '../helpers/signing.ts';
import { outboxRows, runDueJobs } from '../mail/support.ts';
import {
  assertNoHorizontalScroll,
  checkScreen,
  createExam as createConsoleExam,
  newPage,
  signedInPage,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
  v3Call,
} from './console/support.ts';
import { acceptPrivacy } from './privacy-support.ts';

type Json = Record<string, unknown>;

/** A spreadsheet's CSV export of `count` students, as Excel writes it in a semicolon locale. */
function spreadsheetExport(count: number): Buffer {
  const lines = ['First name;Surname;E-mail;Student number'];
  for (let index = 1; index <= count; index += 1) {
    // Every fifth surname holds the separator, so the export quotes it.
    const surname = index % 5 === 0 ? `"Smith; Jones ${index}"` : `Lovelace ${index}`;
    lines.push(`Ada ${index};${surname};Student.${index}@Example.org;S${String(index).padStart(5, '0')}`);
  }
  // A byte-order mark and Windows line ends, as "CSV UTF-8" from Excel has.
  return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${lines.join('\r\n')}\r\n`, 'utf8')]);
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console student screens and live monitor in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let admin: StaffUser;
    let proctor: StaffUser;
    let examId: number;
    let page: Page;

    before(async () => {
      world = await startConsoleWorld(dialect);
      admin = await world.staff('administrator');
      proctor = await world.staff('proctor');
      examId = await createExam('Organic chemistry', { web_cam: true });
      page = await signedInPage(world, admin);
    });

    after(async () => {
      await world?.close();
    });

    const v3 = (method: string, route: string, params: Record<string, Scalar>, status = 200) =>
      v3Call(admin, method, route, params, status);
    const createExam = (name: string, settings: Record<string, Scalar> = {}) =>
      createConsoleExam(admin, name, settings);

    /** The students of an exam through the signed API (the first page of 300), and how many in all. */
    async function studentsOf(exam: number, filter?: Json): Promise<{ students: Json[]; count: number }> {
      const answer = await admin.client.v3('GET', '/exams/:exam_id/student_sessions', {
        exam_id: exam,
        ...(filter === undefined ? {} : { filter: JSON.stringify(filter) }),
      });
      assert.equal(answer.status, 200, answer.text);
      return {
        students: object(answer.json, 'body').students as Json[],
        count: Number(answer.headers['x-pagination-item-count']),
      };
    }

    async function openImport(target: Page): Promise<void> {
      await target.goto(`${world.baseUrl}/console/exams/${examId}/students`);
      await target.getByRole('link', { name: 'Import from a file' }).click();
      await target.getByRole('heading', { level: 1, name: /Import students/ }).waitFor();
    }

    it('imports 500 students from a spreadsheet export after the service checked every row', async () => {
      await page.goto(`${world.baseUrl}/console/exams/${examId}/students`);
      await page.getByRole('heading', { level: 1, name: /Organic chemistry/ }).waitFor();
      await page.getByText('No students yet. Add one, or import a list from a file.').waitFor();
      await checkScreen(page, `students-empty-${dialect}`);

      await page.getByRole('link', { name: 'Import from a file' }).click();
      await page.getByRole('heading', { level: 1, name: /Import students/ }).waitFor();
      assert.ok(
        await page.getByText(/File › Save As › CSV UTF-8/).isVisible(),
        'says how to export from Excel',
      );
      await checkScreen(page, `students-import-start-${dialect}`);

      await page.getByLabel('Student list file (CSV or TSV)').setInputFiles({
        name: 'students.csv',
        mimeType: 'text/csv',
        buffer: spreadsheetExport(500),
      });
      await page.getByRole('heading', { name: 'Columns of students.csv' }).waitFor();
      // Separator, headings and fields found by themselves.
      assert.equal(await page.getByLabel('Separator').inputValue(), ';');
      assert.ok(await page.getByLabel('The first row holds the column names').isChecked());
      assert.equal(await page.getByLabel('Import column “First name” as').inputValue(), 'first_name');
      assert.equal(await page.getByLabel('Import column “Surname” as').inputValue(), 'last_name');
      assert.equal(await page.getByLabel('Import column “E-mail” as').inputValue(), 'email');
      assert.equal(await page.getByLabel('Import column “Student number” as').inputValue(), 'external_id');
      const preview = page.getByRole('table', { name: /The first 5 of 500 rows/ });
      await preview.waitFor();
      // The quoted surname with the separator in it stays one cell; the BOM is not part of a heading.
      assert.match(await preview.innerText(), /Ada 5\s+Smith; Jones 5\s+Student\.5@Example\.org\s+S00005/);
      await checkScreen(page, `students-import-mapped-${dialect}`);

      await page.getByRole('button', { name: 'Check 500 rows' }).click();
      await page.getByText('All 500 rows are valid and ready to import.').waitFor();
      assert.equal((await studentsOf(examId)).count, 0, 'the check imports nothing');
      await checkScreen(page, `students-import-checked-${dialect}`);

      await page.getByRole('button', { name: 'Import 500 students' }).click();
      await page.getByText('Imported 500 students from students.csv.').waitFor();
      assert.equal(new URL(page.url()).pathname, `/console/exams/${examId}/students`);
      const { count } = await studentsOf(examId);
      assert.equal(count, 500);
      const tenth = (await studentsOf(examId, { external_id: { eq: 'S00010' } })).students[0];
      assert.equal(tenth?.name, 'Ada 10 Smith; Jones 10');
      assert.equal(tenth?.email, 'student.10@example.org');
      assert.match(await page.getByText(/Page 1 of 10/).innerText(), /500 in all/);
      await checkScreen(page, `students-list-${dialect}`);

      // Search and the status filter narrow the table.
      await page.getByLabel('Search', { exact: true }).fill('S00042');
      await page.getByLabel('Search in').selectOption('external_id');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByText(/1 in all/).waitFor();
      assert.match(await page.locator('tbody').innerText(), /Ada 42/);
      await page.getByLabel('Status').selectOption('exam_started');
      await page.getByText('No students match. Clear the search or the status filter.').waitFor();
    });

    it('lists every bad row of a file with its row, column and problem, and imports nothing', async () => {
      await openImport(page);
      // A spreadsheet file itself is refused with the way to export it.
      await page.getByLabel('Student list file (CSV or TSV)').setInputFiles({
        name: 'students.xlsx',
        mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        buffer: Buffer.from('PK\u0003\u0004 not really a workbook'),
      });
      assert.match(
        await page.getByRole('alert').innerText(),
        /students\.xlsx is a spreadsheet file.*Save As/,
      );

      const bad = [
        'Name,Email',
        'Grace Hopper,grace@example.org',
        'No Address,not-an-email',
        'Nobody,',
        '"Lovelace, Ada",student.1@example.org',
        'Grace Again,grace@example.org',
      ].join('\n');
      // Dropped on the zone rather than chosen, as a user drags it from the desktop.
      await page.evaluate((text) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([text], 'bad.csv', { type: 'text/csv' }));
        const zone = document.querySelector('.drop-zone');
        zone?.dispatchEvent(
          new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }),
        );
        zone?.dispatchEvent(
          new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }),
        );
      }, bad);
      await page.getByRole('heading', { name: 'Columns of bad.csv' }).waitFor();
      assert.equal(await page.getByLabel('Separator').inputValue(), ',');
      await page.getByRole('button', { name: 'Check 5 rows' }).click();
      const errors = page.getByRole('table', { name: /problems found/ });
      await errors.waitFor();
      // (Row 5's student is already registered: skipped by default, so not a problem.)
      assert.match(
        await page.getByRole('alert').innerText(),
        /3 of 5 rows are invalid: nothing was imported/,
      );
      const lines = (await errors.locator('tbody tr').allInnerTexts()).map((line) =>
        line.replace(/\s+/g, ' ').trim(),
      );
      assert.deepEqual(lines, [
        '3 Email is invalid',
        '4 Email is missing or empty',
        '6 Email has already been taken by row 2',
      ]);
      await checkScreen(page, `students-import-errors-${dialect}`);
      assert.equal((await studentsOf(examId)).count, 500, 'nothing was imported');
      assert.equal((await studentsOf(examId, { email: { eq: 'grace@example.org' } })).count, 0);
    });

    it('re-imports a class list: skips students already registered by default, updates them when asked', async () => {
      await openImport(page);
      const choose = (name: string, text: string) =>
        page.getByLabel('Student list file (CSV or TSV)').setInputFiles({
          name,
          mimeType: 'text/csv',
          buffer: Buffer.from(text),
        });
      const plannedLines = async () =>
        (
          await page
            .getByRole('table', { name: 'What the import does with each row' })
            .locator('tbody tr')
            .allInnerTexts()
        ).map((line) => line.replace(/\s+/g, ' ').trim());

      // One row, already registered: nothing to import, in the singular.
      await choose('one.csv', 'Name,Email\nAda Smith,student.7@example.org\n');
      await page.getByRole('table', { name: 'The 1 row, as it will be imported' }).waitFor();
      assert.equal(await page.getByLabel('Skip them: keep them as they are').isChecked(), true);
      await page.getByRole('button', { name: 'Check 1 row' }).click();
      await page
        .getByText(
          'The 1 row is valid, and every student in it is already registered: there is nothing to import.',
        )
        .waitFor();
      assert.deepEqual(await plannedLines(), [
        '2 Ada Smith student.7@example.org Already registered: skipped',
      ]);
      assert.equal(await page.getByRole('button', { name: /^(Import|Update) / }).count(), 0);

      // A new student and a registered one: the check says which is which.
      await choose(
        'again.csv',
        'Name,Email\nAda Renamed,student.2@example.org\nHedy Lamarr,hedy@example.org\n',
      );
      await page.getByRole('button', { name: 'Check 2 rows' }).click();
      await page
        .getByText(
          'All 2 rows are valid and ready to import: 1 new student to add, 1 registered student to skip.',
        )
        .waitFor();
      assert.deepEqual(await plannedLines(), [
        '2 Ada Renamed student.2@example.org Already registered: skipped',
        '3 Hedy Lamarr hedy@example.org New: will be added',
      ]);
      assert.equal(await page.getByRole('button', { name: 'Import 1 student', exact: true }).count(), 1);
      await checkScreen(page, `students-import-skip-${dialect}`);

      // Choosing to update asks for a new check, which plans the update.
      await page.getByLabel('Update them with the name and details in the file').check();
      await page.getByRole('button', { name: 'Check 2 rows' }).click();
      await page
        .getByText(
          'All 2 rows are valid and ready to import: 1 new student to add, 1 registered student to update.',
        )
        .waitFor();
      assert.deepEqual(await plannedLines(), [
        '2 Ada Renamed student.2@example.org Already registered: updated',
        '3 Hedy Lamarr hedy@example.org New: will be added',
      ]);
      await checkScreen(page, `students-import-update-${dialect}`);
      await page.getByRole('button', { name: 'Import 1 student and update 1 student' }).click();
      await page
        .getByText('Imported 1 student from again.csv; updated 1 student already registered.')
        .waitFor();
      const [ada] = (await studentsOf(examId, { email: { eq: 'student.2@example.org' } })).students;
      assert.equal(ada?.name, 'Ada Renamed');
      assert.equal(ada?.external_id, 'S00002', 'a field the file leaves out is kept');
      assert.equal((await studentsOf(examId, { email: { eq: 'hedy@example.org' } })).count, 1);
      assert.equal((await studentsOf(examId)).count, 501);
    });

    it('adds, edits, gives a new attempt, ends the exam of and deletes a student', async () => {
      await page.goto(`${world.baseUrl}/console/exams/${examId}/students`);
      await page.getByRole('link', { name: 'Add a student' }).click();
      await page.getByRole('heading', { level: 1, name: /Add a student/ }).waitFor();
      await page.getByLabel('Name').fill('Mary Somerville');
      await page.getByLabel('Email').fill('mary at example.org');
      await page.getByRole('button', { name: 'Add student' }).click();
      await page.getByText('Email is invalid.', { exact: false }).first().waitFor();
      assert.equal(await page.getByLabel('Email').getAttribute('aria-invalid'), 'true');
      await checkScreen(page, `student-form-error-${dialect}`);
      await page.getByLabel('Email').fill('mary@example.org');
      await page.getByLabel('Student number').fill('S90001');
      await page.getByRole('button', { name: 'Add student' }).click();
      await page.getByText('Added Mary Somerville.').waitFor();

      const [mary] = (await studentsOf(examId, { email: { eq: 'mary@example.org' } })).students;
      assert.equal(mary?.external_id, 'S90001');

      await page.getByLabel('Search', { exact: true }).fill('Mary');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByText(/1 in all/).waitFor();
      await page.getByRole('link', { name: 'Edit Mary Somerville' }).click();
      await page.getByRole('heading', { level: 1, name: /Edit student/ }).waitFor();
      assert.equal(await page.getByLabel('Student number').inputValue(), 'S90001');
      await checkScreen(page, `student-form-edit-${dialect}`);
      await page.getByLabel('Name').fill('Mary Fairfax Somerville');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Saved Mary Fairfax Somerville.').waitFor();

      await page.getByLabel('Search', { exact: true }).fill('Mary');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByText(/1 in all/).waitFor();
      await page.getByRole('button', { name: 'New attempt for Mary Fairfax Somerville' }).click();
      const attemptDialog = page.getByRole('dialog', { name: 'Give Mary Fairfax Somerville a new attempt?' });
      await attemptDialog.waitFor();
      await checkScreen(page, `students-new-attempt-dialog-${dialect}`);
      await attemptDialog.getByRole('button', { name: 'Add attempt' }).click();
      await page.getByText('Attempt 1 added for Mary Fairfax Somerville.', { exact: false }).waitFor();
      await page.getByText(/2 in all/).waitFor();
      const attempts = (await studentsOf(examId, { email: { eq: 'mary@example.org' } })).students;
      assert.deepEqual(
        attempts.map((student) => [student.attempt, student.external_id]),
        [
          [0, 'S90001'],
          [1, 'S90001'],
        ],
      );

      // End the first attempt's exam: the rows are sorted by name, then id.
      await page.getByRole('button', { name: 'End exam of Mary Fairfax Somerville' }).first().click();
      const endDialog = page.getByRole('dialog', { name: 'End the exam of Mary Fairfax Somerville?' });
      await endDialog.waitFor();
      await checkScreen(page, `students-end-dialog-${dialect}`);
      await endDialog.getByRole('button', { name: 'End exam now' }).click();
      await page.getByText('The exam of Mary Fairfax Somerville has ended.').waitFor();
      const ended = object(
        (await v3('GET', '/student_sessions/:id', { id: attempts[0]?.id as number })).student,
        'student',
      );
      assert.equal(ended.status, 'exam_finished');
      assert.equal(ended.end_reason, 'api');

      // Delete the second attempt, after cancelling once with Escape.
      const deleteSecond = page.getByRole('button', { name: 'Delete Mary Fairfax Somerville' }).nth(1);
      await deleteSecond.click();
      const deleteDialog = page.getByRole('dialog', { name: 'Delete Mary Fairfax Somerville?' });
      await deleteDialog.waitFor();
      await page.keyboard.press('Escape');
      await deleteDialog.waitFor({ state: 'hidden' });
      await deleteSecond.click();
      await checkScreen(page, `students-delete-dialog-${dialect}`);
      await deleteDialog.getByRole('button', { name: 'Delete student' }).click();
      await page.getByText('Mary Fairfax Somerville was deleted.').waitFor();
      const gone = await admin.client.v3('GET', '/student_sessions/:id', { id: attempts[1]?.id as number });
      assert.equal(gone.status, 404);
      await checkScreen(page, `students-after-actions-${dialect}`);
    });

    it('previews the exam email, then sends it to every student not emailed yet', async () => {
      const small = await createExam('Statistics retake');
      // With instructions, the confirmation asks plainly (without, it warns: console-email-delivery).
      await v3(
        'POST',
        '/exams/:exam_id/documents',
        { exam_id: small, exam_content: '<p>Bring a pen.</p>' },
        201,
      );
      for (const [name, email] of [
        ['Florence Nightingale', 'florence@example.org'],
        ['Emmy Noether', 'emmy@example.org'],
        ['Hedy Lamarr', 'hedy@example.org'],
      ] as const) {
        await v3('POST', '/exams/:exam_id/student_sessions', { exam_id: small, name, email }, 201);
      }
      await page.goto(`${world.baseUrl}/console/exams/${small}/students`);
      await page.getByRole('link', { name: 'Send exam emails' }).click();
      const preview = page.getByRole('article', { name: 'Email preview' });
      await preview.getByText('emmy@example.org').waitFor();
      assert.match(await preview.innerText(), /Your exam link: Statistics retake/);
      assert.match(await preview.innerText(), /Hello Emmy Noether/);
      assert.match(await preview.innerText(), new RegExp(`${world.baseUrl}/room/[0-9a-f]{32}`));
      await page.getByText('3 students have not been emailed yet.').waitFor();
      await checkScreen(page, `students-emails-preview-${dialect}`);
      // The HTML part, in a sandboxed frame, on request.
      await page.getByRole('button', { name: 'Show the HTML version' }).click();
      await page
        .frameLocator('iframe[title="The email\'s HTML version"]')
        .getByText('Hello Emmy Noether')
        .waitFor();
      await page.getByRole('button', { name: 'Hide the HTML version' }).click();
      await page.getByLabel('Show the email as it goes to').selectOption({ label: 'A sample student' });
      await preview.getByText(/sample\.student@example\.invalid/).waitFor();
      const examLinks = async () =>
        (await outboxRows(world.server)).filter((row) => row.kind === 'exam_link').length;
      assert.equal(await examLinks(), 0, 'a preview sends nothing');

      await page.getByRole('button', { name: 'Send 3 exam emails' }).click();
      const dialog = page.getByRole('dialog', { name: 'Send 3 exam emails?' });
      await dialog.getByRole('button', { name: 'Send now' }).click();
      await page.getByText(/3 exam emails were written to the outbox/).waitFor();
      await page.getByText('Every student has been emailed.', { exact: false }).waitFor();

      await runDueJobs(world.server, dialect, world.server.app.clock);
      // The confirmation follows the outbox: with a mail server, each email shows as delivered.
      const delivery = page.getByRole('list', { name: 'Delivery of the emails just sent' });
      await delivery.getByText('Email delivered').nth(2).waitFor();
      assert.equal(await page.getByText(/held, not sent|could not be delivered/).count(), 0, 'no banner');
      await checkScreen(page, `students-emails-sent-${dialect}`);
      const received = world.smtp.messages.filter(
        (mail) => mail.subject === 'Your exam link: Statistics retake',
      );
      assert.deepEqual(received.map((mail) => mail.envelopeTo[0]).sort(), [
        'emmy@example.org',
        'florence@example.org',
        'hedy@example.org',
      ]);
      const { students } = await studentsOf(small);
      assert.ok(
        students.every((student) => student.status === 'email_sent' && student.is_email_sent === true),
      );
    });

    it('shows a candidate taking the exam on the live monitor as it happens, without reloading', async () => {
      const live = await createExam('Live chemistry', { web_cam: true });
      const student = object(
        (
          await v3(
            'POST',
            '/exams/:exam_id/student_sessions',
            { exam_id: live, name: 'Ada Lovelace', email: 'ada@example.org' },
            201,
          )
        ).student,
        'student',
      );
      await v3(
        'POST',
        '/exams/:exam_id/student_sessions',
        { exam_id: live, name: 'Charles Babbage', email: 'charles@example.org' },
        201,
      );

      // Reached through the exam's tabs: the monitor's stream keeps the network busy for good.
      await page.goto(`${world.baseUrl}/console/exams/${live}/students`);
      await page.waitForLoadState('networkidle');
      await page.getByRole('link', { name: 'Live monitor' }).click();
      await page.getByText('Live: changes appear as they happen.').waitFor();
      const tile = (status: string) =>
        page
          .getByRole('list', { name: 'Students by status' })
          .getByRole('listitem')
          .filter({ hasText: status });
      assert.equal((await tile('in all').innerText()).replace(/\s+/g, ' '), '2 in all');
      assert.equal((await tile('Registered').innerText()).replace(/\s+/g, ' '), '2 Registered');
      await checkScreen(page, `monitor-${dialect}`);
      await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));

      const candidate = await (
        await world.chromium.newContext({ viewport: { width: 1280, height: 900 } })
      ).newPage();
      await candidate.goto(`${world.baseUrl}/room/${student.token as string}`);
      await candidate.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(candidate);
      await tile('In setup').getByText('1', { exact: true }).waitFor();
      const row = page.locator('tbody tr', { hasText: 'Ada Lovelace' });
      await row.getByText('In setup').waitFor();

      await candidate.getByRole('button', { name: 'Test camera and microphone' }).click();
      await candidate.getByText('Camera: passed').waitFor();
      await row.getByText('Camera: passed').waitFor();
      await row.getByText('Microphone: passed').waitFor();
      await candidate.getByRole('button', { name: 'Measure your connection' }).click();
      await candidate.getByText(/Connection speed: (passed|failed)/).waitFor();
      await candidate.getByRole('button', { name: 'Take a photo of your ID card' }).click();
      await candidate.locator('#id_card-state', { hasText: 'Photo saved.' }).waitFor();
      await candidate.getByRole('button', { name: 'Take a photo of your face' }).click();
      await candidate.locator('#face_photo-state', { hasText: 'Photo saved.' }).waitFor();
      await candidate.getByRole('button', { name: 'Start the exam' }).click();
      await candidate.getByRole('heading', { name: 'Exam in progress' }).waitFor();

      await row.getByText('Exam started').waitFor();
      await tile('Exam started').getByText('1', { exact: true }).waitFor();
      assert.equal((await tile('Registered').innerText()).replace(/\s+/g, ' '), '1 Registered');

      // A proctor's incident shows in the incidents column.
      await v3(
        'POST',
        '/student_sessions/:id/incidents',
        { id: student.id as number, comment: 'Looked away' },
        201,
      );
      await row.locator('td[data-label="Incidents"]', { hasText: '1' }).waitFor();
      // Screen readers hear a summary of the changes, not every event.
      await page
        .locator('[aria-live="polite"][aria-atomic="true"]', { hasText: 'Ada Lovelace' })
        .waitFor({ timeout: 20_000 });
      assert.equal(
        await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed),
        true,
        'no reload',
      );
      await checkScreen(page, `monitor-live-${dialect}`);

      // A lost connection says so and comes back by itself.
      await page.context().setOffline(true);
      await page.getByText(/^Reconnecting…/).waitFor({ timeout: 20_000 });
      await checkScreen(page, `monitor-reconnecting-${dialect}`);
      await page.context().setOffline(false);
      await page.getByText('Live: changes appear as they happen.').waitFor({ timeout: 45_000 });
      await candidate.context().close();
    });

    it('is readable at 390 px wide', async () => {
      const phone = await newPage(world, { width: 390, height: 844 });
      await phone.goto(`${world.baseUrl}/console/sign-in`);
      await phone.getByLabel('Email').fill(admin.email);
      await phone.getByLabel('Password').fill('correct horse battery staple');
      await phone.getByRole('button', { name: 'Sign in' }).click();
      await phone.waitForURL((url) => !url.pathname.startsWith('/console/sign-in'));

      await phone.goto(`${world.baseUrl}/console/exams/${examId}/students`);
      await phone.getByText(/500 in all|50\d in all/).waitFor();
      await assertNoHorizontalScroll(phone, 'students at 390 px');
      await checkScreen(phone, `students-list-390px-${dialect}`);

      await phone.getByRole('link', { name: 'Import from a file' }).click();
      await phone.getByLabel('Student list file (CSV or TSV)').setInputFiles({
        name: 'students.csv',
        mimeType: 'text/csv',
        buffer: spreadsheetExport(20),
      });
      await phone.getByRole('heading', { name: 'Preview' }).waitFor();
      await assertNoHorizontalScroll(phone, 'import at 390 px');
      await checkScreen(phone, `students-import-390px-${dialect}`);

      await phone.waitForLoadState('networkidle');
      await phone.getByRole('link', { name: 'Live monitor' }).click();
      await phone.getByText('Live: changes appear as they happen.').waitFor();
      await assertNoHorizontalScroll(phone, 'monitor at 390 px');
      await checkScreen(phone, `monitor-390px-${dialect}`);
      await phone.context().close();
    });

    it('lets a proctor read the students and watch the monitor, but not import or change them', async () => {
      const proctorPage = await signedInPage(world, proctor);
      await proctorPage.goto(`${world.baseUrl}/console/exams/${examId}/students`);
      await proctorPage.getByText(/50\d in all/).waitFor();
      assert.equal(await proctorPage.getByRole('link', { name: 'Import from a file' }).count(), 0);
      assert.equal(await proctorPage.getByRole('link', { name: 'Add a student' }).count(), 0);
      assert.equal(await proctorPage.getByRole('button', { name: /^Delete/ }).count(), 0);
      assert.equal(await proctorPage.getByRole('columnheader', { name: 'Actions' }).count(), 0);
      await checkScreen(proctorPage, `students-proctor-${dialect}`);

      // Going to the import directly: the service refuses, and the page says so.
      await proctorPage.goto(`${world.baseUrl}/console/exams/${examId}/students/import`);
      await proctorPage.getByLabel('Student list file (CSV or TSV)').setInputFiles({
        name: 'more.csv',
        mimeType: 'text/csv',
        buffer: Buffer.from('Name,Email\nAlan Turing,alan@example.org\n'),
      });
      await proctorPage.getByRole('button', { name: 'Check 1 row' }).click();
      assert.match(
        await proctorPage.getByRole('alert').innerText(),
        /The rows could not be checked\. You are not allowed to do this\./,
      );
      await checkScreen(proctorPage, `students-import-refused-${dialect}`);
      assert.equal((await studentsOf(examId, { email: { eq: 'alan@example.org' } })).count, 0);

      // Sending emails: refused too.
      await proctorPage.goto(`${world.baseUrl}/console/exams/${examId}/students/emails`);
      await proctorPage
        .getByRole('alert')
        .getByText(/You are not allowed to do this/)
        .waitFor();

      // The monitor is for every reader of the exam.
      await proctorPage.goto(`${world.baseUrl}/console/exams/${examId}/students`);
      await proctorPage.getByRole('link', { name: 'Live monitor' }).click();
      await proctorPage.getByText('Live: changes appear as they happen.').waitFor();
      await proctorPage.context().close();

      // A teacher who does not manage the exam does not even learn that it exists.
      const teacher = await world.staff('teacher');
      const teacherPage = await signedInPage(world, teacher);
      await teacherPage.goto(`${world.baseUrl}/console/exams/${examId}/students`);
      await teacherPage.getByRole('alert').getByText(`Couldn't find Exam with 'id'=${examId}`).waitFor();
      await teacherPage.goto(`${world.baseUrl}/console/exams/${examId}/students`);
      await teacherPage.getByRole('link', { name: 'Live monitor' }).click();
      await teacherPage.getByText(/Not live\. The exam is gone, or you may not see it\./).waitFor();
      await teacherPage.context().close();
    });
  });
}
