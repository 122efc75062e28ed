/**
 * Deep linking in Chromium: a teacher sent to the console by a deep-linking launch (its ticket in the
 * address) sees their exams, creates a new one on the spot, chooses it and adds it to the course;
 * the service's page posts the signed LtiDeepLinkingResponse on to the fake platform's return URL,
 * whose content item names the exam. The screen gets axe and a screenshot, also at 390 px.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTicket } from '../../src/domain/lti/tickets.ts';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import { type FakePlatform, startFakePlatform } from '../lti/fake-platform.ts';
import {
  assertNoHorizontalScroll,
  checkScreen,
  signedInPage,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';

const CONTENT_ITEMS = 'https://purl.imsglobal.org/spec/lti-dl/claim/content_items';

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console deep linking in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let platform: FakePlatform;
    let teacher: StaffUser;
    let toolProviderId: number;

    before(async () => {
      world = await startConsoleWorld(dialect);
      platform = await startFakePlatform({ toolUrl: world.baseUrl });
      teacher = await world.staff('teacher');
      const now = Date.now();
      toolProviderId = (
        await world.server.app.database.db
          .insertInto('tool_providers')
          .values({
            institute_id: world.instituteId,
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
          .executeTakeFirstOrThrow()
      ).id;
      for (const name of ['Chemistry final', 'Physics midterm']) {
        const exam = await teacher.client.v3('POST', '/exams', {
          name,
          type: 'record_review',
          duration_minutes: 90,
        });
        assert.equal(exam.status, 201, exam.text);
      }
    });

    after(async () => {
      await world.close();
      await platform.close();
    });

    function ticketFor(userId: number): Promise<string> {
      return createTicket(
        { db: world.server.app.database.db, clock: { now: () => Date.now() } },
        'deep_link',
        {
          toolProviderId,
          deploymentId: platform.deploymentId,
          platformIssuer: platform.issuer,
          userId,
          settings: {
            returnUrl: platform.deepLinkReturnUrl,
            data: 'course-42',
            acceptTypes: ['ltiResourceLink'],
            acceptMultiple: false,
            title: null,
          },
        },
      );
    }

    it('lists the exams, creates one, and sends the chosen exam to the platform', async () => {
      const ticket = await ticketFor(teacher.id);
      const page = await signedInPage(world, teacher);
      await page.goto(`${world.baseUrl}/console/lti/deep-link?ticket=${ticket}`);
      await page.getByRole('heading', { name: 'Add an exam to your course' }).waitFor();
      await page.getByLabel('Chemistry final').waitFor();
      await page.getByLabel('Physics midterm').waitFor();
      await checkScreen(page, 'lti-deep-link');

      await page.getByLabel('Name', { exact: true }).fill('Biology quiz');
      await page.getByLabel('Type').selectOption('live_proctoring');
      await page.getByRole('button', { name: 'Create and choose it' }).click();
      await page.getByRole('status').filter({ hasText: 'Biology quiz was created and chosen' }).waitFor();
      await page.waitForFunction(() => {
        const input = document.querySelector<HTMLInputElement>('input[name="exam_id"]:checked');
        return input?.labels?.[0]?.textContent?.trim() === 'Biology quiz';
      });

      await page.getByRole('button', { name: 'Add to the course' }).click();
      await page.waitForURL(platform.deepLinkReturnUrl);
      await page.getByRole('heading', { name: 'Content linked' }).waitFor();
      const returned = platform.deepLinkReturns.at(-1);
      assert.ok(returned !== undefined, 'the platform received the response');
      const claims = await platform.verifyToolJwt(returned.fields.JWT ?? '');
      const [item] = claims[CONTENT_ITEMS] as Record<string, unknown>[];
      assert.equal(item?.title, 'Biology quiz');
      const custom = object(item?.custom, 'custom');
      const exam = await teacher.client.v3('GET', '/exams/:id', { id: custom.invigil_exam_id as string });
      assert.equal(object(object(exam.json, 'body').exam, 'exam').type, 'live_proctoring');
      await page.context().close();
    });

    it('reads at a phone’s width, and says what to do without a ticket', async () => {
      const page = await signedInPage(world, teacher);
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${world.baseUrl}/console/lti/deep-link?ticket=${await ticketFor(teacher.id)}`);
      await page.getByLabel('Chemistry final').waitFor();
      await assertNoHorizontalScroll(page, 'deep link at 390 px');
      await checkScreen(page, 'lti-deep-link-phone');
      await page.goto(`${world.baseUrl}/console/lti/deep-link`);
      await page.getByRole('alert').filter({ hasText: 'Start again from your course' }).waitFor();
      await page.context().close();
    });
  });
}
