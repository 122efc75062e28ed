/**
 * A whole LTI Proctoring Services round trip in Chromium (fake camera and microphone), nothing
 * seeded: the fake platform's course page launches `LtiStartProctoring` through /lti/login and
 * /lti/launch into the exam room; the candidate goes through the setup and presses start; a new tab
 * carries the signed `LtiStartAssessment` to the platform, which verifies it and opens the
 * assessment while the room keeps recording; submitting the assessment is an `LtiEndAssessment`
 * launch in that tab, which ends on Invigil's "handed in" page, and the room shows the exam
 * finished. Axe and screenshots of the room before the start, the platform after it and the
 * handed-in page land in test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchChromium, SCREENSHOT_DIR, type TestBrowser } from '../helpers/browser.ts';
import { ApiClient } from '../helpers/client.ts';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import { type LtiWorld, startLtiWorld } from '../http/lti/lti-13.support.ts';
import { CLAIM } from '../lti/fake-platform.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import { acceptPrivacy } from './privacy-support.ts';

for (const dialect of browserDialects(import.meta.url)) {
  describe(`LTI Proctoring Services round trip in Chromium [${dialect}]`, () => {
    let world: LtiWorld;
    let chromium: TestBrowser;
    let teacher: ApiClient;
    let examId: number;

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      world = await startLtiWorld(dialect);
      const { credentials } = await world.app.services.users.create(world.instituteId, {
        email: `teacher-${crypto.randomBytes(3).toString('hex')}@example.org`,
        name: 'Teacher',
        role: 'teacher',
      });
      teacher = new ApiClient(world.baseUrl, credentials);
      // Record & review of the camera: the fewest setup steps for an exam the room records.
      const exam = await teacher.v3('POST', '/exams', {
        name: 'Proctored quiz',
        type: 'record_review',
        duration_minutes: 30,
        web_cam: true,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = object(object(exam.json, 'body').exam, 'exam').id as number;
      chromium = await launchChromium();
    });

    after(async () => {
      await chromium?.close();
      await world?.close();
    });

    /** Waits until the page has settled, runs axe over it and keeps a full-page screenshot. */
    async function checkScreen(page: Page, name: string): Promise<void> {
      await page.waitForLoadState('networkidle');
      await assertNoSeriousAxeViolations(page, name);
      // From the top, so the room's sticky header sits where it belongs.
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({
        path: path.join(SCREENSHOT_DIR, `lti-proctoring-${name}-${dialect}.png`),
        fullPage: true,
      });
    }

    it('launches into the room, opens the assessment on the platform and hands in from there', async () => {
      const hint = `learner-${crypto.randomBytes(3).toString('hex')}`;
      world.platform.launches.set(
        hint,
        world.platform.startProctoringClaims(hint, {
          sessionData: `state-${hint}`,
          overrides: { [CLAIM.custom]: { invigil_exam_id: String(examId) } },
        }),
      );
      const room = await chromium.browser.newPage();
      await room.goto(world.platform.coursePageUrl(hint, { topLevel: true }));
      await room.getByRole('link', { name: 'Final exam' }).click();
      await room.waitForURL(new RegExp(`^${world.baseUrl}/room/[0-9a-f]+$`));
      await room.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(room);

      await room.getByRole('button', { name: 'Test camera and microphone' }).click();
      await room.getByText('Camera: passed').waitFor();
      await room.getByText('Microphone: passed').waitFor();
      await room.getByRole('button', { name: 'Measure your connection' }).click();
      await room.getByText('Connection speed: passed').waitFor();
      await room.getByRole('button', { name: 'Take a photo of your ID card' }).click();
      await room.locator('#id_card-state', { hasText: 'Photo saved.' }).waitFor();
      await room.getByRole('button', { name: 'Take a photo of your face' }).click();
      await room.locator('#face_photo-state', { hasText: 'Photo saved.' }).waitFor();
      await room
        .getByText('When you start, your learning platform opens the questions in a new tab.')
        .waitFor();
      const start = room.getByRole('button', { name: 'Start the exam' });
      await room.waitForFunction(() => {
        const button = document.getElementById('start-exam');
        return button instanceof HTMLButtonElement && !button.disabled && !button.hidden;
      });
      await checkScreen(room, 'room-before-start');

      const opened = room.context().waitForEvent('page');
      await start.click();
      const assessment = await opened;
      await assessment.waitForURL(world.platform.startAssessmentUrl);
      await assessment.getByRole('heading', { name: 'Assessment started' }).waitFor();
      const claims = world.platform.startAssessments.at(-1);
      assert.ok(claims !== undefined, 'the platform verified the LtiStartAssessment');
      assert.equal(claims[CLAIM.sessionData], `state-${hint}`);
      assert.equal(claims[CLAIM.attemptNumber], 1);
      await checkScreen(assessment, 'platform-after-start');

      // The room keeps running in its own tab.
      await room.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      await room.locator('#recording-state', { hasText: 'Recording' }).waitFor();

      await assessment.getByRole('link', { name: 'Submit the assessment' }).click();
      await assessment.getByRole('heading', { name: 'Exam handed in' }).waitFor();
      assert.equal(new URL(assessment.url()).origin, world.baseUrl);
      await assessment.getByText('Your exam has been handed in. You can close this window.').waitFor();
      await checkScreen(assessment, 'handed-in');

      await room.getByRole('heading', { name: 'Your exam is finished' }).waitFor({ timeout: 30_000 });
      const found = await teacher.v3('GET', '/exams/:id/show_lti_student', {
        id: examId,
        student_lms_id: hint,
        resource_link_id: 'resource-link-1',
      });
      assert.equal(found.status, 200, found.text);
      const student = object(object(found.json, 'body').student, 'student');
      const record = await teacher.v3('GET', '/student_sessions/:id', { id: student.id as number });
      assert.equal(record.status, 200, record.text);
      assert.equal(object(object(record.json, 'body').student, 'student').status, 'exam_finished');
    });
  });
}
