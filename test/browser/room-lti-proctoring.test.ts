/**
 * The room of an LTI Proctoring Services launch in Chromium: when the candidate presses start, the
 * platform's assessment opens in a new tab (GET /lti/start-assessment/<token> posting the signed
 * LtiStartAssessment to the fake platform), the room stays in its own tab, and says in plain words
 * where the questions are, with a link to open them again. Axe and a screenshot of the room.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launchChromium, SCREENSHOT_DIR, type TestBrowser } from '../helpers/browser.ts';
import { object } from '../helpers/json.ts';
import { freePort } from '../helpers/processes.ts';
import { browserDialects, startTestServer, type TestServer } from '../helpers/server.ts';
import { CLAIM, type FakePlatform, startFakePlatform } from '../lti/fake-platform.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import { acceptPrivacy } from './privacy-support.ts';

for (const dialect of browserDialects(import.meta.url)) {
  describe(`room of a Proctoring Services launch in Chromium [${dialect}]`, () => {
    let server: TestServer;
    let platform: FakePlatform;
    let chromium: TestBrowser;
    let token: string;

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      const port = await freePort();
      const publicUrl = `http://127.0.0.1:${port}`;
      platform = await startFakePlatform({ toolUrl: publicUrl });
      server = await startTestServer(dialect, { port, env: { PUBLIC_URL: publicUrl } });
      const institute = await server.institute();
      const teacher = await server.user(institute, 'teacher');
      const { db } = server.app.database;
      const now = Date.now();
      const provider = await db
        .insertInto('tool_providers')
        .values({
          institute_id: institute,
          name: 'Fake LMS',
          lti_version: '1.3',
          consumer_key: null,
          shared_secret_encrypted: null,
          issuer: platform.issuer,
          client_id: platform.clientId,
          deployment_id: platform.deploymentId,
          auth_login_url: platform.authLoginUrl,
          auth_token_url: platform.authTokenUrl,
          jwks_url: platform.jwksUrl,
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const exam = await teacher.client.v3('POST', '/exams', {
        name: 'Quiz in the course',
        type: 'classroom',
        duration_minutes: 30,
        web_cam: 'false',
        screen_share: 'false',
      });
      assert.equal(exam.status, 201, exam.text);
      const examId = object(object(exam.json, 'body').exam, 'exam').id as number;
      const created = await teacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Launched Student',
        email: 'launched@students.example.org',
        skip_requirements: 'true',
      });
      assert.equal(created.status, 201, created.text);
      const student = object(object(created.json, 'body').student, 'student');
      token = student.token as string;
      await db
        .updateTable('student_sessions')
        .set({ lms_user_id: 'user-7', resource_link_id: 'resource-link-1' })
        .where('id', '=', student.id as number)
        .execute();
      await db
        .insertInto('lti_session_links')
        .values({
          student_session_id: student.id as number,
          tool_provider_id: provider.id,
          lti_version: '1.3',
          platform_user_id: 'user-7',
          deployment_id: platform.deploymentId,
          attempt_number: 1,
          start_assessment_url: platform.startAssessmentUrl,
          session_data: 'platform-session-data',
          acs_url: null,
          acs_actions: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      chromium = await launchChromium();
    });

    after(async () => {
      await chromium?.close();
      await server.close();
      await platform.close();
    });

    it('opens the assessment in a new tab on start and keeps the room open with a way back to it', async () => {
      const page = await chromium.browser.newPage();
      await page.goto(`${server.baseUrl}/room/${token}`);
      await acceptPrivacy(page);
      const start = page.getByRole('button', { name: 'Start the exam' });
      await start.waitFor();
      await page.waitForFunction(() => {
        const button = document.getElementById('start-exam');
        return button instanceof HTMLButtonElement && !button.disabled && !button.hidden;
      });
      await page
        .getByText('When you start, your learning platform opens the questions in a new tab.')
        .waitFor();
      const opened = page.context().waitForEvent('page');
      await start.click();
      const assessment = await opened;
      await assessment.waitForURL(platform.startAssessmentUrl);
      await assessment.getByRole('heading', { name: 'Assessment started' }).waitFor();
      const posted = platform.startAssessmentPosts.at(-1);
      assert.ok(posted !== undefined, 'the platform received LtiStartAssessment');
      const claims = await platform.verifyToolJwt(posted.fields.JWT ?? '');
      assert.equal(claims[CLAIM.messageType], 'LtiStartAssessment');
      assert.equal(claims[CLAIM.sessionData], 'platform-session-data');
      await assessment.close();

      // The room stays where it was: the exam runs, and the link opens the assessment again.
      await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      await page.getByRole('heading', { name: 'Your assessment' }).waitFor();
      const link = page.getByRole('link', { name: 'Open the assessment in a new tab' });
      assert.equal(await link.getAttribute('href'), `/lti/start-assessment/${token}`);
      assert.equal(await link.getAttribute('target'), '_blank');
      await assertNoSeriousAxeViolations(page, 'room with LTI assessment');
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'room-lti-assessment.png'), fullPage: true });
      const again = page.context().waitForEvent('page');
      await link.click();
      const second = await again;
      await second.waitForURL(platform.startAssessmentUrl);
      await second.close();
    });
  });
}
