/**
 * Retention in the console, in Chromium: the administration's Retention tab (the institute's period,
 * its retention per kind of data, in English and Arabic, the purge log with its kind filter, and
 * what it says while nothing was purged), and the legal hold
 * on a student's edit screen (placing one with a reason after a confirmation, removing it, and a
 * session whose media were purged). A teacher is not offered the hold. Every screen gets axe and a
 * screenshot, and both screens are checked at 390 px.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { DAY_MS } from '../../src/domain/retention/retention.ts';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
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

type Json = Record<string, unknown>;

/** The size of the upload the purged session hands in: 1.5 MiB, shown as "1.5 MB". */
const UPLOAD_BYTES = 1.5 * 1024 * 1024;

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console retention and legal hold in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let admin: StaffUser;
    let teacher: StaffUser;
    let examId: number;
    /** Ended long ago with an uploaded file: the sweep purges it. */
    let purgedId: number;
    /** Still running: the one whose hold is placed and removed. */
    let heldId: number;
    let page: Page;

    async function addStudent(name: string): Promise<number> {
      const answer = await teacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name,
        email: `${crypto.randomUUID()}@example.org`,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').student, 'student').id as number;
    }

    /** Gives the session an uploaded file and an end `daysAgo` days in the past, as the room would. */
    async function endWithUpload(sessionId: number, daysAgo: number): Promise<void> {
      const { files } = world.server.app.services;
      const { db } = world.server.app.database;
      const upload = await files.keepStream(Readable.from([Buffer.alloc(UPLOAD_BYTES, 7)]), {
        originalName: 'answers.pdf',
        contentType: 'application/pdf',
        instituteId: world.instituteId,
      });
      const now = Date.now();
      await db
        .insertInto('session_files')
        .values({
          student_session_id: sessionId,
          kind: 'upload',
          file_id: upload.id,
          sequence: 0,
          created_at: now,
        })
        .execute();
      await db
        .updateTable('student_sessions')
        .set({ status: 'exam_finished', end_time: now - daysAgo * DAY_MS })
        .where('id', '=', sessionId)
        .execute();
    }

    async function legalHold(sessionId: number): Promise<Json> {
      const answer = await admin.client.v3('GET', '/student_sessions/:id/legal_hold', { id: sessionId });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').legal_hold, 'legal_hold');
    }

    before(async () => {
      world = await startConsoleWorld(dialect);
      admin = await world.staff('administrator');
      teacher = await world.staff('teacher');
      const created = await teacher.client.v3('POST', '/exams', {
        name: 'Medieval history',
        type: 'record_review',
        duration_minutes: 60,
      });
      assert.equal(created.status, 201, created.text);
      examId = object(object(created.json, 'body').exam, 'exam').id as number;
      purgedId = await addStudent('Hildegard Bingen');
      heldId = await addStudent('Christine Pizan');
      await endWithUpload(purgedId, 40);
      page = await signedInPage(world, admin);
    });

    after(async () => {
      await world?.close();
    });

    it('explains when purges happen while the log is empty', async () => {
      await page.goto(`${world.baseUrl}/console/admin`);
      await page.getByRole('heading', { level: 1, name: /Institute settings/ }).waitFor();
      const tabs = page.getByRole('navigation', { name: 'Administration' });
      await tabs.getByRole('link', { name: 'Retention' }).click();
      await page.getByRole('heading', { level: 1, name: /Administration · Retention/ }).waitFor();
      await page.getByText('Session media are kept for ever.').waitFor();
      await page.getByText(/Nothing was purged: the institute keeps session media for ever/).waitFor();
      assert.equal(await tabs.getByRole('link', { name: 'Retention' }).getAttribute('aria-current'), 'page');
      await checkScreen(page, `retention-empty-${dialect}`);
    });

    it('lists what the sweep purged, with sizes a person reads, filtered by kind', async () => {
      const period = await admin.client.v3('PUT', '/institutes/:id', {
        id: world.instituteId,
        session_retention_period: 30,
      });
      assert.equal(period.status, 200, period.text);
      await page.reload();
      await page.getByText('Session media are kept for 30 days').waitFor();
      await page.getByText(/Nothing was purged yet\. Media go once a session ended/).waitFor();

      const outcome = await world.server.app.services.retention.sweep();
      assert.equal(outcome.failed, 0);
      assert.equal(outcome.sessions, 1);

      await page.reload();
      const row = page.locator('table.purges tbody tr').filter({ hasText: `Session ${purgedId}` });
      await row.waitFor();
      assert.equal(await page.locator('table.purges tbody tr').count(), 1, 'one kind went: the upload');
      assert.equal(await row.locator('td[data-label="What"]').innerText(), 'Uploaded files');
      assert.equal(await row.locator('td[data-label="Files"]').innerText(), '1 file');
      assert.equal(await row.locator('td[data-label="Size"]').innerText(), '1.5 MB');
      assert.match(await row.locator('td[data-label="When"]').innerText(), /retention period 30 days/);
      await page.getByText('Page 1 of 1 · 1 in all').waitFor();
      await checkScreen(page, `retention-log-${dialect}`);

      await page
        .getByRole('form', { name: 'Filter the purge log' })
        .getByLabel('Kind')
        .selectOption({ label: 'ID card photos' });
      await page.getByText('Nothing of this kind was purged.').waitFor();
      assert.match(page.url(), /kind=id_photo/);
      await checkScreen(page, `retention-filtered-${dialect}`);
      await page
        .getByRole('form', { name: 'Filter the purge log' })
        .getByLabel('Kind')
        .selectOption({ label: 'Uploaded files' });
      await row.waitFor();

      // The session link leads to the student's edit screen, which says the media went.
      await row.getByRole('link', { name: `Session ${purgedId}` }).click();
      await page.getByRole('heading', { level: 1, name: /Edit student/ }).waitFor();
      await page.getByText(/^Media purged on /).waitFor();
      await page.getByText('Retention has already removed this session’s media.').waitFor();
      const purged = page.locator('.legal-hold table.purges tbody tr');
      await purged.filter({ hasText: 'Uploaded files' }).waitFor();
      assert.match(await purged.first().innerText(), /1\.5 MB/);
      await checkScreen(page, `legal-hold-purged-${dialect}`);
    });

    it('sets the retention per kind, naming a refused field, in English and in Arabic', async () => {
      await page.goto(`${world.baseUrl}/console/admin/retention`);
      const form = page.getByRole('form', { name: 'Retention per kind of data' });
      await form.waitFor();
      const idPhoto = form.getByLabel('ID card photos (days)');
      await idPhoto.waitFor();
      assert.equal(await idPhoto.inputValue(), '30', 'the default review period');
      await form.getByText(/Also deleted 24 hours after the verdict is final/).waitFor();
      const face = form.getByLabel('Face photos (days)');
      assert.equal(await face.inputValue(), '', 'follows the retention period');
      await form.getByText('Now kept 30 days. Default: the retention period.').first().waitFor();

      await face.fill('0');
      await form.getByRole('button', { name: 'Save retention' }).click();
      await form.getByText('must be greater than or equal to 1').waitFor();
      assert.equal(await face.getAttribute('aria-invalid'), 'true');
      const unchanged = await admin.client.v3('GET', '/institutes/:id/retention_policies', {
        id: world.instituteId,
      });
      assert.equal(unchanged.status, 200, unchanged.text);
      const before = object(unchanged.json, 'body').retention_policies as Json[];
      assert.equal(before.find((policy) => policy.kind === 'face_photo')?.setting, null);

      await face.fill('7');
      await form.getByRole('button', { name: 'Save retention' }).click();
      await form.getByRole('status').filter({ hasText: 'Retention saved.' }).waitFor();
      await form.getByText('Now kept 7 days.', { exact: false }).waitFor();
      const saved = await admin.client.v3('GET', '/institutes/:id/retention_policies', {
        id: world.instituteId,
      });
      const policies = object(saved.json, 'body').retention_policies as Json[];
      assert.deepEqual(
        policies.map((policy) => [policy.kind, policy.days]),
        [
          ['id_photo', 30],
          ['face_photo', 7],
          ['recording', 30],
          ['upload', 30],
          ['incident', 30],
        ],
      );
      await checkScreen(page, `retention-settings-${dialect}`);

      await page.goto(`${world.baseUrl}/console/admin/retention?lang=ar`);
      const arabic = page.getByRole('form', { name: 'الاحتفاظ حسب نوع البيانات' });
      await arabic.getByLabel('صور الوجه (بالأيام)').waitFor();
      assert.equal(await page.evaluate(() => document.documentElement.dir), 'rtl');
      await page.locator('table.purges tbody tr').first().waitFor();
      await checkScreen(page, `retention-settings-ar-${dialect}`);
      await page.goto(`${world.baseUrl}/console/admin/retention?lang=en`);
      await form.waitFor();
    });

    it('says in the review when the ID photo went and who checked the ID', async () => {
      const { files } = world.server.app.services;
      const { db } = world.server.app.database;
      const photo = await files.keepStream(Readable.from([Buffer.from('an ID card')]), {
        originalName: 'id.png',
        contentType: 'image/png',
        instituteId: world.instituteId,
      });
      const now = Date.now();
      const reviewedId = await addStudent('Anna Komnene');
      await db
        .updateTable('student_sessions')
        .set({
          status: 'exam_finished',
          end_time: now - 3 * DAY_MS,
          id_card_file_id: photo.id,
          id_card_file_name: 'id.png',
          id_card_content_type: 'image/png',
          id_card_file_size: photo.size,
        })
        .where('id', '=', reviewedId)
        .execute();
      // A final verdict two days ago: the ID photo goes 24 hours after it, before its 30 days.
      await db
        .insertInto('session_reviews')
        .values({
          student_session_id: reviewedId,
          previous_review_id: 0,
          verdict: 'passed',
          comment: null,
          reviewer_id: admin.id,
          reviewer_name: 'Theodora Reviewer',
          second_review: 'not_required',
          created_at: now - 2 * DAY_MS,
        })
        .execute();
      assert.equal((await world.server.app.services.retention.sweep()).failed, 0);

      await page.goto(`${world.baseUrl}/console/sessions/${reviewedId}/review`);
      const identity = page.getByRole('complementary', { name: 'Identity' });
      await identity.getByText(/^Deleted on .* under the retention rule\.$/).waitFor();
      await identity.getByText(/^The ID was checked by Theodora Reviewer on /).waitFor();
      await checkScreen(page, `retention-review-identity-${dialect}`);

      // A session whose recordings retention removed says so instead of "nothing was recorded".
      await page.goto(`${world.baseUrl}/console/sessions/${purgedId}/review`);
      await page.getByText(/^The recordings were deleted on .* under the retention rule\.$/).waitFor();
    });

    it('places a legal hold with a reason after a confirmation, and removes it', async () => {
      await page.goto(`${world.baseUrl}/console/exams/${examId}/students/${heldId}/edit`);
      const section = page.getByRole('region', { name: 'Legal hold' });
      await section.getByText('Not held').waitFor();
      await section.getByText('Nothing of this session was purged.').waitFor();
      await checkScreen(page, `legal-hold-none-${dialect}`);

      // A hold needs a reason: nothing is sent without one.
      await section.getByRole('button', { name: 'Place legal hold' }).click();
      await section.getByText('Give a reason for the hold').waitFor();
      assert.equal(
        await section.getByLabel('Reason for the hold', { exact: true }).getAttribute('aria-invalid'),
        'true',
      );
      assert.equal((await legalHold(heldId)).held, false);

      await section.getByLabel('Reason for the hold', { exact: true }).fill('Appeal 2025-17');
      await section.getByRole('button', { name: 'Place legal hold' }).click();
      const dialog = page.getByRole('dialog', { name: 'Place a legal hold?' });
      await dialog.waitFor();
      await checkScreen(page, `legal-hold-confirm-${dialect}`);
      // Cancelling changes nothing.
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });
      assert.equal((await legalHold(heldId)).held, false);

      await section.getByRole('button', { name: 'Place legal hold' }).click();
      await dialog.getByRole('button', { name: 'Place legal hold' }).click();
      await section.getByRole('status').filter({ hasText: 'Legal hold placed.' }).waitFor();
      await section.getByText('Held', { exact: true }).waitFor();
      await section.getByText(/Placed by you on /).waitFor();
      await section.getByText('Appeal 2025-17').waitFor();
      const placed = await legalHold(heldId);
      assert.equal(placed.held, true);
      assert.equal(placed.reason, 'Appeal 2025-17');
      assert.equal(placed.set_by, admin.id);
      await checkScreen(page, `legal-hold-held-${dialect}`);

      // The hold survives a reload, and the sweep leaves a held session alone.
      await endWithUpload(heldId, 45);
      const outcome = await world.server.app.services.retention.sweep();
      assert.equal(outcome.sessions, 0);
      await page.reload();
      await section.getByText('Held', { exact: true }).waitFor();

      await section.getByRole('button', { name: 'Remove legal hold' }).click();
      const removeDialog = page.getByRole('dialog', { name: 'Remove the legal hold?' });
      await removeDialog.getByText(/cannot be undone/).waitFor();
      await removeDialog.getByRole('button', { name: 'Remove legal hold' }).click();
      await section.getByRole('status').filter({ hasText: 'Legal hold removed.' }).waitFor();
      await section.getByText('Not held').waitFor();
      await section.getByText(/Removed by you on .*without a reason/).waitFor();
      assert.equal((await legalHold(heldId)).held, false);
    });

    it('does not offer the legal hold to a teacher', async () => {
      const teacherPage = await signedInPage(world, teacher);
      await teacherPage.goto(`${world.baseUrl}/console/exams/${examId}/students/${heldId}/edit`);
      await teacherPage.getByLabel('Name', { exact: true }).waitFor();
      await teacherPage.waitForLoadState('networkidle');
      assert.equal(await teacherPage.getByRole('heading', { name: 'Legal hold' }).count(), 0);
      assert.equal(await teacherPage.getByRole('button', { name: /legal hold/ }).count(), 0);
      await checkScreen(teacherPage, `legal-hold-teacher-${dialect}`);
      await teacherPage.context().close();
    });

    it('is readable at 390 px wide', async () => {
      const phone = await newPage(world, { width: 390, height: 844 });
      await signIn(phone, world.baseUrl, admin.email);
      for (const [path, name, ready] of [
        ['/admin/retention', 'retention', `Session ${purgedId}`],
        [`/exams/${examId}/students/${purgedId}/edit`, 'legal-hold', 'Media purged on'],
      ] as const) {
        await phone.goto(`${world.baseUrl}/console${path}`);
        await phone.getByText(ready).first().waitFor();
        await phone.waitForLoadState('networkidle');
        await assertNoHorizontalScroll(phone, `${path} at 390 px`);
        await checkScreen(phone, `${name}-390px-${dialect}`);
      }
      await phone.context().close();
    });
  });
}
