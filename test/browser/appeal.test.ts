/**
 * Contesting a verdict end to end in Chromium (docs/appeals.md): a `violation` verdict emails the
 * candidate in their language (over the test SMTP server) with the room link; the candidate opens
 * it, appeals with a statement and a file on the finished page; the reviewer who gave the verdict is
 * refused in the console with a clear message; a second reviewer overturns it; the outcome is then
 * visible in V3, the PDF report, the webhooks and the candidate's finished page. English and
 * Arabic (right to left); axe on every step; screenshots in test-output/screenshots/appeal-*.png
 * and console-appeal-*.png.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { catalogue } from '../../src/i18n/catalogues.ts';
import type { PageLocale } from '../../src/i18n/locales.ts';
import { type MessageValues, Translator } from '../../src/i18n/translate.ts';
import { SCREENSHOT_DIR } from '../helpers/browser.ts';
import { object, type Json } from '../helpers/json.ts';
import { SAMPLE } from '../helpers/multipart.ts';
import { pdfPages } from '../helpers/pdf.ts';
import { browserDialects } from '../helpers/server.ts';
import { runDueJobs } from '../mail/support.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import {
  checkScreen,
  createExam,
  newPage,
  signedInPage,
  startConsoleWorld,
  v3Call,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';

function wordsOf(locale: PageLocale): (key: string, values?: MessageValues) => string {
  const translator = new Translator(locale, catalogue(locale));
  return (key, values) => translator.t(key, values);
}

/** A webhook receiver on 127.0.0.1 that keeps every body. */
async function startReceiver(): Promise<{ url: string; bodies: Json[]; close(): Promise<void> }> {
  const bodies: Json[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      bodies.push(object(JSON.parse(body), 'webhook'));
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    bodies,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`an appeal decided by a second reviewer, in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let teacher: StaffUser;
    let first: StaffUser;
    let second: StaffUser;
    let examId: number;

    const runJobs = () => runDueJobs(world.server, dialect, world.server.app.clock);

    async function shot(page: Page, name: string): Promise<void> {
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `appeal-${name}.png`), fullPage: true });
    }

    /** A finished session whose candidate reads `locale`. Returns its id and email. */
    async function finishedSession(locale: PageLocale): Promise<{ id: number; email: string }> {
      const email = `appeal-${locale}-${Date.now()}@example.org`;
      const body = await v3Call(
        teacher,
        'POST',
        '/exams/:exam_id/student_sessions',
        { exam_id: examId, name: 'Ada Lovelace', email, language: locale },
        201,
      );
      const id = Number(object(body.student, 'student').id);
      const now = Date.now();
      await world.server.app.database.db
        .updateTable('student_sessions')
        .set({
          status: 'exam_finished',
          start_time: now - 30 * 60_000,
          end_time: now - 60_000,
          end_reason: 'finished',
        })
        .where('id', '=', id)
        .execute();
      return { id, email };
    }

    before(async () => {
      receiver = await startReceiver();
      world = await startConsoleWorld(dialect, { env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
      const administrator = await world.staff('administrator');
      teacher = await world.staff('teacher');
      first = await world.staff('reviewer');
      second = await world.staff('reviewer');
      await v3Call(administrator, 'PATCH', '/institutes/:id', {
        id: world.instituteId,
        callback_url: receiver.url,
        exam_finalized_emails_enabled: false,
      });
      examId = await createExam(teacher, 'Constitutional law', { candidate_languages: 'en,ar' });
    });
    after(async () => {
      await world?.close();
      await receiver?.close();
    });

    for (const locale of ['en', 'ar'] as const) {
      it(`a violation is appealed and overturned, visible everywhere (${locale})`, async () => {
        const t = wordsOf(locale);
        const session = await finishedSession(locale);
        await v3Call(first, 'PUT', '/student_sessions/:id/review', {
          id: session.id,
          verdict: 'violation',
          comment: 'A second person in view',
        });

        // The candidate's email, in their language, with the room link.
        await runJobs();
        const notice = world.smtp.messages.find((message) => message.to.includes(session.email));
        assert.ok(notice !== undefined, 'the verdict notice was sent');
        assert.equal(notice.subject, t('email.verdictNotice.subject', { exam: 'Constitutional law' }));
        const link = new RegExp(`${world.baseUrl}/room/[0-9a-f]{32}`).exec(notice.text ?? '')?.[0];
        assert.ok(link !== undefined, notice.text);

        // The finished page offers the appeal.
        const page = await newPage(world);
        try {
          await page.goto(link);
          await page.locator('#stage-finished').waitFor();
          assert.equal(await page.locator('html').getAttribute('lang'), locale);
          await page.getByRole('heading', { name: t('room.finished.appeal.heading') }).waitFor();
          await page.locator('#appeal').scrollIntoViewIfNeeded();
          await assertNoSeriousAxeViolations(page, `the appeal form (${locale})`);
          await shot(page, `${locale}-1-form`);
          await page
            .getByLabel(t('room.finished.appeal.statementLabel'))
            .fill('My sister walked in by mistake.');
          await page
            .getByLabel(t('room.finished.appeal.filesLabel'))
            .setInputFiles({ name: 'note.pdf', mimeType: 'application/pdf', buffer: SAMPLE.pdf });
          await page.getByRole('button', { name: t('room.finished.appeal.submit') }).click();
          await page.locator('#appeal-status', { hasText: t('room.finished.appeal.pending') }).waitFor();
          await assertNoSeriousAxeViolations(page, `the appeal sent (${locale})`);
          await shot(page, `${locale}-2-sent`);
        } finally {
          await page.context().close();
        }

        // The queue lists it first with its badge; the first reviewer is refused, the second decides.
        const own = await signedInPage(world, first);
        try {
          await own.goto(`${world.baseUrl}/console/exams/${examId}/review`);
          const firstRow = own.locator('tbody tr').first();
          // The rows replace a "Loading…" row: wait for a student's link.
          await firstRow.getByRole('link').waitFor();
          assert.ok(
            ((await firstRow.textContent()) ?? '').includes('Appeal'),
            (await firstRow.textContent()) ?? '',
          );
          if (locale === 'en') await checkScreen(own, 'appeal-queue');
          await own.goto(`${world.baseUrl}/console/sessions/${session.id}/review`);
          await own.locator('#appeal-decision').waitFor();
          await own.getByLabel('Overturned').check();
          await own.getByRole('button', { name: 'Decide the appeal' }).click();
          await own
            .getByRole('alert')
            .filter({ hasText: 'another reviewer must decide this appeal' })
            .waitFor();
          await own.locator('#appeal-heading').scrollIntoViewIfNeeded();
          if (locale === 'en') await checkScreen(own, 'appeal-refused');
        } finally {
          await own.context().close();
        }
        const deciding = await signedInPage(world, second);
        try {
          await deciding.goto(`${world.baseUrl}/console/sessions/${session.id}/review`);
          await deciding.locator('#appeal-decision').waitFor();
          assert.equal(
            await deciding.locator('#appeal-statement').textContent(),
            'My sister walked in by mistake.',
          );
          await deciding.getByLabel('Overturned').check();
          await deciding.getByLabel('Comment (the candidate sees it)').fill('A family member, not help.');
          await deciding.getByRole('button', { name: 'Decide the appeal' }).click();
          await deciding.locator('#appeal-decided').waitFor();
          await deciding.locator('.verdict .current .verdict-passed').waitFor();
          await deciding.locator('#appeal-heading').scrollIntoViewIfNeeded();
          if (locale === 'en') await checkScreen(deciding, 'appeal-decided');
        } finally {
          await deciding.context().close();
        }

        // V3, the report and the webhooks carry it.
        const appeal = object(
          (await v3Call(teacher, 'GET', '/student_sessions/:id/appeal', { id: session.id })).appeal,
          'appeal',
        );
        assert.equal(appeal.status, 'overturned');
        assert.equal(object(appeal.decided_by, 'decided_by').id, second.id);
        const review = object(
          (await v3Call(teacher, 'GET', '/student_sessions/:id/review', { id: session.id })).review,
          'review',
        );
        assert.deepEqual(
          (review.history as Json[]).map((entry) => entry.verdict),
          ['violation', 'passed'],
        );
        const report = await teacher.client.v3('GET', '/student_sessions/:id/report.pdf', { id: session.id });
        assert.equal(report.status, 200);
        const text = pdfPages(report.bytes).join('\n');
        assert.ok(text.includes('Overturned: the verdict became Passed'), text);
        assert.ok(text.includes('My sister walked in by mistake.'), text);
        await runJobs();
        const mine = (type: string) =>
          receiver.bodies.filter(
            (body) => body.type === type && object(body.data, 'data').student_session_id === session.id,
          );
        assert.equal(mine('student_session.appealed').length, 1);
        const [decided] = mine('student_session.appeal_decided');
        assert.equal(object(decided?.data, 'data').appeal_status, 'overturned');
        assert.equal(object(decided?.data, 'data').verdict, 'passed');

        // The candidate sees the outcome.
        const after = await newPage(world);
        try {
          await after.goto(link);
          await after.locator('#appeal-status', { hasText: t('room.finished.appeal.overturned') }).waitFor();
          await after.locator('#appeal').scrollIntoViewIfNeeded();
          await assertNoSeriousAxeViolations(after, `the decided appeal (${locale})`);
          await shot(after, `${locale}-3-overturned`);
        } finally {
          await after.context().close();
        }
      });
    }
  });
}
