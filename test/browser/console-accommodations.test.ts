/**
 * Accommodations in the console, in Chromium (docs/accommodations.md): the student form's
 * "Accommodations" fieldset (a refused value shown on its field, then saved), the students list's
 * marker, readiness column and filter, the bulk edit of two students (a refusal listed per student,
 * then saved), the practice reminder, the exam settings' two checkboxes, the proctor wall marking an
 * accommodated candidate and showing a rest break taken through the room, and the review screen
 * listing the accommodations beside the incidents, the break read as a break. Each screen passes axe
 * and is saved as a screenshot, in English and in Arabic (right to left).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import type { Scalar } from '../helpers/signing.ts';
import {
  checkScreen,
  createExam,
  signedInPage,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
  v3Call,
} from './console/support.ts';

type Json = Record<string, unknown>;

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console accommodations in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let admin: StaffUser;
    let page: Page;
    let examId: number;
    const ids: Record<string, number> = {};

    const v3 = (method: string, route: string, params: Record<string, Scalar>, status = 200) =>
      v3Call(admin, method, route, params, status);

    async function addStudent(exam: number, name: string, extra: Record<string, Scalar> = {}): Promise<Json> {
      const body = await v3(
        'POST',
        '/exams/:exam_id/student_sessions',
        { exam_id: exam, name, email: `${name.split(' ')[0]?.toLowerCase()}@example.org`, ...extra },
        201,
      );
      return object(body.student, 'student');
    }

    async function studentRecord(id: number): Promise<Json> {
      return object((await v3('GET', '/student_sessions/:id', { id })).student, 'student');
    }

    async function room(token: string, action: string, body?: Json): Promise<void> {
      const answer = await httpRequest({
        url: `${world.baseUrl}/api/room/${token}/${action}`,
        method: 'POST',
        ...(body === undefined
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      assert.equal(answer.status, 200, `${action}: ${answer.text}`);
    }

    /** The students table's row of `name`. */
    const row = (name: string) => page.locator('table.students tbody tr', { hasText: name });

    before(async () => {
      world = await startConsoleWorld(dialect);
      admin = await world.staff('administrator');
      examId = await createExam(admin, 'Statistics', {
        duration_minutes: 30,
        web_cam: true,
        for_reviewing: true,
      });
      for (const name of ['Ada Lovelace', 'Bob Babbage', 'Cleo Curie']) {
        ids[name] = Number((await addStudent(examId, name)).id);
      }
      page = await signedInPage(world, admin);
    });

    after(async () => {
      await world?.close();
    });

    it('sets accommodations in the student form, showing a refused value on its field', async () => {
      await page.goto(`${world.baseUrl}/console/exams/${examId}/students/${ids['Ada Lovelace']}/edit`);
      await page.getByRole('group', { name: 'Accommodations' }).waitFor();
      // The old hint to type "extra time" into the information is gone.
      assert.doesNotMatch(
        await page.locator('#student-info-help').innerText(),
        /\(a desk number, extra time\)/,
      );
      await page.getByLabel('Extra time (percent)').fill('50');
      await page.getByLabel('Extra time (minutes)').fill('700');
      await page.getByLabel('Number of breaks').fill('1');
      await page.getByLabel('Minutes per break').fill('10');
      await page.getByLabel('Webcam', { exact: true }).check();
      await page.getByLabel('Reason for the Webcam exemption').fill('No usable camera');
      await page.getByLabel('Uses assistive technology').check();
      await page.getByLabel('Note for staff').fill('Uses a screen reader.');
      await page.getByRole('button', { name: 'Save', exact: true }).click();

      const minutes = page.getByLabel('Extra time (minutes)');
      await page.locator('#student-accommodations-extra-minutes-error').waitFor();
      assert.equal(await minutes.getAttribute('aria-invalid'), 'true');
      assert.match(
        await page.locator('#student-accommodations-extra-minutes-error').innerText(),
        /less than or equal to 600/,
      );
      assert.match((await minutes.getAttribute('aria-describedby')) ?? '', /extra-minutes-error/);
      await checkScreen(page, `accommodations-form-refused-${dialect}`);

      await minutes.fill('10');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.waitForURL(`**/console/exams/${examId}/students?**`);
      const ada = await studentRecord(ids['Ada Lovelace'] ?? 0);
      assert.deepEqual(ada.accommodations, {
        extra_time_minutes: 10,
        extra_time_percent: 50,
        breaks: { count: 1, minutes: 10 },
        exemptions: [{ check: 'webcam', reason: 'No usable camera' }],
        assistive_technology: true,
        note: 'Uses a screen reader.',
      });

      // Opened again, the form shows what was saved.
      await page.goto(`${world.baseUrl}/console/exams/${examId}/students/${ids['Ada Lovelace']}/edit`);
      await page.getByRole('group', { name: 'Accommodations' }).waitFor();
      assert.equal(await page.getByLabel('Extra time (minutes)').inputValue(), '10');
      assert.equal(await page.getByLabel('Reason for the Webcam exemption').inputValue(), 'No usable camera');
      await checkScreen(page, `accommodations-form-${dialect}`);
      await page.goto(
        `${world.baseUrl}/console/exams/${examId}/students/${ids['Ada Lovelace']}/edit?lang=ar`,
      );
      await page.getByRole('group', { name: 'الترتيبات الخاصة' }).waitFor();
      await checkScreen(page, `accommodations-form-ar-${dialect}`);
    });

    it('marks accommodated students, shows and filters readiness, and emails practice reminders', async () => {
      // The practice runs themselves are another part's: their outcome is written as a run leaves it.
      const at = Date.UTC(2026, 10, 27, 14, 5);
      await world.server.app.database.db
        .updateTable('student_sessions')
        .set({ practice_status: 'passed', practice_at: at, updated_at: at })
        .where('id', '=', ids['Bob Babbage'] ?? 0)
        .execute();
      await world.server.app.database.db
        .updateTable('student_sessions')
        .set({ practice_status: 'failed', practice_failed_check: 'webcam', practice_at: at, updated_at: at })
        .where('id', '=', ids['Cleo Curie'] ?? 0)
        .execute();
      await page.goto(`${world.baseUrl}/console/exams/${examId}/students`);
      await row('Cleo Curie').waitFor();
      // The marker says what the accommodations are to a screen reader.
      const marker = row('Ada Lovelace').locator('.accommodated');
      assert.match(await marker.innerText(), /Accommodations/);
      assert.match(
        (await marker.textContent()) ?? '',
        /extra time 50% \+ 10 min, 1 break of 10 min, exempt from Webcam, assistive technology, staff note/,
      );
      assert.equal(await row('Bob Babbage').locator('.accommodated').count(), 0);
      assert.match(await row('Ada Lovelace').innerText(), /Not tried/);
      assert.match(await row('Bob Babbage').innerText(), /Passed \(/);
      assert.match(await row('Cleo Curie').innerText(), /Failed: Webcam \(/);
      await checkScreen(page, `accommodations-list-${dialect}`);

      await page.getByLabel('Readiness').selectOption('failed');
      await page.waitForURL(/practice=failed/);
      await page
        .locator('table.students tbody tr', { hasText: 'Ada Lovelace' })
        .waitFor({ state: 'detached' });
      assert.deepEqual(await page.locator('table.students tbody tr td:nth-child(2)').allInnerTexts(), [
        'Cleo Curie',
      ]);
      await page.getByLabel('Readiness').selectOption('');
      await row('Ada Lovelace').waitFor();

      // Everyone not passed (Ada, Cleo) is emailed, after a confirmation.
      await page.getByRole('button', { name: 'Email practice reminder' }).click();
      const confirm = page.getByRole('dialog', { name: 'Email a practice reminder to everyone not passed?' });
      await confirm.waitFor();
      await checkScreen(page, `accommodations-remind-confirm-${dialect}`);
      await confirm.getByRole('button', { name: 'Send reminders' }).click();
      await page.getByRole('status').filter({ hasText: '2 reminders sent.' }).waitFor();

      await page.goto(`${world.baseUrl}/console/exams/${examId}/students?lang=ar`);
      await row('Cleo Curie').waitFor();
      await checkScreen(page, `accommodations-list-ar-${dialect}`);
    });

    it('edits the accommodations of two selected students at once, listing refusals per student', async () => {
      await page.goto(`${world.baseUrl}/console/exams/${examId}/students`);
      await row('Cleo Curie').waitFor();
      await page.getByLabel('Select Bob Babbage').check();
      await page.getByLabel('Select Cleo Curie').check();
      await page.getByText('2 students selected').waitFor();
      await page.getByRole('button', { name: 'Edit accommodations…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Accommodations of 2 students' });
      await dialog.waitFor();
      // Nothing ticked: nothing is sent.
      await dialog.getByRole('button', { name: 'Apply to 2 students' }).click();
      await dialog.getByText('Tick at least one item to change.').waitFor();

      await dialog.getByLabel('Change: Extra time (minutes)').check();
      await dialog.getByLabel('Extra time (minutes)', { exact: true }).fill('700');
      await dialog.getByRole('button', { name: 'Apply to 2 students' }).click();
      await dialog.getByText('2 students were not changed:').waitFor();
      assert.match(
        await dialog.locator('.refused').innerText(),
        /Bob Babbage: accommodations\.extra_time_minutes/,
      );
      assert.match(
        await dialog.locator('.refused').innerText(),
        /Cleo Curie: accommodations\.extra_time_minutes/,
      );
      await checkScreen(page, `accommodations-bulk-refused-${dialect}`);
      await dialog.getByRole('button', { name: 'Close' }).click();

      await page.getByRole('button', { name: 'Edit accommodations…' }).click();
      await dialog.waitFor();
      await dialog.getByLabel('Change: Extra time (minutes)').check();
      await dialog.getByLabel('Extra time (minutes)', { exact: true }).fill('15');
      await dialog.getByLabel('Change: Note for staff').check();
      await dialog.getByLabel('Note for staff', { exact: true }).fill('Extra time by board decision.');
      await dialog.getByRole('button', { name: 'Apply to 2 students' }).click();
      await dialog.getByText('Saved: 2 of 2.').waitFor();
      assert.equal(await dialog.getByRole('progressbar').getAttribute('value'), '2');
      await checkScreen(page, `accommodations-bulk-${dialect}`);
      await dialog.getByRole('button', { name: 'Close' }).click();
      await row('Bob Babbage').locator('.accommodated').waitFor();

      for (const name of ['Bob Babbage', 'Cleo Curie']) {
        const record = await studentRecord(ids[name] ?? 0);
        assert.deepEqual(record.accommodations, {
          extra_time_minutes: 15,
          extra_time_percent: 0,
          breaks: null,
          exemptions: [],
          assistive_technology: false,
          note: 'Extra time by board decision.',
        });
      }
      // Ada, not selected, keeps hers.
      const ada = object((await studentRecord(ids['Ada Lovelace'] ?? 0)).accommodations, 'accommodations');
      assert.equal(ada.extra_time_minutes, 10);
    });

    it('saves the exam’s rest-break recording and extra-time settings', async () => {
      await page.goto(`${world.baseUrl}/console/exams/${examId}`);
      const recording = page.getByLabel('Keep recording during rest breaks');
      const beyond = page.getByLabel('Extra time may run past the end time');
      await recording.waitFor();
      assert.equal(await recording.isChecked(), true);
      assert.equal(await beyond.isChecked(), true);
      await recording.uncheck();
      await beyond.uncheck();
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.locator('form .save [role="status"]').filter({ hasText: 'Saved.' }).waitFor();
      const exam = object((await v3('GET', '/exams/:id', { id: examId })).exam, 'exam');
      assert.equal(exam.record_during_breaks, false);
      assert.equal(exam.extra_time_beyond_end, false);
      await page.reload();
      await recording.waitFor();
      assert.equal(await recording.isChecked(), false);
      assert.equal(await beyond.isChecked(), false);
    });

    it('marks an accommodated candidate on the proctor wall and shows a rest break live', async () => {
      const liveExam = await createExam(admin, 'Live statistics', {
        type: 'live_proctoring',
        duration_minutes: 30,
      });
      const dee = await addStudent(liveExam, 'Dee Dirac', { skip_requirements: true });
      await addStudent(liveExam, 'Eve Euler', { skip_requirements: true });
      await v3('PATCH', '/student_sessions/:id', {
        id: Number(dee.id),
        accommodations: JSON.stringify({
          extra_time_percent: 25,
          breaks: { count: 2, minutes: 10 },
          exemptions: [{ check: 'microphone', reason: 'Hearing aid feedback' }],
          note: 'Lip-reads: please face the camera when speaking.',
        }),
      });
      const token = String(dee.token);
      await room(token, 'start');

      await page.goto(`${world.baseUrl}/console/exams/${liveExam}/students`);
      await page.waitForLoadState('networkidle');
      await page.getByRole('link', { name: 'Live', exact: true }).click();
      await page.waitForURL(`**/console/exams/${liveExam}/live`);
      const tile = page.getByRole('button', { name: /^Dee Dirac, / });
      await tile.waitFor();
      await tile
        .locator('.tile-accommodations', {
          hasText: 'Accommodations: extra time 25%, 2 breaks of 10 min, exempt from Microphone',
        })
        .waitFor();
      assert.equal(await page.locator('button.live-tile .tile-accommodations').count(), 1);

      // The candidate takes a rest break in the room: the wall shows it within its next look.
      const before = Date.now();
      await room(token, 'break');
      const onBreak = tile.locator('.flag-break');
      await onBreak.waitFor();
      const shown = await onBreak.innerText();
      const ends = new Date(before + 10 * 60_000);
      const clock = (date: Date) =>
        new Intl.DateTimeFormat('en', { hour: '2-digit', minute: '2-digit' }).format(date);
      assert.ok(
        shown.includes(`On break, ends ${clock(ends)}`) ||
          shown.includes(`On break, ends ${clock(new Date(ends.getTime() + 60_000))}`),
        shown,
      );
      assert.match(
        (await tile.getAttribute('aria-label')) ?? '',
        /On break, ends .*Accommodations: extra time 25%/,
      );
      await checkScreen(page, `accommodations-live-wall-${dialect}`);
      // Enlarged, the candidate's accommodations come with the staff note.
      await tile.click();
      const focus = page.locator('dialog.live-focus');
      await focus.getByText('Note for staff: Lip-reads: please face the camera when speaking.').waitFor();
      await focus.getByText(/On break, ends/).waitFor();
      await checkScreen(page, `accommodations-live-focus-${dialect}`);
      await page.keyboard.press('Escape');
      await focus.waitFor({ state: 'hidden' });
      // The wall's stream keeps the network busy: reach idle on the students first, then go there.
      await page.goto(`${world.baseUrl}/console/exams/${liveExam}/students?lang=ar`);
      await page.waitForLoadState('networkidle');
      await page.locator(`a[href$="/exams/${liveExam}/live"]`).click();
      await page.locator('button.live-tile .flag-break').waitFor();
      await checkScreen(page, `accommodations-live-wall-ar-${dialect}`);

      // Back from the break and done: the review screen tells the break from an absence.
      await room(token, 'break/end');
      await room(token, 'finish');
      ids['Dee Dirac'] = Number(dee.id);
    });

    it('lists the accommodations beside the incidents on the review screen, the break read as one', async () => {
      const id = ids['Dee Dirac'] ?? 0;
      await page.goto(`${world.baseUrl}/console/sessions/${id}/review`);
      const panel = page.getByRole('complementary', { name: 'Accommodations' });
      await panel.waitFor();
      const text = await panel.innerText();
      assert.match(text, /Extra time\s+25%/);
      assert.match(text, /2 breaks of up to 10 min/);
      assert.match(text, /1 taken/);
      assert.match(text, /Microphone: Hearing aid feedback/);
      await page.getByText('Rest break started').waitFor();
      await page.getByText('Rest break ended').waitFor();
      await checkScreen(page, `accommodations-review-${dialect}`);
      await page.goto(`${world.baseUrl}/console/sessions/${id}/review?lang=ar`);
      await page.getByRole('complementary', { name: 'الترتيبات الخاصة' }).waitFor();
      await checkScreen(page, `accommodations-review-ar-${dialect}`);
    });
  });
}
