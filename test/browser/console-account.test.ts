/**
 * The console's sign-in flows and "My account" in Chromium, on SQLite and PostgreSQL: forgot
 * password (the email from the SMTP server, its link, a used link), an invitation, the second factor
 * (enrolment with a computed TOTP code, sign-in with a code and with a recovery code, new recovery
 * codes, turning it off), API credentials (revealed, rotated: the old ones fail on a signed call),
 * a password change that ends another browser's session, an institute that requires a second
 * factor of administrators, sign-in through an OpenID Connect provider (the button, the round trip
 * against an in-process provider, an error code), and proctors and reviewers landing on My sessions.
 * Every screen and state gets checkScreen; the screens are checked at 390 px too.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { base32Decode, hotp, totpStep } from '../../src/security/totp.ts';
import { ApiClient } from '../helpers/client.ts';
import { httpRequest } from '../helpers/http.ts';
import { browserDialects } from '../helpers/server.ts';
import { runDueJobs } from '../mail/support.ts';
import { startTestProvider, type TestProvider } from '../http/staff/oidc-provider.support.ts';
import {
  assertNoHorizontalScroll,
  checkScreen,
  newPage,
  signIn,
  startConsoleWorld,
  TEST_PASSWORD,
  type ConsoleWorld,
} from './console/support.ts';

const NEW_PASSWORD = 'a brand new password for the test';
const PHONE = { width: 390, height: 844 };

/**
 * Codes of one TOTP secret as an authenticator app gives them, each for a later step than the last
 * (the service takes a step once), within the step either side of now that it accepts; waits for
 * the next step when those are used up.
 */
function authenticator(secret: string): () => Promise<string> {
  let lastStep = -1;
  return async () => {
    for (;;) {
      const now = totpStep(Date.now());
      const step = Math.max(now - 1, lastStep + 1);
      if (step <= now + 1) {
        lastStep = step;
        return hotp(base32Decode(secret), step);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };
}

/** The Cookie header of a page's browser context. */
async function cookieOf(page: Page): Promise<string> {
  const cookies = await page.context().cookies();
  return cookies.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ');
}

/** What GET /auth/session answers for a page's cookie (200 signed in, 403 not). */
async function sessionStatus(world: ConsoleWorld, page: Page): Promise<number> {
  return (
    await httpRequest({ url: `${world.baseUrl}/auth/session`, headers: { cookie: await cookieOf(page) } })
  ).status;
}

/** Types email and password on the sign-in page and presses "Sign in", staying on the page. */
async function typeCredentials(page: Page, world: ConsoleWorld, email: string, password = TEST_PASSWORD) {
  await page.goto(`${world.baseUrl}/console/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.waitForURL(/\/console\/sign-in\?reason=signed-out/);
}

/** The link of the newest email to `to` that matches `pattern`, after running the mail jobs. */
async function emailedLink(world: ConsoleWorld, dialect: 'sqlite' | 'postgres', to: string, pattern: RegExp) {
  await runDueJobs(world.server, dialect, world.server.app.clock);
  const message = world.smtp.messages.filter((candidate) => candidate.envelopeTo.includes(to)).at(-1);
  assert.ok(message !== undefined, `no email to ${to}`);
  const link = pattern.exec(message.text ?? '')?.[0];
  assert.ok(link !== undefined, message.text);
  return link;
}

/** Enrols a second factor on My account; returns the authenticator and the recovery codes shown. */
async function enrol(page: Page, name: string) {
  await page.getByRole('button', { name: 'Set up a second factor' }).click();
  await page.getByRole('img', { name: /QR code/ }).waitFor();
  const secret = (await page.getByLabel('Key for manual entry').innerText()).replaceAll(' ', '');
  await checkScreen(page, `${name}-enrol`);
  const code = authenticator(secret);
  await page.getByLabel('Code from your app').fill('000000');
  await page.getByRole('button', { name: 'Turn on the second factor' }).click();
  await page.getByRole('alert').filter({ hasText: 'That code is not right' }).waitFor();
  await checkScreen(page, `${name}-enrol-wrong-code`);
  await page.getByLabel('Code from your app').fill(await code());
  await page.getByRole('button', { name: 'Turn on the second factor' }).click();
  await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
  const recovery = await page.locator('.code-list code').allInnerTexts();
  assert.equal(recovery.length, 10);
  await checkScreen(page, `${name}-recovery-codes`);
  return { code, recovery };
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console sign-in flows and My account in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let idp: TestProvider;

    before(async () => {
      // The test provider is on loopback, which the guarded outbound client refuses unless named.
      world = await startConsoleWorld(dialect, { env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
      idp = await startTestProvider(`${world.baseUrl}/auth/oidc/callback`);
    });

    after(async () => {
      await idp?.close();
      await world?.close();
    });

    it('resets a forgotten password from the emailed link, once', async () => {
      const user = await world.staff('teacher');
      const page = await newPage(world);
      await page.goto(`${world.baseUrl}/console/sign-in`);
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
      await checkScreen(page, `forgot-password-${dialect}`);
      await page.getByLabel('Email').fill(user.email);
      await page.getByRole('button', { name: 'Send the link' }).click();
      await page.getByText('If this email belongs to an active account').waitFor();
      await checkScreen(page, `forgot-password-sent-${dialect}`);

      const link = await emailedLink(
        world,
        dialect,
        user.email,
        /http\S+\/console\/reset-password\?token=[\w-]+/,
      );
      await page.goto(link);
      await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
      // The rule is shown before anything is typed.
      await page.getByText('At least 12 characters').waitFor();
      await checkScreen(page, `reset-password-${dialect}`);
      await page.getByLabel('New password', { exact: true }).fill('short');
      await page.getByLabel('New password again').fill('short');
      await page.getByRole('button', { name: 'Set my new password' }).click();
      await page.getByText('Use at least 12 characters (this one has 5).').waitFor();
      await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await page.getByLabel('New password again').fill(`${NEW_PASSWORD}!`);
      await page.getByRole('button', { name: 'Set my new password' }).click();
      await page.getByText('The two passwords differ').waitFor();
      await checkScreen(page, `reset-password-mismatch-${dialect}`);
      await page.getByLabel('New password again').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Set my new password' }).click();
      await page.waitForURL(/\/console\/sign-in\?reason=password-set/);
      await page.getByText('Your password is set. Sign in with it.').waitFor();
      await checkScreen(page, `sign-in-password-set-${dialect}`);
      await signIn(page, world.baseUrl, user.email, NEW_PASSWORD);
      assert.equal(new URL(page.url()).pathname, '/console/exams');

      // The link worked once.
      const again = await newPage(world);
      await again.goto(link);
      await again.getByLabel('New password', { exact: true }).fill(`${NEW_PASSWORD} again`);
      await again.getByLabel('New password again').fill(`${NEW_PASSWORD} again`);
      await again.getByRole('button', { name: 'Set my new password' }).click();
      await again.getByText('This link has expired or was already used.').waitFor();
      await again.getByRole('link', { name: 'Ask for a new link' }).waitFor();
      await checkScreen(again, `reset-password-used-link-${dialect}`);
      await again.context().close();
      await page.context().close();
    });

    it('accepts an invitation: the new user chooses a password and signs in', async () => {
      const created = await world.server.user(world.instituteId, 'proctor', `invited-${dialect}@example.org`);
      const invitation = await world.server.app.services.staffAuth.invite(created.id);
      assert.match(invitation.url, /\/console\/accept-invitation\?token=/);
      const page = await newPage(world);
      await page.goto(invitation.url);
      await page.getByRole('heading', { name: 'Welcome to Invigil' }).waitFor();
      await checkScreen(page, `accept-invitation-${dialect}`);
      await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await page.getByLabel('New password again').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Set my password' }).click();
      await page.waitForURL(/reason=password-set/);
      await signIn(page, world.baseUrl, `invited-${dialect}@example.org`, NEW_PASSWORD);
      // A proctor lands on My sessions.
      assert.equal(new URL(page.url()).pathname, '/console/sessions');

      const broken = await newPage(world, PHONE);
      await broken.goto(`${world.baseUrl}/console/accept-invitation`);
      await broken.getByText('This address has no link code').waitFor();
      await assertNoHorizontalScroll(broken, 'invitation without a token at 390 px');
      await checkScreen(broken, `accept-invitation-no-token-390px-${dialect}`);
      await broken.context().close();
      await page.context().close();
    });

    it('enrols a second factor, signs in with a code and with a recovery code, renews the codes and turns it off', async () => {
      const user = await world.staff('teacher');
      const page = await newPage(world);
      await signIn(page, world.baseUrl, user.email);
      await page.getByRole('link', { name: 'My account' }).click();
      await page.getByRole('heading', { name: 'My account', level: 1 }).waitFor();
      await checkScreen(page, `account-${dialect}`);
      const { code, recovery } = await enrol(page, `account-2fa-${dialect}`);
      const download = page.waitForEvent('download');
      await page.getByRole('link', { name: 'Download as .txt' }).click();
      const saved = await download;
      assert.equal(saved.suggestedFilename(), 'invigil-recovery-codes.txt');
      const text = fs.readFileSync(await saved.path(), 'utf8');
      for (const recoveryCode of recovery) assert.ok(text.includes(recoveryCode), text);
      await page.getByRole('button', { name: 'I have saved them' }).click();
      await page.getByText('The second factor is on').waitFor();
      await checkScreen(page, `account-2fa-on-${dialect}`);

      // Sign-in now asks for a code.
      await signOut(page);
      await typeCredentials(page, world, user.email);
      await page.getByLabel('Code from your authenticator app').waitFor();
      await checkScreen(page, `sign-in-code-${dialect}`);
      await page.getByLabel('Code from your authenticator app').fill(await code());
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(/\/console\/exams/);

      // A recovery code works in its place, once.
      await signOut(page);
      await typeCredentials(page, world, user.email);
      await page.getByLabel('Code from your authenticator app').fill(recovery[0] ?? '');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(/\/console\/exams/);

      // New recovery codes, with a code from the app.
      await page.goto(`${world.baseUrl}/console/account`);
      await page.getByLabel('Code from your app').fill(await code());
      await page.getByRole('button', { name: 'Make new recovery codes' }).click();
      await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      const renewed = await page.locator('.code-list code').allInnerTexts();
      assert.equal(renewed.length, 10);
      assert.ok(!renewed.includes(recovery[1] ?? ''));
      await page.getByRole('button', { name: 'I have saved them' }).click();

      // Off, with the password and a confirmation.
      const secondFactor = page.getByRole('region', { name: 'Second factor' });
      await secondFactor.getByLabel('Your password').fill('not my password at all');
      await secondFactor.getByRole('button', { name: 'Turn off the second factor…' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Turn it off' }).click();
      await page.getByText('That password is not right').waitFor();
      await secondFactor.getByLabel('Your password').fill(TEST_PASSWORD);
      await secondFactor.getByRole('button', { name: 'Turn off the second factor…' }).click();
      await checkScreen(page, `account-2fa-turn-off-dialog-${dialect}`);
      await page.getByRole('dialog').getByRole('button', { name: 'Turn it off' }).click();
      await page.getByText('The second factor is off. You sign in with your password alone.').waitFor();
      await signOut(page);
      await signIn(page, world.baseUrl, user.email);
      await page.context().close();
    });

    it('reveals the API secret, then rotates the credentials: the old ones fail on a signed call', async () => {
      const user = await world.staff('teacher');
      assert.equal((await user.client.v3('GET', '/exams')).status, 200);
      const page = await newPage(world);
      await signIn(page, world.baseUrl, user.email);
      await page.goto(`${world.baseUrl}/console/account`);
      const credentials = page.getByRole('region', { name: 'API credentials' });
      await credentials.getByLabel('Your password').fill('wrong password, clearly');
      await credentials.getByRole('button', { name: 'Reveal the secret key' }).click();
      await credentials.getByText('That password is not right').waitFor();
      await credentials.getByLabel('Your password').fill(TEST_PASSWORD);
      await credentials.getByRole('button', { name: 'Reveal the secret key' }).click();
      const shown = credentials.getByLabel('Secret key');
      await shown.waitFor();
      assert.equal(await shown.innerText(), user.client.credentials.secretKey);
      await checkScreen(page, `account-secret-revealed-${dialect}`);

      await credentials.getByLabel('Your password').fill(TEST_PASSWORD);
      await credentials.getByRole('button', { name: 'Issue new credentials…' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByText('stop working at once').waitFor();
      await checkScreen(page, `account-rotate-dialog-${dialect}`);
      await dialog.getByRole('button', { name: 'Issue new credentials' }).click();
      await credentials.getByText('Your new credentials, shown only now.').waitFor();
      const apiToken = await credentials.getByLabel('API token').innerText();
      const secretKey = await credentials.getByLabel('Secret key').innerText();
      await checkScreen(page, `account-credentials-rotated-${dialect}`);

      assert.equal((await user.client.v3('GET', '/exams')).status, 403);
      const fresh = new ApiClient(world.baseUrl, { apiToken, secretKey });
      assert.equal((await fresh.v3('GET', '/exams')).status, 200);
      await page.context().close();
    });

    it('changes the password: another browser of the user is signed out, this one is not', async () => {
      const user = await world.staff('auditor');
      const here = await newPage(world);
      await signIn(here, world.baseUrl, user.email);
      const elsewhere = await newPage(world);
      await signIn(elsewhere, world.baseUrl, user.email);
      assert.equal(await sessionStatus(world, elsewhere), 200);

      await here.goto(`${world.baseUrl}/console/account`);
      const form = here.getByRole('region', { name: 'Password' });
      await form.getByLabel('Current password').fill('not the current one');
      await form.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await form.getByLabel('New password again').fill(NEW_PASSWORD);
      await form.getByRole('button', { name: 'Change password' }).click();
      await form.getByText('This is not your current password').waitFor();
      await checkScreen(here, `account-password-wrong-${dialect}`);
      await form.getByLabel('Current password').fill(TEST_PASSWORD);
      await form.getByRole('button', { name: 'Change password' }).click();
      await form.getByText('You were signed out everywhere else').waitFor();
      await checkScreen(here, `account-password-changed-${dialect}`);

      assert.equal(await sessionStatus(world, here), 200);
      assert.equal(await sessionStatus(world, elsewhere), 403);
      await elsewhere.goto(`${world.baseUrl}/console/exams`);
      await elsewhere.waitForURL(/\/console\/sign-in/);
      await here.context().close();
      await elsewhere.context().close();
    });

    it('signs out everywhere after a confirmation', async () => {
      const user = await world.staff('teacher');
      const here = await newPage(world);
      await signIn(here, world.baseUrl, user.email);
      const elsewhere = await newPage(world);
      await signIn(elsewhere, world.baseUrl, user.email);
      await here.goto(`${world.baseUrl}/console/account`);
      await here.getByRole('button', { name: 'Sign out everywhere…' }).click();
      await here.getByRole('dialog').getByRole('button', { name: 'Sign out everywhere' }).click();
      await here.waitForURL(/reason=signed-out/);
      assert.equal(await sessionStatus(world, here), 403);
      assert.equal(await sessionStatus(world, elsewhere), 403);
      await here.context().close();
      await elsewhere.context().close();
    });

    it('sends an administrator who must enrol a second factor to My account, and locks the rest', async () => {
      const strict = await world.server.institute(`Strict College ${dialect}`);
      const admin = await world.staff('administrator', { instituteId: strict });
      const setting = await admin.client.v3('PUT', '/institutes/:id', {
        id: strict,
        require_second_factor_for_administrators: true,
      });
      assert.equal(setting.status, 200, setting.text);
      const page = await newPage(world);
      await typeCredentials(page, world, admin.email);
      await page.waitForURL(/\/console\/account/);
      await page.getByRole('heading', { name: 'Set up a second factor to continue' }).waitFor();
      // Only what such a session may do is offered.
      assert.equal(await page.getByRole('region', { name: 'API credentials' }).count(), 0);
      await checkScreen(page, `account-enrolment-required-${dialect}`);
      await page.goto(`${world.baseUrl}/console/exams`);
      await page.getByRole('heading', { name: 'Set up a second factor first' }).waitFor();
      await checkScreen(page, `enrolment-lock-${dialect}`);
      // The service refuses the session's V3 calls whatever the console shows.
      const refused = await page.evaluate(async () => {
        const answer = await fetch('/api/v3/exams', { headers: { accept: 'application/vnd.procwise.v3' } });
        return answer.status;
      });
      assert.equal(refused, 403);

      await page.getByRole('link', { name: 'Set it up on My account' }).click();
      await enrol(page, `account-enrolment-${dialect}`);
      await page.getByRole('button', { name: 'I have saved them' }).click();
      await page.getByRole('region', { name: 'API credentials' }).waitFor();
      await page.getByRole('link', { name: 'Exams' }).click();
      await page.getByRole('heading', { name: 'Exams', level: 1 }).waitFor();
      await page.context().close();
    });

    it('offers "Sign in with" each OIDC provider, signs in through one, and explains an error code', async () => {
      const user = await world.staff('teacher');
      await world.server.app.services.identityProviders.createOidc({
        instituteId: world.instituteId,
        name: `Campus Login`,
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecret: idp.clientSecret,
      });
      idp.accounts.set(`account-${dialect}`, { email: user.email, email_verified: true });
      idp.next = { accountId: `account-${dialect}` };

      const page = await newPage(world);
      await page.goto(`${world.baseUrl}/console/sign-in`);
      const button = page.getByRole('link', { name: 'Sign in with Campus Login' });
      await button.waitFor();
      await checkScreen(page, `sign-in-with-provider-${dialect}`);
      await button.click();
      await page.waitForURL(/\/console\/exams/);
      assert.equal(await sessionStatus(world, page), 200);
      await page.context().close();

      // A user with a second factor gives its code after the provider, on the sign-in page.
      const guarded = await world.staff('teacher');
      const secret = await world.server.app.services.staffAuth.startSecondFactor(guarded.id);
      const code = authenticator(secret);
      await world.server.app.services.staffAuth.confirmSecondFactor(guarded.id, await code());
      idp.accounts.set(`guarded-${dialect}`, { email: guarded.email, email_verified: true });
      idp.next = { accountId: `guarded-${dialect}` };
      const second = await newPage(world);
      await second.goto(`${world.baseUrl}/console/sign-in`);
      await second.getByRole('link', { name: 'Sign in with Campus Login' }).click();
      await second.getByText("Your institute's sign-in worked").waitFor();
      // The pending sign-in's token is not left in the address.
      assert.equal(new URL(second.url()).hash, '');
      await checkScreen(second, `sign-in-provider-code-${dialect}`);
      await second.getByLabel('Code from your authenticator app').fill(await code());
      await second.getByRole('button', { name: 'Continue' }).click();
      await second.waitForURL(/\/console\/exams/);
      await second.context().close();

      const failed = await newPage(world, PHONE);
      await failed.goto(`${world.baseUrl}/console/sign-in?error=no_matching_user`);
      await failed.getByRole('alert').filter({ hasText: 'No active Invigil account' }).waitFor();
      await assertNoHorizontalScroll(failed, 'sign-in with an OIDC error at 390 px');
      await checkScreen(failed, `sign-in-oidc-error-390px-${dialect}`);
      await failed.context().close();
    });

    it('lands a proctor on My sessions with only the sessions assigned to them', async () => {
      const owner = await world.staff('teacher');
      const proctor = await world.staff('proctor');
      const colleague = await world.staff('proctor');
      const exam = await owner.client.v3('POST', '/exams', {
        name: `Biology ${dialect}`,
        type: 'record_review',
        duration_minutes: 60,
      });
      assert.equal(exam.status, 201, exam.text);
      const examId = (exam.json as { exam: { id: number } }).exam.id;
      const students: Record<string, number> = {};
      for (const name of ['Ada Mine', 'Bea Mine', 'Cem Theirs', 'Dan Nobody']) {
        const added = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
          exam_id: examId,
          name,
          email: `${name.replace(' ', '.').toLowerCase()}-${dialect}@example.org`,
        });
        assert.equal(added.status, 201, added.text);
        students[name] = (added.json as { student: { id: number } }).student.id;
      }
      for (const [name, who] of [
        ['Ada Mine', proctor],
        ['Bea Mine', proctor],
        ['Cem Theirs', colleague],
      ] as const) {
        const assigned = await owner.client.v3('POST', '/student_sessions/:id/assign_proctor', {
          id: students[name] ?? 0,
          proctor_id: who.id,
        });
        assert.equal(assigned.status, 200, assigned.text);
      }

      const page = await newPage(world);
      await signIn(page, world.baseUrl, proctor.email);
      assert.equal(new URL(page.url()).pathname, '/console/sessions');
      await page.getByRole('heading', { name: 'My sessions', level: 1 }).waitFor();
      await page.getByText('Ada Mine').waitFor();
      const names = await page.locator('tbody .name').allInnerTexts();
      assert.deepEqual(names.sort(), ['Ada Mine', 'Bea Mine']);
      const link = page.getByRole('link', { name: `Biology ${dialect}` }).first();
      assert.equal(await link.getAttribute('href'), `/console/exams/${examId}/monitor`);
      assert.match(await page.getByText(/Times in your time zone/).innerText(), /\(.+\)/);
      await checkScreen(page, `my-sessions-proctor-${dialect}`);
      await page.context().close();

      const phone = await newPage(world, PHONE);
      await signIn(phone, world.baseUrl, proctor.email);
      await phone.getByText('Bea Mine').waitFor();
      await assertNoHorizontalScroll(phone, 'My sessions at 390 px');
      await checkScreen(phone, `my-sessions-390px-${dialect}`);
      await phone.context().close();
    });

    it('lands a reviewer on My sessions, which says sessions are not assigned to reviewers', async () => {
      const reviewer = await world.staff('reviewer');
      const page = await newPage(world);
      await signIn(page, world.baseUrl, reviewer.email);
      assert.equal(new URL(page.url()).pathname, '/console/sessions');
      await page.getByText('Invigil does not assign sessions to reviewers').waitFor();
      await checkScreen(page, `my-sessions-reviewer-${dialect}`);
      await page.context().close();
    });

    it('keeps My account and the password pages readable at 390 px', async () => {
      const user = await world.staff('administrator');
      const page = await newPage(world, PHONE);
      await signIn(page, world.baseUrl, user.email);
      await page.goto(`${world.baseUrl}/console/account`);
      await page.getByRole('heading', { name: 'My account', level: 1 }).waitFor();
      await assertNoHorizontalScroll(page, 'My account at 390 px');
      await checkScreen(page, `account-390px-${dialect}`);
      await page.getByRole('button', { name: 'Set up a second factor' }).click();
      await page.getByRole('img', { name: /QR code/ }).waitFor();
      await assertNoHorizontalScroll(page, 'second-factor enrolment at 390 px');
      await checkScreen(page, `account-enrol-390px-${dialect}`);
      await page.context().close();

      const visitor = await newPage(world, PHONE);
      await visitor.goto(`${world.baseUrl}/console/forgot-password`);
      await visitor.getByRole('heading', { name: 'Reset your password' }).waitFor();
      await assertNoHorizontalScroll(visitor, 'forgot password at 390 px');
      await checkScreen(visitor, `forgot-password-390px-${dialect}`);
      await visitor.goto(`${world.baseUrl}/console/reset-password?token=not-a-real-token`);
      await visitor.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await visitor.getByLabel('New password again').fill(NEW_PASSWORD);
      await visitor.getByRole('button', { name: 'Set my new password' }).click();
      await visitor.getByText('This link has expired or was already used.').waitFor();
      await assertNoHorizontalScroll(visitor, 'reset with a dead link at 390 px');
      await checkScreen(visitor, `reset-password-dead-link-390px-${dialect}`);
      await visitor.context().close();
    });
  });
}
