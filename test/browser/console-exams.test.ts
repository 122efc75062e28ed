/**
 * The console's exam screens in Chromium, in a browser set to Amsterdam time: an administrator
 * creates an exam with every setting through the editor (checked exactly through the signed API,
 * the window stored in UTC), edits it, sees a refusal next to the field it names, moves its status,
 * adds and removes a co-manager; an auditor reads the settings with every control disabled and is
 * refused by the service when creating an exam anyway. On the instructions screen formatted text is
 * typed, one file is attached through the file input and one by a drop, a placeholder is put in the
 * text by a click, the preview shows the link, and the candidate's exam room serves the same.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { httpRequest } from '../helpers/http.ts';
import { object, type Json } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import {
  assertNoHorizontalScroll,
  checkScreen,
  signIn,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';

const ZONE = 'Europe/Amsterdam';

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console exam editor and instructions in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let admin: StaffUser;
    let colleague: StaffUser;
    let auditor: StaffUser;
    let examId: number;
    /** Content Security Policy refusals the browser reported on any page. */
    const cspViolations: string[] = [];
    /** Uncaught errors of any page (Svelte's effect_update_depth_exceeded among them). */
    const pageErrors: string[] = [];

    before(async () => {
      world = await startConsoleWorld(dialect);
      admin = await world.staff('administrator');
      colleague = await world.staff('teacher', { email: `colleague-${dialect}@example.org` });
      auditor = await world.staff('auditor');
    });

    after(async () => {
      await world?.close();
    });

    /** A page in Amsterdam time (its own cookies), signed in as `user`. */
    async function amsterdamPage(user: StaffUser, viewport = { width: 1280, height: 900 }): Promise<Page> {
      const context = await world.chromium.newContext({ viewport, timezoneId: ZONE, locale: 'en-GB' });
      const page = await context.newPage();
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
      });
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await signIn(page, world.baseUrl, user.email);
      return page;
    }

    async function storedExam(id: number): Promise<Json> {
      const answer = await admin.client.v3('GET', '/exams/:id', { id });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').exam, 'exam');
    }

    it('creates an exam with every setting, stored exactly, the window read in the viewer’s zone', async () => {
      const page = await amsterdamPage(admin);
      // No exam yet and no filter: the list says so and points to creating one.
      const emptyRow = page.locator('table tbody td');
      await emptyRow.filter({ hasText: 'No exams yet.' }).waitFor();
      assert.equal(await emptyRow.getByRole('link', { name: 'Create the first exam' }).count(), 1);
      assert.equal((await emptyRow.innerText()).trim(), 'No exams yet. Create the first exam.');
      await checkScreen(page, `exam-list-empty-${dialect}`);
      // With a search set, the same empty list means nothing matched.
      await page.getByLabel('Search by name').fill('Biology');
      await page.getByRole('button', { name: 'Search' }).click();
      await emptyRow.filter({ hasText: 'No exams match. Clear the search or the status filter.' }).waitFor();
      await page.goto(`${world.baseUrl}/console/exams`);

      await page.getByRole('link', { name: 'New exam' }).click();
      await page.getByRole('heading', { name: 'New exam', level: 1 }).waitFor();
      assert.match(await page.locator('#exam-window-zone').innerText(), /Europe\/Amsterdam/);
      // A new exam starts as a draft of type record and review, recording webcam and screen for reviewers.
      assert.equal(await page.getByLabel('Status').inputValue(), 'draft');
      assert.equal(await page.getByLabel('Exam type').inputValue(), 'record_review');
      const recording = [
        page.getByLabel('Webcam and microphone'),
        page.getByLabel('Screen', { exact: true }),
        page.getByLabel('Send recordings to reviewers'),
      ];
      const recordingChecked = async () => Promise.all(recording.map((box) => box.isChecked()));
      assert.deepEqual(await recordingChecked(), [true, true, true]);
      // The defaults follow the type while untouched: off for a classroom exam, on again for live proctoring.
      await page.getByLabel('Exam type').selectOption('classroom');
      assert.deepEqual(await recordingChecked(), [false, false, false]);
      await page.getByLabel('Exam type').selectOption('live_proctoring');
      assert.deepEqual(await recordingChecked(), [true, true, true]);
      // The phone check exists: the help says what it does.
      assert.match(
        await page.locator('#exam-mobile-cam-help').innerText(),
        /checks the phone's camera before they can start/,
      );
      assert.doesNotMatch(await page.locator('#exam-mobile-cam-help').innerText(), /cannot check/);
      // A detail field shows only while its box is ticked.
      assert.equal(await page.getByLabel('Which calculator').count(), 0);
      await checkScreen(page, `exam-new-${dialect}`);

      await page.getByLabel('Exam name (required)').fill('Organic chemistry — final');
      await page.getByLabel('Exam type').selectOption('live_proctoring');
      await page.getByLabel('Status').selectOption('draft');
      await page.getByLabel('Language').selectOption('de');
      await page.getByLabel('Time zone').selectOption('America/New_York');
      assert.equal(await page.getByLabel('The exam has a time limit').isChecked(), true);
      await page.getByLabel('Time limit in minutes').fill('95');
      await page.getByLabel('Window opens').fill('2027-03-15T09:30');
      await page.getByLabel('Window closes').fill('2027-03-15T12:00');
      // The exam's own zone differs from the viewer's, so the help shows the time there too.
      await page.getByText(/In the exam's time zone \(America\/New_York\): 15 Mar 2027, 04:30/).waitFor();
      await page.getByLabel('Webcam and microphone').check();
      await page.getByLabel('Screen', { exact: true }).check();
      await page.getByLabel('Mobile phone camera').check();
      await page.getByLabel('Calculator', { exact: true }).check();
      await page.getByLabel('Which calculator').fill('Casio fx-82, non-programmable');
      await page.getByLabel('Textbooks', { exact: true }).check();
      await page.getByLabel('Which textbooks').fill('Clayden Organic Chemistry, own notes');
      await page.getByLabel('Websites', { exact: true }).check();
      await page.getByLabel('Which websites').fill('wikipedia.org, pubchem.ncbi.nlm.nih.gov');
      await page.getByLabel('Pen and paper').check();
      await page.getByLabel('Other applications').check();
      await page.getByLabel('Which applications').fill('ChemDraw');
      await page.getByLabel('Something else').check();
      await page.getByLabel('What else').fill('a periodic table');
      await page.getByLabel('Students hand in answer files').check();
      await page.getByLabel('Send recordings to reviewers').check();
      await page.getByLabel("Any of the institute's proctors may proctor").check();
      await page.getByLabel("Any of the institute's reviewers may review").check();
      // Shown for a live-proctored exam only (the type chosen above).
      await page.getByLabel('Proctor checks ID live before admitting').check();
      await page.getByLabel('Instructions for the reviewer').fill('One toilet break of at most 5 minutes.');
      await page.getByLabel('Terms the student accepts').fill('I work alone and keep my camera on.');
      await checkScreen(page, `exam-new-filled-${dialect}`);

      await page.getByRole('button', { name: 'Create exam' }).click();
      await page.waitForURL(/\/console\/exams\/\d+\?created=1$/);
      examId = Number(/\/exams\/(\d+)/.exec(page.url())?.[1]);
      await page.getByRole('status').filter({ hasText: 'Saved.' }).first().waitFor();
      await page.getByRole('heading', { name: /Organic chemistry — final/, level: 1 }).waitFor();
      await checkScreen(page, `exam-created-${dialect}`);

      const exam = await storedExam(examId);
      const expected: Json = {
        name: 'Organic chemistry — final',
        type: 'live_proctoring',
        status: 'draft',
        exam_language: 'de',
        timezone: 'America/New_York',
        use_duration: true,
        duration_minutes: 95,
        // 09:30 and 12:00 in Amsterdam (UTC+1 in mid-March).
        start_time: '2027-03-15T08:30:00.000Z',
        end_time: '2027-03-15T11:00:00.000Z',
        web_cam: true,
        screen_share: true,
        mobile_cam: true,
        allow_calculator: true,
        allowed_calculator_type: 'Casio fx-82, non-programmable',
        allow_textbooks: true,
        allowed_textbooks: 'Clayden Organic Chemistry, own notes',
        allow_websites: true,
        allowed_websites: 'wikipedia.org, pubchem.ncbi.nlm.nih.gov',
        allow_pen_paper: true,
        allow_external_applications: true,
        allowed_external_applications: 'ChemDraw',
        allow_additional: true,
        allowed_additional: 'a periodic table',
        upload_answers: true,
        for_reviewing: true,
        global_proctoring: true,
        global_reviewing: true,
        live_id_check: true,
        restrictions: 'One toilet break of at most 5 minutes.',
        terms: 'I work alone and keep my camera on.',
        archived: false,
        comanager_ids: [],
        user_id: admin.id,
      };
      for (const [field, value] of Object.entries(expected)) {
        assert.deepEqual(exam[field], value, `${field} as stored`);
      }
      // Opened again, the form shows the stored window in the viewer's zone.
      await page.reload();
      assert.equal(await page.getByLabel('Window opens').inputValue(), '2027-03-15T09:30');
      assert.equal(
        await page.getByLabel('Which textbooks').inputValue(),
        'Clayden Organic Chemistry, own notes',
      );
      await page.context().close();
    });

    it('edits, shows a refusal next to the field it names, and moves the status', async () => {
      const page = await amsterdamPage(admin);
      await page.goto(`${world.baseUrl}/console/exams/${examId}`);
      await page.getByLabel('Exam name (required)').waitFor();
      await page.getByLabel('Exam name (required)').fill('Organic chemistry — resit');
      await page.getByLabel('Window closes').fill('2027-03-15T08:00');
      await page.getByRole('button', { name: 'Save settings' }).click();

      const fieldError = page.locator('#exam-end-error');
      await fieldError.waitFor();
      assert.match(await fieldError.innerText(), /Window closes must be after “Window opens”/);
      assert.equal(await page.getByLabel('Window closes').getAttribute('aria-invalid'), 'true');
      assert.match(
        String(await page.getByLabel('Window closes').getAttribute('aria-describedby')),
        /exam-end-error/,
      );
      const summary = page.getByRole('alert');
      assert.match(
        await summary.innerText(),
        /Not saved: Window closes must be after .*Correct the marked field/,
      );
      // The focus went to the refused field.
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'exam-end');
      await checkScreen(page, `exam-refused-${dialect}`);
      assert.equal((await storedExam(examId)).name, 'Organic chemistry — final');

      await page.getByLabel('Window closes').fill('2027-03-15T12:30');
      await page.getByLabel('Webcam and microphone').uncheck();
      await page.getByRole('button', { name: 'Save settings' }).click();
      // "Saved." is announced next to the button, which keeps the focus, both in view.
      const saved = page.locator('form .save [role="status"]').filter({ hasText: 'Saved.' });
      await saved.waitFor();
      assert.equal(await saved.getAttribute('aria-live'), 'polite');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), 'Save settings');
      assert.equal(
        await saved.evaluate((region) => {
          const box = region.getBoundingClientRect();
          return box.top >= 0 && box.bottom <= window.innerHeight;
        }),
        true,
      );
      await checkScreen(page, `exam-saved-${dialect}`);
      assert.equal(await page.locator('#exam-end-error').count(), 0);
      let exam = await storedExam(examId);
      assert.equal(exam.name, 'Organic chemistry — resit');
      assert.equal(exam.end_time, '2027-03-15T11:30:00.000Z');
      assert.equal(exam.web_cam, false);
      assert.equal(exam.allowed_websites, 'wikipedia.org, pubchem.ncbi.nlm.nih.gov');

      await page.getByRole('button', { name: 'Publish' }).click();
      await page.getByText('Saved. The exam is open.').waitFor();
      assert.equal((await storedExam(examId)).status, 'open');

      await page.getByRole('button', { name: 'Close exam' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await checkScreen(page, `exam-close-confirm-${dialect}`);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });
      assert.equal((await storedExam(examId)).status, 'open');
      await page.getByRole('button', { name: 'Close exam' }).click();
      await dialog.getByRole('button', { name: 'Close exam' }).click();
      await page.getByText('Saved. The exam is closed.').waitFor();
      assert.equal((await storedExam(examId)).status, 'closed');

      await page.getByRole('button', { name: 'Reopen' }).click();
      await page.getByText('Saved. The exam is open again.').waitFor();
      await page.getByRole('button', { name: 'Archive', exact: true }).click();
      await page.getByText('Saved. The exam is archived.').waitFor();
      exam = await storedExam(examId);
      assert.equal(exam.status, 'open');
      assert.equal(exam.archived, true);
      await page.getByRole('button', { name: 'Unarchive' }).click();
      await page.getByText('Saved. The exam is no longer archived.').waitFor();
      assert.equal((await storedExam(examId)).archived, false);
      await page.context().close();
    });

    it('adds and removes a co-manager chosen among the institute’s users', async () => {
      const page = await amsterdamPage(admin);
      await page.goto(`${world.baseUrl}/console/exams/${examId}`);
      const choice = page.getByLabel('Add a co-manager');
      await choice.locator('option', { hasText: colleague.email }).waitFor({ state: 'attached' });
      // Only teachers and administrators are offered; the auditor is not.
      assert.equal(await choice.locator('option', { hasText: auditor.email }).count(), 0);
      await choice.selectOption({ value: String(colleague.id) });
      await page.getByRole('button', { name: 'Add co-manager' }).click();
      await page.getByText(/Saved\. .* is now a co-manager\./).waitFor();
      const listed = page.locator('ul.comanagers li');
      await listed.filter({ hasText: colleague.email }).waitFor();
      assert.deepEqual((await storedExam(examId)).comanager_ids, [colleague.id]);
      await checkScreen(page, `exam-comanagers-${dialect}`);

      await listed.getByRole('button', { name: new RegExp(`Remove .*${colleague.email}`) }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('button', { name: 'Remove co-manager' }).click();
      await page.getByText(/is no longer a co-manager\./).waitFor();
      await page.getByText('No co-managers yet.').waitFor();
      assert.deepEqual((await storedExam(examId)).comanager_ids, []);
      await page.context().close();
    });

    it('asks before saving a recorded exam that records nothing, and saves it only when told to', async () => {
      const page = await amsterdamPage(admin);
      await page.goto(`${world.baseUrl}/console/exams/new`);
      await page.getByLabel('Exam name (required)').fill('Oral exam — nothing recorded');
      await page.getByLabel('Time limit in minutes').fill('20');
      await page.getByLabel('Webcam and microphone').uncheck();
      await page.getByLabel('Screen', { exact: true }).uncheck();
      await page.getByLabel('Send recordings to reviewers').uncheck();
      await page.getByRole('button', { name: 'Create exam' }).click();

      // The confirm step, in the page: named, described, and focused so a screen reader reads it.
      const step = page.getByRole('group', { name: 'Save an exam that records nothing to review?' });
      await step.waitFor();
      assert.match(
        await step.innerText(),
        /Nothing is recorded: webcam, screen and phone camera are all off/,
      );
      assert.match(await step.innerText(), /not sent to reviewers/);
      assert.equal(await step.evaluate((element) => element === document.activeElement), true);
      assert.match(String(await step.getAttribute('aria-describedby')), /recording-warning-text/);
      await checkScreen(page, `exam-records-nothing-${dialect}`);
      assert.match(page.url(), /\/console\/exams\/new$/);

      // Going back puts the focus on the first recording setting; nothing was created.
      await step.getByRole('button', { name: 'Back to what is recorded' }).click();
      await step.waitFor({ state: 'detached' });
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'exam-web-cam');
      const listing = async () =>
        object(
          (
            await admin.client.v3('GET', '/exams', {
              filter: JSON.stringify({ name: { eq: 'Oral exam — nothing recorded' } }),
            })
          ).json,
          'body',
        ).exams as Json[];
      assert.deepEqual(await listing(), []);

      // Asked again, "Save anyway" creates it as shown.
      await page.getByRole('button', { name: 'Create exam' }).click();
      await step.getByRole('button', { name: 'Save anyway' }).click();
      await page.waitForURL(/\/console\/exams\/\d+\?created=1$/);
      const stored = (await listing())[0];
      assert.ok(stored !== undefined);
      assert.equal(stored.status, 'draft');
      assert.equal(stored.web_cam, false);
      assert.equal(stored.screen_share, false);
      assert.equal(stored.for_reviewing, false);

      // Recording something again saves without the question.
      await page.getByLabel('Screen', { exact: true }).check();
      await page.getByLabel('Send recordings to reviewers').check();
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.locator('form .save [role="status"]').filter({ hasText: 'Saved.' }).waitFor();
      assert.equal(await step.count(), 0);
      assert.equal((await listing())[0]?.screen_share, true);
      await page.context().close();
    });

    it('shows an auditor the settings read-only, and shows the service’s refusal of a create', async () => {
      const page = await amsterdamPage(auditor);
      await page.getByRole('heading', { name: 'Exams', level: 1 }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'New exam' }).count(), 0);
      await page.goto(`${world.baseUrl}/console/exams/${examId}`);
      await page.getByText(/cannot change them/).waitFor();
      assert.equal(await page.getByLabel('Exam name (required)').isDisabled(), true);
      assert.equal(await page.getByLabel('Exam name (required)').inputValue(), 'Organic chemistry — resit');
      assert.equal(await page.getByLabel('Which calculator').isDisabled(), true);
      assert.equal(await page.getByRole('button', { name: 'Save settings' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Delete exam' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Add co-manager' }).count(), 0);
      await checkScreen(page, `exam-read-only-${dialect}`);

      await page.goto(`${world.baseUrl}/console/exams/${examId}/instructions`);
      await page.getByText('Your role cannot change them.').waitFor();
      assert.equal(await page.getByRole('toolbar', { name: 'Formatting' }).count(), 0);
      assert.equal(await page.getByLabel('Choose files to attach').count(), 0);

      // Coming to /exams/new anyway: the service refuses and the page says so.
      await page.goto(`${world.baseUrl}/console/exams/new`);
      await page.getByLabel('Exam name (required)').fill('Not allowed');
      await page.getByLabel('Time limit in minutes').fill('30');
      await page.getByRole('button', { name: 'Create exam' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      assert.match(await alert.innerText(), /Not saved\. You are not allowed to do this/);
      assert.match(page.url(), /\/console\/exams\/new$/);
      await checkScreen(page, `exam-new-refused-${dialect}`);
      const listing = await admin.client.v3('GET', '/exams', {
        filter: JSON.stringify({ name: { eq: 'Not allowed' } }),
      });
      assert.deepEqual(object(listing.json, 'body').exams, []);
      await page.context().close();
    });

    it('writes instructions with two attachments, previews them, and the exam room serves the same', async () => {
      const created = await admin.client.v3('POST', '/exams', {
        name: 'Physics 2',
        type: 'record_review',
        duration_minutes: 60,
      });
      assert.equal(created.status, 201, created.text);
      const physicsId = object(object(created.json, 'body').exam, 'exam').id as number;
      const student = await admin.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: physicsId,
        name: 'Lise Meitner',
        email: `lise-${dialect}@example.org`,
        skip_requirements: true,
      });
      assert.equal(student.status, 201, student.text);
      const token = object(object(student.json, 'body').student, 'student').token as string;

      const page = await amsterdamPage(admin);
      await page.goto(`${world.baseUrl}/console/exams/${physicsId}/instructions`);
      const editor = page.getByRole('textbox', { name: 'Instructions for students' });
      await editor.waitFor();
      await checkScreen(page, `instructions-empty-${dialect}`);

      // Saving nothing: the service's refusal, next to the editor.
      await page.getByRole('button', { name: 'Save instructions' }).click();
      await page.locator('#instructions-error').waitFor();
      assert.equal(await editor.getAttribute('aria-invalid'), 'true');
      assert.match(await page.getByRole('alert').innerText(), /instructions are empty/);

      // Formatted text through the toolbar and the keyboard.
      await editor.click();
      await page.getByRole('button', { name: 'Heading', exact: true }).click();
      await page.keyboard.type('Before you begin');
      await page.keyboard.press('Enter');
      const bold = page.getByRole('button', { name: 'Bold' });
      await bold.click();
      assert.equal(await bold.getAttribute('aria-pressed'), 'true');
      await page.keyboard.type('Read every question first.');
      await bold.click();
      await page.keyboard.type(' Then answer.');
      // Typing raised no error in the page (it once threw effect_update_depth_exceeded on every key).
      assert.deepEqual(pageErrors, []);
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'Bulleted list' }).click();
      await page.keyboard.type('Formulas: ');
      // The toolbar is one Tab stop; arrow keys move inside it.
      const toolbar = page.getByRole('toolbar', { name: 'Formatting' });
      assert.equal(await toolbar.locator('button[tabindex="0"]').count(), 1);
      await toolbar.locator('button[tabindex="0"]').focus();
      await page.keyboard.press('Home');
      await page.keyboard.press('ArrowRight');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Italic');

      // One file through the file input (the keyboard way) …
      await page.getByLabel('Choose files to attach').setInputFiles({
        name: 'formulas.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('E = mc^2\nF = ma\n'),
      });
      const rows = page.locator('section[aria-labelledby="attachments-heading"] tbody tr');
      await rows.filter({ hasText: 'formulas.txt' }).waitFor();
      // … and one dropped on the drop zone.
      const dataTransfer = await page.evaluateHandle(() => {
        const transfer = new DataTransfer();
        const pdf = '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n';
        transfer.items.add(new File([pdf], 'constants.pdf', { type: 'application/pdf' }));
        return transfer;
      });
      await page.locator('.drop-zone').dispatchEvent('dragover', { dataTransfer });
      await page.locator('.drop-zone').dispatchEvent('drop', { dataTransfer });
      await rows.filter({ hasText: 'constants.pdf' }).waitFor();
      assert.match(await rows.filter({ hasText: 'formulas.txt' }).innerText(), /Text[\s\S]*16 bytes/);
      assert.match(await rows.filter({ hasText: 'constants.pdf' }).innerText(), /PDF/);
      await checkScreen(page, `instructions-attachments-${dialect}`);

      const listing = await admin.client.v3('GET', '/exams/:exam_id/attachments', { exam_id: physicsId });
      const attachments = object(listing.json, 'body').attachments as Json[];
      assert.equal(attachments.length, 2);
      const formulas = attachments.find((item) => item.file_name === 'formulas.txt');
      assert.ok(formulas !== undefined);
      const placeholder = formulas.placeholder as string;

      // The placeholder goes where the cursor was: at the end of the list item.
      await page.getByRole('button', { name: 'Insert in text: formulas.txt' }).click();
      assert.match(await editor.innerText(), new RegExp(`Formulas: \\[attachment:${String(formulas.id)}\\]`));
      await page.getByRole('button', { name: 'Save instructions' }).click();
      await page.locator('form .status-message').filter({ hasText: 'Saved.' }).waitFor();

      const documents = await admin.client.v3('GET', '/exams/:exam_id/documents', { exam_id: physicsId });
      const stored = (object(documents.json, 'body').documents as Json[])[0];
      assert.ok(stored !== undefined);
      assert.equal(
        stored.exam_content,
        '<h2>Before you begin</h2><p><strong>Read every question first.</strong> Then answer.</p>' +
          `<ul><li><p>Formulas: ${placeholder}</p></li></ul>`,
      );

      await page.getByRole('button', { name: 'Preview as the candidate will see it' }).click();
      const preview = page.locator('#candidate-preview');
      const link = preview.getByRole('link', { name: 'formulas.txt' });
      await link.waitFor();
      assert.match(String(await link.getAttribute('href')), /\/files\/\d+\?expires=/);
      assert.equal(await link.getAttribute('target'), '_blank');
      assert.equal(await preview.locator('strong').innerText(), 'Read every question first.');
      await checkScreen(page, `instructions-preview-${dialect}`);

      // The candidate's room, once started, serves the same document with the link.
      const started = await httpRequest({ url: `${world.baseUrl}/api/room/${token}/start`, method: 'POST' });
      assert.equal(started.status, 200, started.text);
      const view = await httpRequest({ url: `${world.baseUrl}/api/room/${token}` });
      const roomDocument = object(object(view.json, 'body').document, 'document');
      const roomHtml = roomDocument.content_html as string;
      assert.match(roomHtml, /<strong>Read every question first\.<\/strong>/);
      assert.match(roomHtml, /<a href="[^"]*\/files\/\d+\?[^"]*"[^>]*>formulas\.txt<\/a>/);
      assert.equal((roomDocument.attachments as Json[]).length, 2);
      // The preview's markup is the room's, but for the one-minute download addresses.
      const previewHtml = await preview.locator('.document').innerHTML();
      // (Svelte's empty comment anchors aside.)
      const withoutAddresses = (html: string) =>
        html
          .replace(/<!---->/g, '')
          .replace(/href="[^"]*"/g, 'href=""')
          .replace(/&amp;/g, '&');
      assert.equal(withoutAddresses(previewHtml.trim()), withoutAddresses(roomHtml));

      // Deleting the file takes its placeholder out of the text, here and in the service.
      await page.getByRole('button', { name: 'Delete formulas.txt' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete file' }).click();
      await page.getByText(/Deleted formulas\.txt/).waitFor();
      assert.doesNotMatch(await editor.innerText(), /\[attachment:/);
      const after = await admin.client.v3('GET', '/exams/:exam_id/documents', { exam_id: physicsId });
      assert.doesNotMatch(
        String((object(after.json, 'body').documents as Json[])[0]?.exam_content),
        /\[attachment:/,
      );
      assert.deepEqual(cspViolations, []);
      assert.deepEqual(pageErrors, []);
      await page.context().close();
    });

    it('warns before editing a document with markup the editor cannot hold, and previews it as written', async () => {
      const created = await admin.client.v3('POST', '/exams', {
        name: 'Statistics',
        type: 'demo',
        use_duration: false,
      });
      assert.equal(created.status, 201, created.text);
      const id = object(object(created.json, 'body').exam, 'exam').id as number;
      const document = await admin.client.v3('POST', '/exams/:exam_id/documents', {
        exam_id: id,
        exam_content: '<p>Use this table:</p><table><tr><th scope="col">z</th><td>1.96</td></tr></table>',
      });
      assert.equal(document.status, 201, document.text);
      const page = await amsterdamPage(admin);
      await page.goto(`${world.baseUrl}/console/exams/${id}/instructions`);
      await page.getByText('saving here would remove them').waitFor();
      await page.getByRole('button', { name: 'Preview as the candidate will see it' }).click();
      await page.locator('#candidate-preview table').getByText('1.96').waitFor();
      await checkScreen(page, `instructions-beyond-editor-${dialect}`);
      await page.context().close();
    });

    it('is readable at 390 px wide', async () => {
      const page = await amsterdamPage(admin, { width: 390, height: 844 });
      await page.goto(`${world.baseUrl}/console/exams/${examId}`);
      await page.getByLabel('Exam name (required)').waitFor();
      await page.getByLabel('Add a co-manager').locator('option', { hasText: colleague.email }).waitFor({
        state: 'attached',
      });
      await assertNoHorizontalScroll(page, 'exam settings at 390 px');
      await checkScreen(page, `exam-settings-390px-${dialect}`);
      await page.goto(`${world.baseUrl}/console/exams/new`);
      await page.getByLabel('Exam name (required)').waitFor();
      await assertNoHorizontalScroll(page, 'new exam at 390 px');
      await checkScreen(page, `exam-new-390px-${dialect}`);
      const physics = await admin.client.v3('GET', '/exams', {
        filter: JSON.stringify({ name: { eq: 'Physics 2' } }),
      });
      const physicsId = (object(physics.json, 'body').exams as Json[])[0]?.id as number;
      await page.goto(`${world.baseUrl}/console/exams/${physicsId}/instructions`);
      await page.getByRole('textbox', { name: 'Instructions for students' }).waitFor();
      await page.getByRole('button', { name: 'Preview as the candidate will see it' }).click();
      await page.locator('#candidate-preview .document').waitFor();
      await assertNoHorizontalScroll(page, 'instructions at 390 px');
      await checkScreen(page, `instructions-390px-${dialect}`);
      await page.context().close();
    });
  });
}
