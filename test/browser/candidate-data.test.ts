/**
 * The candidate's data download and "Who looked" in Chromium (docs/candidate-data.md): a finished
 * session's candidate asks for a code on the finished page, types the code from the email, and
 * downloads the zip, whose files are checked against the stored bytes; the same in Arabic (right to
 * left); and the console's review screen lists who looked. axe checks each step; screenshots go to
 * test-output/screenshots/candidate-data-*.png and console-who-looked.png.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import yauzl from 'yauzl';
import { catalogue } from '../../src/i18n/catalogues.ts';
import type { PageLocale } from '../../src/i18n/locales.ts';
import { type MessageValues, Translator } from '../../src/i18n/translate.ts';
import { SCREENSHOT_DIR } from '../helpers/browser.ts';
import { SAMPLE } from '../helpers/multipart.ts';
import { browserDialects } from '../helpers/server.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import {
  checkScreen,
  newPage,
  signedInPage,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';

const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

function wordsOf(locale: PageLocale): (key: string, values?: MessageValues) => string {
  const translator = new Translator(locale, catalogue(locale));
  return (key, values) => translator.t(key, values);
}

/** Every entry of a zip, read with yauzl (CRC and sizes checked). */
async function unzip(bytes: Buffer): Promise<Map<string, Buffer>> {
  const zip = await yauzl.fromBufferPromise(bytes, { lazyEntries: true, validateEntrySizes: true });
  const entries = new Map<string, Buffer>();
  try {
    for await (const entry of zip.eachEntry()) {
      const chunks: Buffer[] = [];
      for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      entries.set(entry.fileName, Buffer.concat(chunks));
    }
  } finally {
    zip.close();
  }
  return entries;
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`candidate data download in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let teacher: StaffUser;
    let examId: number;
    const sessions = new Map<
      string,
      { id: number; token: string; email: string; stored: Map<string, Buffer> }
    >();

    async function finishedSession(locale: PageLocale): Promise<void> {
      const email = `candidate-${locale}@example.org`;
      const answer = await teacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Ada Lovelace',
        email,
        language: locale,
      });
      assert.equal(answer.status, 201, answer.text);
      const student = (answer.json as { student: { id: number; token: string } }).student;
      const { db } = world.server.app.database;
      const { files } = world.server.app.services;
      const keep = (bytes: Buffer, name: string, type: string) =>
        files.keepStream(Readable.from([bytes]), {
          originalName: name,
          contentType: type,
          instituteId: world.instituteId,
        });
      const stored = new Map<string, Buffer>();
      const now = Date.now();
      const webcam = crypto.randomBytes(30_000);
      const webcamFile = await keep(webcam, 'webcam.webm', 'video/webm');
      stored.set('recordings/recording-webcam.webm', webcam);
      await db
        .insertInto('recordings')
        .values({
          student_session_id: student.id,
          source: 'webcam',
          status: 'completed',
          started_at: now,
          duration_seconds: 60,
          file_id: webcamFile.id,
          storage_key: webcamFile.storageKey,
          size: webcamFile.size,
          created_at: now,
          updated_at: now,
        })
        .execute();
      const upload = await keep(SAMPLE.pdf, 'answers.pdf', 'application/pdf');
      stored.set('uploads/answers.pdf', SAMPLE.pdf);
      await db
        .insertInto('session_files')
        .values({
          student_session_id: student.id,
          kind: 'upload',
          file_id: upload.id,
          sequence: 0,
          created_at: now,
        })
        .execute();
      const photoPath = path.join(world.server.database.dataDir, `id-${locale}.png`);
      fs.writeFileSync(photoPath, SAMPLE.png);
      await world.server.app.services.photos.attachPhoto(student.id, 'id_card', {
        field: 'photo',
        fileName: 'id.png',
        declaredType: 'image/png',
        path: photoPath,
        size: SAMPLE.png.length,
        head: SAMPLE.png.subarray(0, 64),
      });
      stored.set('photos/id-card.png', SAMPLE.png);
      await db
        .updateTable('student_sessions')
        .set({
          status: 'exam_finished',
          start_time: now - 30 * 60_000,
          end_time: now - 60_000,
          end_reason: 'finished',
        })
        .where('id', '=', student.id)
        .execute();
      sessions.set(locale, { id: student.id, token: student.token, email, stored });
    }

    /** The newest code emailed to `email`, from the outbox. */
    async function codeFor(email: string): Promise<string> {
      const row = await world.server.app.database.db
        .selectFrom('outbox')
        .select('text_body')
        .where('to_address', '=', email)
        .where('kind', '=', 'candidate_data_code')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      const code = /(\d{8})/.exec(row.text_body)?.[1];
      assert.ok(code !== undefined, 'the email carries the code');
      return code;
    }

    async function shot(page: Page, name: string): Promise<void> {
      await page.screenshot({
        path: path.join(SCREENSHOT_DIR, `candidate-data-${name}.png`),
        fullPage: true,
      });
    }

    before(async () => {
      world = await startConsoleWorld(dialect);
      teacher = await world.staff('teacher');
      const exam = await teacher.client.v3('POST', '/exams', {
        name: 'Data rights exam',
        type: 'record_review',
        duration_minutes: 60,
        web_cam: true,
        upload_answers: true,
        candidate_languages: 'en,ar',
      });
      assert.equal(exam.status, 201, exam.text);
      examId = (exam.json as { exam: { id: number } }).exam.id;
      await finishedSession('en');
      await finishedSession('ar');
    });
    after(() => world?.close());

    it('lists who looked on the console’s review screen', async () => {
      const en = sessions.get('en');
      assert.ok(en !== undefined);
      const page = await signedInPage(world, teacher);
      try {
        await page.goto(`${world.baseUrl}/console/sessions/${en.id}/review`);
        await page.locator('#who-looked').waitFor();
        // Opening the screen read the recordings and the photo: each a look, listed once refreshed.
        await page.locator('#who-looked-refresh').click();
        await page.locator('#who-looked-table tbody tr').first().waitFor();
        const rows = await page.locator('#who-looked-table tbody tr').allTextContents();
        assert.ok(
          rows.some((row) => row.includes('Recordings')),
          rows.join(' | '),
        );
        assert.ok(
          rows.some((row) => row.includes('Photos')),
          rows.join(' | '),
        );
        await page.locator('#who-looked').scrollIntoViewIfNeeded();
        await checkScreen(page, 'who-looked');
      } finally {
        await page.context().close();
      }
    });

    for (const locale of ['en', 'ar'] as const) {
      it(`lets a finished session’s candidate download their zip (${locale})`, async () => {
        const t = wordsOf(locale);
        const session = sessions.get(locale);
        assert.ok(session !== undefined);
        const page = await newPage(world);
        try {
          await page.goto(`${world.baseUrl}/room/${session.token}`);
          await page.locator('#stage-finished').waitFor();
          assert.equal(await page.locator('html').getAttribute('lang'), locale);
          await page.getByRole('heading', { name: t('room.finished.data.heading') }).waitFor();
          await assertNoSeriousAxeViolations(page, `finished page with the data section (${locale})`);
          await shot(page, `${locale}-1-start`);

          await page.getByRole('button', { name: t('room.finished.data.sendCode') }).click();
          await page.locator('#candidate-data-form').waitFor();
          assert.match((await page.locator('#candidate-data-sent').textContent()) ?? '', /•••@example\.org/);
          await page.getByLabel(t('room.finished.data.codeLabel')).fill('00000000');
          await page.getByRole('button', { name: t('room.finished.data.getLink') }).click();
          await page
            .locator('#candidate-data-problem', { hasText: t('room.finished.data.wrongCode') })
            .waitFor();
          await assertNoSeriousAxeViolations(page, `a wrong code (${locale})`);
          await shot(page, `${locale}-2-wrong-code`);

          await page.getByLabel(t('room.finished.data.codeLabel')).fill(await codeFor(session.email));
          await page.getByRole('button', { name: t('room.finished.data.getLink') }).click();
          const link = page.getByRole('link', { name: t('room.finished.data.download') });
          await link.waitFor();
          await assertNoSeriousAxeViolations(page, `the download link (${locale})`);
          await shot(page, `${locale}-3-ready`);

          const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
          assert.match(download.suggestedFilename(), /^exam-session-\d+-my-data\.zip$/);
          const saved = await download.path();
          const entries = await unzip(fs.readFileSync(saved));
          for (const [name, bytes] of session.stored) {
            const got = entries.get(name);
            assert.ok(got !== undefined, `${name} is in the zip`);
            assert.equal(sha256(got), sha256(bytes), `${name} is the stored file`);
          }
          const manifest = JSON.parse((entries.get('manifest.json') ?? Buffer.alloc(0)).toString('utf8')) as {
            files: { path: string; sha256: string }[];
            viewed_by: { what: string }[];
          };
          assert.deepEqual(manifest.files.map((file) => file.path).sort(), [...session.stored.keys()].sort());
          if (locale === 'en') {
            // The teacher's look on the review screen is in the candidate's list.
            assert.ok(manifest.viewed_by.some((view) => view.what === 'recordings'));
          }
          const summary = (entries.get('summary.txt') ?? Buffer.alloc(0)).toString('utf8');
          assert.ok(summary.includes(t('server.candidateData.summary.title', { exam: 'Data rights exam' })));
        } finally {
          await page.context().close();
        }
      });
    }

    it('offers the public request page, the same answer for any address', async () => {
      const page = await newPage(world);
      try {
        await page.goto(`${world.baseUrl}/my-data`);
        await assertNoSeriousAxeViolations(page, 'the request page');
        await page.getByLabel('Email address').fill('candidate-en@example.org');
        await page.getByRole('button', { name: 'Send me a code' }).click();
        await page.locator('#data-request-answer').waitFor();
        await assertNoSeriousAxeViolations(page, 'the request page, sent');
        await shot(page, 'en-4-request-page');
      } finally {
        await page.context().close();
      }
    });
  });
}
