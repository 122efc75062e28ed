/**
 * The console's administration pages in Chromium, on SQLite and PostgreSQL: institute settings saved
 * and read back through the signed API; a user added with an invitation the SMTP server receives,
 * given another role, deactivated (their session cookie stops working) and reactivated; a tool
 * provider and an LTI resource added and deleted; identity providers listed; the audit log showing
 * what was just done. A teacher is not offered Administration and, going there directly, sees the
 * service's refusal and no data. Every screen and state gets axe and a screenshot; 390 px too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { V3_ACCEPT } from '../helpers/client.ts';
import { httpRequest } from '../helpers/http.ts';
import { browserDialects } from '../helpers/server.ts';
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

type Json = Record<string, unknown>;

const SAML_METADATA =
  '<?xml version="1.0"?><EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.org"></EntityDescriptor>';

/** The cookie header of a page's browser context (its staff session). */
async function cookieOf(page: Page): Promise<string> {
  const cookies = await page.context().cookies();
  return cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ');
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console administration in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let admin: StaffUser;
    let teacher: StaffUser;
    let page: Page;

    /** A signed read by the administrator; fails unless 200. */
    async function read(template: string, params: Record<string, string | number> = {}): Promise<Json> {
      const answer = await admin.client.v3('GET', template, params);
      assert.equal(answer.status, 200, answer.text);
      return answer.json as Json;
    }

    /**
     * Waits until the audit table has rows and every cell of its `label` column matches `pattern`
     * (the list has reloaded with a new filter). Returns the cells' texts.
     */
    async function auditColumn(label: string, pattern: RegExp): Promise<string[]> {
      await page.waitForFunction(
        ({ column, source }) => {
          const cells = [...document.querySelectorAll(`table.audit tbody td[data-label="${column}"]`)];
          return cells.length > 0 && cells.every((cell) => new RegExp(source).test(cell.textContent ?? ''));
        },
        { column: label, source: pattern.source },
      );
      return page.locator(`table.audit tbody td[data-label="${label}"]`).allInnerTexts();
    }

    async function userByEmail(email: string): Promise<Json | undefined> {
      const body = await read('/institutes/:institute_id/users', {
        institute_id: world.instituteId,
        filter: JSON.stringify({ email: { eq: email } }),
      });
      return (body.users as Json[])[0];
    }

    before(async () => {
      world = await startConsoleWorld(dialect);
      admin = await world.staff('administrator');
      teacher = await world.staff('teacher');
      page = await signedInPage(world, admin);
    });

    after(async () => {
      await world?.close();
    });

    it('offers Administration to an administrator and saves the institute settings', async () => {
      await page
        .getByRole('navigation', { name: 'Console' })
        .getByRole('link', { name: 'Administration' })
        .click();
      await page.getByRole('heading', { name: /Administration · Institute settings/, level: 1 }).waitFor();
      await page.getByLabel('Default language').waitFor();
      await checkScreen(page, `admin-institute-${dialect}`);

      // A refused value is shown next to its field, and nothing is saved.
      await page.getByLabel('Callback address').fill('ftp://files.example.org');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByText('correct the fields marked below').waitFor();
      assert.match(await page.locator('#callback-url-error').innerText(), /not a valid URL/);
      await checkScreen(page, `admin-institute-error-${dialect}`);

      await page.getByLabel('Callback address').fill('https://lms.example.org/invigil');
      await page.getByLabel('Reminder emails').uncheck();
      await page.getByLabel('Exam finished emails').uncheck();
      await page.getByLabel('Default language').fill('de-ch');
      await page.getByLabel('Keep student sessions for (days)').fill('45');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
      // The service's canonical form is shown back.
      assert.equal(await page.getByLabel('Default language').inputValue(), 'de-CH');

      const { institute } = (await read('/institutes/:id', { id: world.instituteId })) as { institute: Json };
      assert.equal(institute.callback_url, 'https://lms.example.org/invigil');
      assert.equal(institute.reminder_emails_enabled, false);
      assert.equal(institute.exam_finalized_emails_enabled, false);
      assert.equal(institute.exam_link_emails_enabled, true);
      assert.equal(institute.default_language, 'de-CH');
      assert.equal(institute.session_retention_period, 45);
      assert.equal(institute.require_second_factor_for_administrators, false);

      // Read back after a reload, as stored.
      await page.reload();
      await page.getByLabel('Keep student sessions for (days)').waitFor();
      assert.equal(await page.getByLabel('Keep student sessions for (days)').inputValue(), '45');
      assert.equal(await page.getByLabel('Reminder emails').isChecked(), false);
      // Ticking the second-factor rule warns an administrator who has none.
      await page.getByLabel('Administrators must use a second factor').check();
      await page.getByText('You have no second factor yourself').waitFor();
      await page.getByLabel('Administrators must use a second factor').uncheck();
    });

    it('adds a user with an invitation the SMTP server receives, changes the role, and refuses a taken email', async () => {
      await page
        .getByRole('navigation', { name: 'Administration' })
        .getByRole('link', { name: 'Users and roles' })
        .click();
      await page.getByRole('cell', { name: teacher.email, exact: true }).waitFor();
      await checkScreen(page, `admin-users-${dialect}`);

      await page.getByRole('button', { name: 'Add a user' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Grace Hopper');
      await page.getByLabel('Email', { exact: true }).fill('grace@example.org');
      await page.getByLabel('Role').first().selectOption('proctor');
      assert.equal(await page.getByLabel('Send an invitation email now').isChecked(), true);
      await checkScreen(page, `admin-user-new-${dialect}`);
      await page.getByRole('button', { name: 'Add user' }).click();
      await page.getByText('Grace Hopper was added as proctor').waitFor();
      await page.getByText('An invitation email is on its way to grace@example.org').waitFor();
      await checkScreen(page, `admin-user-added-${dialect}`);
      // The new user's API credentials are never on the page.
      assert.doesNotMatch(await page.locator('main').innerText(), /api_token|secret_key|secret/i);

      const grace = await userByEmail('grace@example.org');
      assert.ok(grace !== undefined);
      assert.equal(grace.role, 'proctor');
      assert.equal(grace.active, true);

      await runDueJobs(world.server, dialect, world.server.app.clock);
      const invitation = world.smtp.messages.find((message) =>
        message.envelopeTo.includes('grace@example.org'),
      );
      assert.ok(invitation !== undefined, 'the invitation reached the SMTP server');
      assert.match(invitation.text ?? '', /\/console\/accept-invitation\?token=/);

      // The same email again: refused, next to the field.
      await page.getByRole('button', { name: 'Add a user' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Grace Again');
      await page.getByLabel('Email', { exact: true }).fill('GRACE@example.org');
      await page.getByLabel('Send an invitation email now').uncheck();
      await page.getByRole('button', { name: 'Add user' }).click();
      await page.locator('#new-user-email-error').waitFor();
      assert.match(await page.locator('#new-user-email-error').innerText(), /has already been taken/);
      await checkScreen(page, `admin-user-new-error-${dialect}`);
      await page.getByRole('button', { name: 'Close the form' }).click();

      // Filter by role, then open the user and change the role.
      await page.getByLabel('Role').selectOption('proctor');
      await page.waitForURL(/role=proctor/);
      await page.getByRole('table').getByRole('link', { name: 'Grace Hopper' }).click();
      await page.getByRole('heading', { name: /Grace Hopper/, level: 2 }).waitFor();
      await checkScreen(page, `admin-user-${dialect}`);
      await page.getByLabel('Role', { exact: true }).selectOption('reviewer');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').filter({ hasText: 'Changes saved.' }).waitFor();
      assert.equal((await userByEmail('grace@example.org'))?.role, 'reviewer');

      // A new invitation from the user's page.
      await page.getByRole('button', { name: 'Send an invitation' }).click();
      await page.getByText('An invitation email is on its way to grace@example.org').waitFor();
    });

    it('deactivates a user after a confirmation, which ends their session, and reactivates them', async () => {
      const victim = await world.staff('teacher');
      const victimPage = await signedInPage(world, victim);
      const cookie = await cookieOf(victimPage);
      const asVictim = () =>
        httpRequest({ url: `${world.baseUrl}/api/v3/exams`, headers: { cookie, accept: V3_ACCEPT } });
      assert.equal((await asVictim()).status, 200);

      await page.goto(`${world.baseUrl}/console/admin/users/${victim.id}`);
      await page.getByRole('heading', { name: /User \d+/, level: 2 }).waitFor();
      await page.getByRole('button', { name: /^Deactivate / }).click();
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      await checkScreen(page, `admin-user-deactivate-confirm-${dialect}`);
      // Cancel first: nothing changes.
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });
      assert.equal((await asVictim()).status, 200);

      await page.getByRole('button', { name: /^Deactivate / }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Deactivate' }).click();
      await page.getByRole('status').filter({ hasText: 'is deactivated' }).waitFor();
      await page.getByText('deactivated', { exact: true }).first().waitFor();
      await checkScreen(page, `admin-user-deactivated-${dialect}`);
      assert.equal((await userByEmail(victim.email))?.active, false);
      assert.equal((await asVictim()).status, 403, 'the deactivated user’s session cookie is refused');
      assert.equal((await victim.client.v3('GET', '/exams')).status, 403, 'and so are their signed calls');

      await page.getByRole('button', { name: /^Reactivate / }).click();
      await page.getByRole('status').filter({ hasText: 'is active again' }).waitFor();
      assert.equal((await userByEmail(victim.email))?.active, true);
      assert.equal((await victim.client.v3('GET', '/exams')).status, 200);
      // The ended session stays ended: they sign in again.
      assert.equal((await asVictim()).status, 403);
      await victimPage.context().close();

      // Nobody locks themselves out: on their own page an administrator cannot deactivate.
      await page.goto(`${world.baseUrl}/console/admin/users/${admin.id}`);
      await page.getByText('This is you').waitFor();
      assert.equal(await page.getByRole('button', { name: /^Deactivate / }).isDisabled(), true);
    });

    it('adds, edits and deletes a tool provider and an LTI resource', async () => {
      const exam = await admin.client.v3('POST', '/exams', {
        name: 'Statistics final',
        type: 'record_review',
        duration_minutes: 90,
      });
      assert.equal(exam.status, 201, exam.text);
      const examId = (exam.json as { exam: { id: number } }).exam.id;

      await page
        .getByRole('navigation', { name: 'Administration' })
        .getByRole('link', { name: 'Tool providers' })
        .click();
      await page.getByText('No tool providers yet').waitFor();
      await checkScreen(page, `admin-tool-providers-empty-${dialect}`);
      await page.getByRole('button', { name: 'Add a tool provider' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Moodle main campus');
      await page.getByLabel('LTI 1.3 (current LMSs)').check();
      await page.getByLabel('Issuer').fill('https://moodle.example.org');
      await page.getByLabel('Client id').fill('invigil-client');
      await page.getByLabel('Login initiation address').fill('https://moodle.example.org/mod/lti/auth.php');
      await page.getByLabel('Access token address').fill('https://moodle.example.org/mod/lti/token.php');
      await page.getByLabel('Public keys address (JWKS)').fill('ftp://moodle.example.org/certs');
      await page.getByRole('button', { name: 'Add tool provider' }).click();
      await page.locator('#tp-jwks-url-error').waitFor();
      await checkScreen(page, `admin-tool-provider-error-${dialect}`);
      await page
        .getByLabel('Public keys address (JWKS)')
        .fill('https://moodle.example.org/mod/lti/certs.php');
      await page.getByRole('button', { name: 'Add tool provider' }).click();
      await page.getByRole('status').filter({ hasText: 'Moodle main campus was added.' }).waitFor();
      await page.getByRole('cell', { name: 'Moodle main campus', exact: true }).waitFor();
      await checkScreen(page, `admin-tool-providers-${dialect}`);

      const listed = (await read('/tool_providers')).tool_providers as Json[];
      assert.equal(listed.length, 1);
      const provider = listed[0] as Json;
      assert.equal(provider.lti_version, '1.3');
      assert.equal(provider.jwks_url, 'https://moodle.example.org/mod/lti/certs.php');

      // Edit: switch to LTI 1.1 with a key and secret.
      await page.getByRole('button', { name: 'Edit Moodle main campus' }).click();
      await page.getByLabel('LTI 1.1 (older LMSs)').check();
      await page.getByLabel('Consumer key').fill('moodle-key');
      await page.getByLabel('Shared secret').fill('s3cret-shared');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').filter({ hasText: 'was saved' }).waitFor();
      const edited = (await read('/tool_providers/:id', { id: provider.id as number })).tool_provider as Json;
      assert.equal(edited.lti_version, '1.1');
      assert.equal(edited.consumer_key, 'moodle-key');
      assert.equal(edited.has_shared_secret, true);
      assert.equal(edited.issuer, null);
      assert.doesNotMatch(await page.locator('main').innerText(), /s3cret-shared/);

      // An LTI resource linked to the exam.
      await page
        .getByRole('navigation', { name: 'Administration' })
        .getByRole('link', { name: 'LTI resources' })
        .click();
      await page.getByRole('button', { name: 'Add an LTI resource' }).click();
      await page.getByLabel('Tool provider').first().selectOption({ label: 'Moodle main campus' });
      await page.getByLabel('Resource link id').fill('rl-4711');
      await page.getByLabel('Exam', { exact: true }).selectOption({ label: 'Statistics final' });
      await page.getByLabel('Title (optional)').fill('Statistics final exam (week 12)');
      await page.getByLabel('Context id (optional)').fill('STAT-101');
      await checkScreen(page, `admin-lti-resource-new-${dialect}`);
      await page.getByRole('button', { name: 'Add LTI resource' }).click();
      await page.getByRole('status').filter({ hasText: 'was added' }).waitFor();
      await page.getByRole('cell', { name: 'rl-4711', exact: true }).waitFor();
      await checkScreen(page, `admin-lti-resources-${dialect}`);
      const resources = (await read('/lti_resources')).lti_resources as Json[];
      assert.equal(resources.length, 1);
      assert.equal(resources[0]?.exam_id, examId);
      assert.equal(resources[0]?.context_id, 'STAT-101');

      // The provider cannot go while its resource opens an exam: the page says what to do.
      await page
        .getByRole('navigation', { name: 'Administration' })
        .getByRole('link', { name: 'Tool providers' })
        .click();
      await page.getByRole('button', { name: 'Delete Moodle main campus' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete tool provider' }).click();
      const refusal = page.getByRole('alert');
      await refusal.waitFor();
      assert.match(await refusal.innerText(), /linked to an exam.*first/);
      await checkScreen(page, `admin-tool-provider-delete-refused-${dialect}`);

      // Delete the resource, then the provider.
      await page
        .getByRole('navigation', { name: 'Administration' })
        .getByRole('link', { name: 'LTI resources' })
        .click();
      await page.getByRole('button', { name: 'Delete Statistics final exam (week 12)' }).click();
      await checkScreen(page, `admin-lti-resource-delete-confirm-${dialect}`);
      await page.getByRole('dialog').getByRole('button', { name: 'Delete LTI resource' }).click();
      await page.getByRole('status').filter({ hasText: 'was deleted' }).waitFor();
      assert.equal(((await read('/lti_resources')).lti_resources as Json[]).length, 0);

      await page
        .getByRole('navigation', { name: 'Administration' })
        .getByRole('link', { name: 'Tool providers' })
        .click();
      await page.getByRole('button', { name: 'Delete Moodle main campus' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete tool provider' }).click();
      await page.getByRole('status').filter({ hasText: 'was deleted' }).waitFor();
      assert.equal(((await read('/tool_providers')).tool_providers as Json[]).length, 0);
    });

    it('lists identity providers with their protocol and explains how to add one', async () => {
      const { identityProviders } = world.server.app.services;
      await identityProviders.createOidc({
        instituteId: world.instituteId,
        name: 'Campus Login',
        issuer: 'https://login.example.org/realms/campus',
        clientId: 'invigil',
        clientSecret: 'client-secret-value',
      });
      await identityProviders.create({
        name: 'Old Shibboleth',
        protocol: 'saml',
        metadata: SAML_METADATA,
        instituteId: world.instituteId,
      });
      await page
        .getByRole('navigation', { name: 'Administration' })
        .getByRole('link', { name: 'Identity providers' })
        .click();
      const oidcRow = page.getByRole('row').filter({ hasText: 'Campus Login' });
      await oidcRow.waitFor();
      assert.match(await oidcRow.innerText(), /OpenID Connect/);
      const samlRow = page.getByRole('row').filter({ hasText: 'Old Shibboleth' });
      assert.match(await samlRow.innerText(), /SAML[\s\S]*nobody signs in with SAML/);
      await page.getByText('SAML is listed but not used for sign-in.').waitFor();
      assert.match(await page.locator('pre').innerText(), /invigil idp create --institute \d+/);
      assert.doesNotMatch(await page.locator('main').innerText(), /client-secret-value/);
      await checkScreen(page, `admin-identity-providers-${dialect}`);
    });

    it('shows the actions just done in the audit log, filtered by person, action and time', async () => {
      await page
        .getByRole('navigation', { name: 'Administration' })
        .getByRole('link', { name: 'Audit log' })
        .click();
      const rows = page.locator('table.audit tbody tr');
      await rows.first().waitFor();
      await page.getByText('PATCH /api/v3/institutes/:institute_id/users/:id').first().waitFor();
      // The names and emails come from a second request (the institute's users) that may answer after
      // the events: wait for them rather than reading the table before they are filled in.
      await page.locator('table.audit').getByText(admin.email).first().waitFor();
      const text = await page.locator('table.audit').innerText();
      assert.match(text, /PUT \/api\/v3\/institutes\/:id/);
      assert.match(text, /POST \/api\/v3\/institutes\/:institute_id\/users/);
      assert.match(text, /DELETE \/api\/v3\/tool_providers\/:id/);
      assert.match(text, /Signed in/);
      assert.ok(text.includes(admin.email), 'who: the administrator by name and email');
      assert.match(text, /127\.0\.0\.1/);
      await checkScreen(page, `admin-audit-${dialect}`);

      await page.getByLabel('Action').selectOption({ label: 'Signed in' });
      await page.waitForURL(/action=sign_in/);
      const signIns = await auditColumn('What', /^\s*Signed in\s*$/);
      assert.ok(signIns.length >= 2, signIns.join('|'));

      const adminName = (await userByEmail(admin.email))?.name;
      assert.equal(typeof adminName, 'string');
      await page.getByLabel('Person').selectOption({ label: String(adminName) });
      await page.waitForURL(/user=\d+/);
      // Only the administrator's own sign-ins are left.
      const who = await auditColumn('Who', new RegExp(admin.email.replaceAll('.', '\\.')));
      assert.ok(who.length >= 1);

      // A time range in the future: nothing.
      await page.getByLabel('From').fill('2099-01-01T00:00');
      await page.getByRole('button', { name: 'Apply time range' }).click();
      await page.getByText('No events match').waitFor();
      await checkScreen(page, `admin-audit-filtered-${dialect}`);
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await page.getByText('PUT /api/v3/institutes/:id').first().waitFor();
    });

    it('is readable at 390 px wide', async () => {
      const phone = await newPage(world, { width: 390, height: 844 });
      await signIn(phone, world.baseUrl, admin.email);
      for (const [path, name] of [
        ['/admin', 'institute'],
        ['/admin/users', 'users'],
        ['/admin/tool-providers', 'tool-providers'],
        ['/admin/lti-resources', 'lti-resources'],
        ['/admin/identity-providers', 'identity-providers'],
        ['/admin/audit', 'audit'],
      ] as const) {
        await phone.goto(`${world.baseUrl}/console${path}`);
        await phone.getByRole('heading', { level: 1 }).waitFor();
        await phone.waitForLoadState('networkidle');
        await assertNoHorizontalScroll(phone, `${path} at 390 px`);
        await checkScreen(phone, `admin-${name}-390px-${dialect}`);
      }
      await phone.context().close();
    });

    it('does not offer Administration to a teacher, and shows the service’s refusal at its address', async () => {
      const teacherPage = await signedInPage(world, teacher);
      const navigation = teacherPage.getByRole('navigation', { name: 'Console' });
      await navigation.getByRole('link', { name: 'Exams' }).waitFor();
      assert.equal(await navigation.getByRole('link', { name: 'Administration' }).count(), 0);
      assert.equal(await navigation.getByRole('link', { name: 'Outbox' }).count(), 0);

      await teacherPage.goto(`${world.baseUrl}/console/admin/users`);
      const refusal = teacherPage.getByRole('alert');
      await refusal.waitFor();
      assert.match(await refusal.innerText(), /not allowed to do this/);
      assert.equal(await teacherPage.locator('table').count(), 0, 'no user list');
      assert.doesNotMatch(await teacherPage.locator('main').innerText(), /grace@example\.org/);
      // Still signed in: a plain refusal does not end the session.
      assert.match(teacherPage.url(), /\/console\/admin\/users$/);
      await checkScreen(teacherPage, `admin-users-refused-${dialect}`);

      await teacherPage.goto(`${world.baseUrl}/console/admin/audit`);
      await teacherPage.getByRole('alert').waitFor();
      assert.equal(await teacherPage.locator('table').count(), 0, 'no audit log');
      await teacherPage.goto(`${world.baseUrl}/console/admin`);
      await teacherPage.getByRole('alert').waitFor();
      assert.equal(await teacherPage.getByLabel('Default language').count(), 0, 'no settings form');
      await teacherPage.context().close();
    });
  });
}
