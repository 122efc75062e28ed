/**
 * The step's "must show", end to end: a new administrator whose password was set with
 * `invigil user set-password` signs in at /console and runs a whole exam there without one signed
 * API call: create it, write instructions with an attachment, import students from a CSV, send
 * the emails, watch the monitor while a candidate (a second browser context, following the link
 * from the real email) starts, end the candidate's exam, export the zip. The background worker's
 * share (delivering mail, building the zip) is run by the test, as a worker process would.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../helpers/cli.ts';
import { browserDialects } from '../helpers/server.ts';
import { digestZip } from '../helpers/zip-archive.ts';
import { runDueJobs } from '../mail/support.ts';
import { checkScreen, newPage, signIn, startConsoleWorld, type ConsoleWorld } from './console/support.ts';
import { acceptPrivacy } from './privacy-support.ts';

const PASSWORD = 'a long passphrase for the exam office';

for (const dialect of browserDialects(import.meta.url)) {
  describe(`a whole exam run from the console, no signed call [${dialect}]`, () => {
    let world: ConsoleWorld;
    let adminId: number;
    const email = 'office@example.org';

    before(async () => {
      world = await startConsoleWorld(dialect);
      // As the README's first user: created with the CLI, password from standard input.
      const created = await world.server.app.services.users.create(world.instituteId, {
        email,
        name: 'Exam Office',
        role: 'administrator',
      });
      adminId = created.user.id;
      const env = {
        DATABASE_URL: world.server.database.url,
        DATA_DIR: world.server.database.dataDir,
        LOG_LEVEL: 'silent',
      };
      const set = await runCli(['user', 'set-password', '--id', String(adminId)], env, `${PASSWORD}\n`);
      assert.equal(set.code, 0, set.stderr);
    });

    after(async () => {
      await world?.close();
    });

    it('creates, prepares, sends, watches, ends and exports an exam in the browser', async () => {
      const page = await newPage(world);
      const signedRequests: string[] = [];
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.searchParams.has('signature') || request.headers().authorization !== undefined) {
          signedRequests.push(url.pathname);
        }
      });
      await signIn(page, world.baseUrl, email, PASSWORD);

      // 1. The exam.
      await page.getByRole('link', { name: 'New exam' }).click();
      await page.getByRole('heading', { name: 'New exam', level: 1 }).waitFor();
      await page.getByLabel('Exam name (required)').fill('Statistics 101 — final');
      await page.getByLabel('Exam type').selectOption('record_review');
      await page.getByLabel('Status').selectOption('open');
      await page.getByLabel('Time limit in minutes').fill('90');
      // A record-and-review exam starts with webcam, screen and reviewers ticked; this one records
      // the webcam only, so the candidate below has no screen to share.
      await page.getByLabel('Webcam and microphone').check();
      await page.getByLabel('Screen', { exact: true }).uncheck();
      await page.getByLabel('Students hand in answer files').check();
      await page.getByRole('button', { name: 'Create exam' }).click();
      await page.waitForURL(/\/console\/exams\/\d+\?created=1$/);
      const examId = Number(/\/exams\/(\d+)/.exec(page.url())?.[1]);
      assert.ok(examId > 0);

      // 2. Instructions with an attachment and its placeholder.
      await page.getByRole('link', { name: 'Instructions', exact: true }).click();
      const editor = page.getByRole('textbox', { name: 'Instructions for students' });
      await editor.waitFor();
      await editor.click();
      await page.keyboard.type('Answer all questions. The formula sheet is here: ');
      await page.getByLabel('Choose files to attach').setInputFiles({
        name: 'formulas.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('mean = sum / n\n'),
      });
      await page.getByRole('button', { name: 'Insert in text: formulas.txt' }).waitFor();
      await page.getByRole('button', { name: 'Insert in text: formulas.txt' }).click();
      await page.getByRole('button', { name: 'Save instructions' }).click();
      await page.locator('form .status-message').filter({ hasText: 'Saved.' }).waitFor();

      // 3. Students from a CSV.
      await page.getByRole('link', { name: 'Students', exact: true }).click();
      await page.getByRole('link', { name: 'Import from a file' }).click();
      const csv = [
        'First name,Surname,E-mail',
        'Ada,Lovelace,ada@example.org',
        'Charles,Babbage,charles@example.org',
        'Grace,Hopper,grace@example.org',
      ].join('\r\n');
      await page.getByLabel('Student list file (CSV or TSV)').setInputFiles({
        name: 'students.csv',
        mimeType: 'text/csv',
        buffer: Buffer.from(csv),
      });
      await page.getByRole('button', { name: 'Check 3 rows' }).click();
      await page.getByText('All 3 rows are valid and ready to import.').waitFor();
      await page.getByRole('button', { name: 'Import 3 students' }).click();
      await page.getByText('Imported 3 students from students.csv.').waitFor();

      // 4. The emails, previewed, then sent and delivered.
      await page.getByRole('link', { name: 'Send exam emails' }).click();
      await page.getByRole('heading', { name: 'Preview' }).waitFor();
      await page.getByRole('button', { name: 'Send 3 exam emails' }).click();
      await page.getByRole('button', { name: 'Send now' }).click();
      await page.getByText('3 exam emails were written to the outbox.', { exact: false }).waitFor();
      await runDueJobs(world.server, dialect, world.server.app.clock);
      // The page follows each email's delivery from the outbox: delivered, since SMTP is set.
      await page.getByText('Email delivered').first().waitFor();
      const mail = world.smtp.messages.find((message) => message.to.includes('ada@example.org'));
      assert.ok(mail !== undefined, 'the exam-link email reached the SMTP server');
      const roomLink = new RegExp(`${world.baseUrl}/room/[0-9a-f]{32}`).exec(mail.text ?? '')?.[0];
      assert.ok(roomLink !== undefined, mail.text);

      // 5. The monitor while a candidate starts, from the link in the email.
      await page.getByRole('link', { name: 'Live monitor', exact: true }).click();
      await page.getByText('Live: changes appear as they happen.').waitFor();
      const row = page.locator('tbody tr', { hasText: 'Ada Lovelace' });
      const candidate = await (await world.chromium.newContext()).newPage();
      await candidate.goto(roomLink);
      await candidate.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(candidate);
      await row.getByText('In setup').waitFor();
      await candidate.getByRole('button', { name: 'Test camera and microphone' }).click();
      await candidate.getByText('Camera: passed').waitFor();
      await row.getByText('Camera: passed').waitFor();
      await candidate.getByRole('button', { name: 'Measure your connection' }).click();
      await candidate.getByText(/Connection speed: (passed|failed)/).waitFor();
      await candidate.getByRole('button', { name: 'Take a photo of your ID card' }).click();
      await candidate.locator('#id_card-state', { hasText: 'Photo saved.' }).waitFor();
      await candidate.getByRole('button', { name: 'Take a photo of your face' }).click();
      await candidate.locator('#face_photo-state', { hasText: 'Photo saved.' }).waitFor();
      await candidate.getByRole('button', { name: 'Start the exam' }).click();
      await candidate.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      await row.getByText('Exam started').waitFor();
      // (axe and the screenshot of the monitor are in console-students: its open stream never lets the
      // page go network-idle, which checkScreen waits for.)

      // 6. The office ends Ada's exam from the student table.
      await page.getByRole('link', { name: 'Students', exact: true }).click();
      await page.getByRole('button', { name: 'End exam of Ada Lovelace' }).click();
      await page.getByRole('button', { name: 'End exam now' }).click();
      await page
        .locator('tbody tr', { hasText: 'Ada Lovelace' })
        .getByText(/finished/i)
        .waitFor();
      await candidate.context().close();

      // 7. The export: prepared by the worker, downloaded, opened.
      await page.getByRole('link', { name: 'Export', exact: true }).click();
      await page.getByRole('button', { name: 'Prepare the archive' }).click();
      await runDueJobs(world.server, dialect, world.server.app.clock);
      await page.getByText('The archive is ready.').waitFor({ timeout: 15_000 });
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download the archive (zip)' }).click(),
      ]);
      const entries = await digestZip(await download.path());
      assert.match(entries.get('students.csv')?.text ?? '', /Ada Lovelace/);
      await checkScreen(page, `whole-exam-export-${dialect}`);

      assert.deepEqual(signedRequests, [], 'no request of the console was signed');
      await page.context().close();
    });
  });
}
