/**
 * Every console screen in the pseudo-locale (en-XA: each catalogue letter accented, in brackets), in
 * Chromium on SQLite: an administrator signs in with `?lang=en-XA` and opens each screen with enough
 * data to show its content (exams, students, a finished session with an incident, emails in the
 * outbox, a tool provider and an LTI resource). No visible text may be plain English, except the data
 * this test made (names, emails, exam names, the emails' own text), codes (addresses, commands) and
 * the languages' own names in language lists ("Nederlands", which every reader should find as it is).
 * A few screens are saved as screenshots to look at for truncated or overflowing text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { LANGUAGE_NAMES, LOCALES, PSEUDO_LOCALE } from '../../src/i18n/locales.ts';
import { httpRequest } from '../helpers/http.ts';
import { runDueJobs } from '../mail/support.ts';
import {
  checkScreen,
  createExam,
  newPage,
  startConsoleWorld,
  TEST_PASSWORD,
  v3Call,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';
import { englishLeaks } from './pseudo.ts';

type Json = Record<string, unknown>;

describe('the console in the pseudo-locale [sqlite]', () => {
  let world: ConsoleWorld;
  let admin: StaffUser;
  let teacher: StaffUser;
  let page: Page;
  let examId = 0;
  let liveExamId = 0;
  let studentId = 0;
  let finishedId = 0;
  let outboxId = 0;
  /** Data this test made, which stays as it was written in every language. */
  const allowed: string[] = [];

  /** Adds a student to the exam (requirements skipped). Returns its id and room token. */
  async function addStudent(
    exam: number,
    name: string,
    email: string,
  ): Promise<{ id: number; token: string }> {
    const body = await v3Call(
      teacher,
      'POST',
      '/exams/:exam_id/student_sessions',
      { exam_id: exam, name, email, skip_requirements: true },
      201,
    );
    allowed.push(name, email);
    return body.student as { id: number; token: string };
  }

  async function room(token: string, action: string, body: Json = {}): Promise<void> {
    const answer = await httpRequest({
      url: `${world.baseUrl}/api/room/${token}/${action}`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(answer.status, 200, answer.text);
  }

  /** Opens a console path in the pseudo-locale. */
  async function open(path: string): Promise<void> {
    const join = path.includes('?') ? '&' : '?';
    await page.goto(`${world.baseUrl}/console${path}${join}lang=${PSEUDO_LOCALE}`);
    await page.locator('h1').first().waitFor();
  }

  /**
   * Waits for the screen to settle: `ready` shown (a text, or a selector starting with # or css=),
   * then a moment for the last requests.
   */
  async function settle(ready?: string): Promise<void> {
    if (ready?.startsWith('#') === true || ready?.startsWith('css=') === true)
      await page.locator(ready).first().waitFor();
    else if (ready !== undefined) await page.getByText(ready).first().waitFor();
    await page.waitForTimeout(400);
  }

  before(async () => {
    world = await startConsoleWorld('sqlite');
    admin = await world.staff('administrator');
    teacher = await world.staff('teacher');
    allowed.push(admin.email, teacher.email, 'Example University');

    examId = await createExam(teacher, 'Chemistry final', { web_cam: true, terms: 'I work alone.' });
    liveExamId = await createExam(teacher, 'Physics live', { type: 'live_proctoring', web_cam: true });
    allowed.push('Chemistry final', 'Physics live', 'I work alone.');
    const staff = await v3Call(admin, 'GET', '/institutes/:institute_id/users', {
      institute_id: world.instituteId,
    });
    for (const user of staff.users as Json[]) allowed.push(String(user.name));

    const ada = await addStudent(examId, 'Ada Lovelace', 'ada.lovelace@example.org');
    studentId = ada.id;
    const bob = await addStudent(examId, 'Bob Quiet', 'bob.quiet@example.org');
    await addStudent(liveExamId, 'Cleo Live', 'cleo.live@example.org');
    // Bob sits and finishes the exam, with an incident: a session to review.
    await room(bob.token, 'start', { terms_accepted: true });
    await v3Call(
      teacher,
      'POST',
      '/student_sessions/:id/incidents',
      { id: bob.id, comment: 'Looked away', offset_time: 10 },
      201,
    );
    allowed.push('Looked away');
    await room(bob.token, 'finish');
    finishedId = bob.id;
    // Ada's exam link: an email in the outbox.
    await v3Call(teacher, 'POST', '/exams/:id/send_emails', { id: examId });
    await runDueJobs(world.server, 'sqlite', world.server.app.clock);
    const outbox = await v3Call(admin, 'GET', '/outbox', {});
    const messages = outbox.messages as Json[];
    outboxId = Number(messages[0]?.id);
    for (const message of messages) {
      const full = await v3Call(admin, 'GET', '/outbox/:id', { id: Number(message.id) });
      const { subject, text } = full.message as { subject: string; text: string };
      allowed.push(subject, text);
    }

    const provider = await v3Call(
      admin,
      'POST',
      '/tool_providers',
      {
        name: 'Campus Moodle',
        lti_version: '1.1',
        consumer_key: 'moodle-key',
        shared_secret: 'a-secret-1234',
      },
      201,
    );
    const providerId = Number((provider.tool_provider as Json).id);
    await v3Call(
      admin,
      'POST',
      '/lti_resources',
      {
        tool_provider_id: providerId,
        resource_link_id: 'course-7-link',
        title: 'Week 7 quiz',
        exam_id: examId,
      },
      201,
    );
    allowed.push('Campus Moodle', 'moodle-key', 'course-7-link', 'Week 7 quiz');

    page = await newPage(world);
  });

  after(async () => {
    await world?.close();
  });

  it('shows every screen without plain English', async () => {
    const origin = world.baseUrl;
    // Codes and addresses: the same in every language.
    allowed.push(
      `${origin}/lti/login`,
      `${origin}/lti/launch`,
      `${origin}/lti/jwks`,
      `${origin}/auth/oidc/callback`,
      'openid email profile',
      'email_verified',
      'invigil idp create --protocol saml',
      'students.csv',
      'manifest.json',
      'https://lms.example.org/invigil',
      'LTI 1.1',
      'LTI',
      ...LOCALES.map((locale) => LANGUAGE_NAMES[locale]),
    );
    /** What a screen shows as data or code besides `allowed`: the audit log's requests and browser. */
    const shownData: Readonly<Record<string, () => Promise<string[]>>> = {
      'admin-audit': async () => [
        ...(await page.locator('table code').allTextContents()),
        await page.evaluate(() => navigator.userAgent),
      ],
      // The command an operator types, and a claim's name.
      'admin-identity-providers': async () => [
        ...(await page.locator('pre code').allTextContents()),
        'email',
      ],
      // The messages an administrator rewords: their keys and the catalogue's text in the language picked.
      'admin-wording': async () => [
        ...(await page.locator('ul.messages code').allTextContents()),
        ...(await page
          .locator('ul.messages p.catalogue')
          .evaluateAll((lines) =>
            lines.flatMap((line) =>
              [...line.childNodes]
                .filter((node) => node.nodeType === Node.TEXT_NODE)
                .map((node) => node.textContent ?? ''),
            ),
          )),
        '{name}',
      ],
      // The email as a student reads it, in the student's language.
      'student-emails': async () => [
        ...(await page.locator('pre').allTextContents()),
        'sample.student@example.invalid',
        'Sample Student',
      ],
    };
    const leaks: string[] = [];
    const check = async (screen: string, extra: readonly string[] = []): Promise<void> => {
      for (const leak of await englishLeaks(page, [...allowed, ...extra]))
        leaks.push(`${screen} ${leak.where}: ${leak.text}`);
      // Longer words must wrap, not widen the page.
      const wide = await page.evaluate(() => {
        const overflow = document.documentElement.scrollWidth - window.innerWidth;
        if (overflow <= 1) return undefined;
        // The innermost elements that reach past the window's edge: where the long words are.
        const past = [...document.body.querySelectorAll('*')].filter(
          (element) =>
            element.getBoundingClientRect().right > window.innerWidth + 1 ||
            (element.scrollWidth > element.clientWidth + 1 &&
              getComputedStyle(element).overflowX === 'visible'),
        );
        const innermost = past.filter(
          (element) => !past.some((other) => other !== element && element.contains(other)),
        );
        const names = innermost
          .slice(0, 3)
          .map(
            (element) =>
              `${element.tagName.toLowerCase()}${element.className === '' ? '' : `.${String(element.className).split(' ')[0]}`}`,
          );
        return `the page is ${overflow}px wider than the window (${names.join(', ')})`;
      });
      if (wide !== undefined) leaks.push(`${screen}: ${wide}`);
    };

    // Before signing in.
    await open('/sign-in');
    await settle();
    await check('sign-in');
    await checkScreen(page, 'pseudo-sign-in');
    await open('/forgot-password');
    await settle();
    await check('forgot-password');
    await open('/reset-password?token=not-a-token');
    await settle();
    await check('reset-password');
    await open('/accept-invitation?token=not-a-token');
    await settle();
    await check('accept-invitation');

    // Signing in, in the pseudo-locale.
    await open('/sign-in');
    await page.locator('#email').fill(admin.email);
    await page.locator('#password').fill(TEST_PASSWORD);
    await page.locator('form button[type="submit"]').click();
    await page.waitForURL((url) => !url.pathname.startsWith('/console/sign-in'));

    const screens: readonly (readonly [string, string, string?])[] = [
      ['/exams', 'exams', 'Chemistry final'],
      ['/exams/new', 'exam-new'],
      [`/exams/${examId}`, 'exam-settings'],
      [`/exams/${examId}/instructions`, 'instructions'],
      [`/exams/${examId}/students`, 'students', 'Ada Lovelace'],
      [`/exams/${examId}/students/new`, 'student-new'],
      [`/exams/${examId}/students/${studentId}/edit`, 'student-edit'],
      [`/exams/${examId}/students/import`, 'student-import'],
      [`/exams/${examId}/students/emails`, 'student-emails'],
      [`/exams/${examId}/monitor`, 'monitor', 'Ada Lovelace'],
      [`/exams/${liveExamId}/live`, 'live-wall'],
      [`/exams/${examId}/review`, 'review-queue', 'Bob Quiet'],
      [`/exams/${examId}/export`, 'export'],
      [`/sessions/${finishedId}/review`, 'session-review', 'Looked away'],
      ['/sessions', 'my-sessions'],
      ['/outbox', 'outbox', 'ada.lovelace@example.org'],
      [`/outbox/${outboxId}`, 'outbox-message'],
      ['/admin', 'admin-institute'],
      ['/admin/users', 'admin-users', admin.email],
      [`/admin/users/${teacher.id}`, 'admin-user', '#user-email'],
      ['/admin/tool-providers', 'admin-tool-providers', 'Campus Moodle'],
      ['/admin/lti-resources', 'admin-lti-resources', 'Week 7 quiz'],
      ['/admin/identity-providers', 'admin-identity-providers'],
      ['/admin/audit', 'admin-audit'],
      ['/admin/retention', 'admin-retention'],
      ['/admin/wording', 'admin-wording', 'css=ul.messages li'],
      ['/account', 'account'],
      ['/lti/deep-link?ticket=not-a-ticket', 'lti-deep-link', 'Chemistry final'],
      ['/no-such-page', 'not-found'],
    ];
    const screenshots = new Set([
      'exams',
      'students',
      'session-review',
      'admin-institute',
      'account',
      'outbox',
      'exam-settings',
      'admin-wording',
    ]);
    for (const [path, name, ready] of screens) {
      await open(path);
      await settle(ready);
      await check(name, (await shownData[name]?.()) ?? []);
      if (screenshots.has(name)) await checkScreen(page, `pseudo-${name}`);
    }

    assert.deepEqual(leaks, [], 'plain English in the pseudo-locale');
  });
});
