/**
 * The institute's record of processing (docs/data-protection.md): a PDF generated from the
 * institute's actual settings, read back with poppler as its data protection officer would read it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../../src/domain/access.ts';
import { invalid, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';
import { V3_ACCEPT } from '../../helpers/client.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { pdfInk, pdfPages } from '../../helpers/pdf.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { consoleV3, signIn, staffUser } from '../staff/support.ts';

type Staff = Awaited<ReturnType<typeof staffUser>>;

const RECORD = '/institutes/:id/record_of_processing';

/** The text of a PDF, without the direction marks pdftotext adds around right-to-left stretches. */
function pdfText(bytes: Uint8Array): string {
  return pdfPages(bytes)
    .join('\n')
    .replace(/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, '')
    .replace(/[ \t]+/g, ' ');
}

function assertPdf(answer: HttpAnswer, instituteId: number, language: string): void {
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.headers['content-type'], 'application/pdf');
  const name = `institute-${instituteId}-record-of-processing-${language}.pdf`;
  assert.equal(
    answer.headers['content-disposition'],
    `attachment; filename="${name}"; filename*=UTF-8''${name}`,
  );
  assert.equal(answer.headers['cache-control'], 'private, no-store');
  assert.equal(answer.headers['content-length'], String(answer.bytes.length));
  assert.equal(answer.bytes.subarray(0, 5).toString('latin1'), '%PDF-');
}

for (const dialect of DIALECTS) {
  describe(`GET /api/v3/institutes/:id/record_of_processing [${dialect}]`, () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 15, 0));
    let server: TestServer;
    let institute: number;
    let otherInstitute: number;
    let admin: Staff;
    let teacher: Staff;
    const others: Staff[] = [];

    before(async () => {
      server = await startTestServer(dialect, { clock });
      institute = await server.institute('Hogeschool Noordkust');
      otherInstitute = await server.institute('Elsewhere College');
      await server.app.database.db
        .updateTable('institutes')
        .set({
          session_retention_period: 45,
          privacy_contact: 'privacy@noordkust.example',
          dpo_name: 'Mr. Bram de Vries',
          dpo_email: 'fg@noordkust.example',
          appeal_period_days: 21,
          callback_url: 'https://hooks.noordkust.example/invigil',
        })
        .where('id', '=', institute)
        .execute();
      await server.app.database.db
        .insertInto('retention_policies')
        .values({
          institute_id: institute,
          kind: 'recording',
          days: 10,
          updated_by: null,
          updated_at: clock.now(),
        })
        .execute();
      admin = await staffUser(server, institute, 'administrator');
      teacher = await staffUser(server, institute, 'teacher');
      for (const role of ['proctor', 'reviewer', 'auditor'] as const)
        others.push(await staffUser(server, institute, role));
      const actor: Actor = { id: teacher.id, instituteId: institute, role: 'teacher' };
      await server.app.services.exams.create(actor, {
        name: 'Statistics',
        type: 'record_review',
        duration_minutes: 60,
        web_cam: true,
        screen_share: true,
      });
      await server.app.services.exams.create(actor, {
        name: 'Essay',
        type: 'record_review',
        duration_minutes: 60,
        web_cam: true,
        upload_answers: true,
      });
      await server.app.services.exams.create(actor, {
        name: 'Oral',
        type: 'classroom',
        duration_minutes: 30,
        web_cam: false,
      });
    });

    after(() => server.close());

    const record = (user: Staff, id: number | string, query: Record<string, string> = {}) =>
      user.client.v3('GET', RECORD, { id, ...query });

    it('writes the institute’s settings in English: contacts, data in use, processors, retention', async () => {
      const answer = await record(admin, institute, { language: 'en' });
      assertPdf(answer, institute, 'en');
      const text = pdfText(answer.bytes);
      for (const expected of [
        'Record of processing activities',
        'Hogeschool Noordkust',
        'privacy@noordkust.example',
        'Mr. Bram de Vries <fg@noordkust.example>',
        '21 days after a final verdict',
        'Personal data in use across 3 exams',
        'Webcam recording',
        'Used in 2 of 3 exams',
        'Screen recording',
        'Used in 1 of 3 exams',
        'Phone camera recording',
        'Not used',
        'Administrators: 1',
        // The storage the test server was given: the server's disk, or the in-process S3 bucket.
        process.env.TEST_STORAGE === 's3'
          ? 'S3-compatible object storage at'
          : 'The disk of the Invigil server',
        'No mail server is configured',
        'The media engine inside Invigil',
        'Events about sessions are sent to hooks.noordkust.example',
        'Deleted 45 days after the session ends',
        'Deleted 30 days after the session ends, or 24 hours after a final verdict',
        'No session is under a legal hold',
        'Generated from the settings in Invigil on 2026-11-21 15:00:00',
        'Page 1 of',
      ]) {
        assert.ok(text.includes(expected), `the record shows "${expected}":\n${text}`);
      }
      assert.doesNotMatch(text, /\[U\+|pdf\.record\./);
      // The institute's own period for recordings, beside the others that follow the session period.
      assert.match(text, /Recordings Deleted 10 days after the session ends/);
      assert.match(text, /Face photo Deleted 45 days after the session ends/);
      // Every stored file is sealed under the institute's data key (docs/storage.md).
      assert.match(text, /Stored files encrypted at\s+Yes/);
      assert.ok(pdfInk(answer.bytes, 1, { x: 50, y: 40, width: 250, height: 60 }) > 0.05);
    });

    it('follows the institute’s default language, and shows a legal hold and a changed period', async () => {
      const db = server.app.database.db;
      await db
        .updateTable('institutes')
        .set({ default_language: 'nl', session_retention_period: 60 })
        .where('id', '=', institute)
        .execute();
      const actor: Actor = { id: teacher.id, instituteId: institute, role: 'teacher' };
      const exam = await server.app.services.exams.create(actor, {
        name: 'Held',
        type: 'record_review',
        duration_minutes: 60,
      });
      const session = await server.app.services.studentSessions.create(actor, exam.id, {
        name: 'Held Candidate',
        email: 'held@example.org',
      });
      await db
        .updateTable('student_sessions')
        .set({ legal_hold: true })
        .where('id', '=', session.id)
        .execute();
      try {
        const answer = await record(admin, institute);
        assertPdf(answer, institute, 'nl');
        const text = pdfText(answer.bytes);
        for (const expected of [
          'Register van verwerkingsactiviteiten',
          'Functionaris voor',
          'Mr. Bram de Vries <fg@noordkust.example>',
          'Verwijderd 60 dagen na het einde van de sessie',
          '1 sessie valt onder een bewaarplicht',
        ]) {
          assert.ok(text.includes(expected), `the record shows "${expected}":\n${text}`);
        }
      } finally {
        await db
          .updateTable('institutes')
          .set({ default_language: 'en', session_retention_period: 45 })
          .where('id', '=', institute)
          .execute();
      }
    });

    it('writes it in Arabic, right to left, the names as typed', async () => {
      const answer = await record(admin, institute, { language: 'ar' });
      assertPdf(answer, institute, 'ar');
      const text = pdfText(answer.bytes);
      for (const expected of [
        'سجل أنشطة المعالجة',
        'مسؤول حماية البيانات',
        'Hogeschool Noordkust',
        'Mr. Bram de Vries',
        'fg@noordkust.example',
        'مدة الاحتفاظ',
      ]) {
        assert.ok(text.includes(expected), `the record shows "${expected}":\n${text}`);
      }
      assert.doesNotMatch(text, /Record of processing|\[U\+/);
      // The title is drawn at the right margin, nothing where an English one would start.
      assert.ok(pdfInk(answer.bytes, 1, { x: 400, y: 50, width: 145, height: 24 }) > 0.05);
      assert.equal(pdfInk(answer.bytes, 1, { x: 50, y: 50, width: 150, height: 24 }), 0);
    });

    it('records each download in the audit log', async () => {
      const downloads = () =>
        server.app.database.db
          .selectFrom('audit_events')
          .select(['user_id', 'action', 'target_type', 'target_id', 'status'])
          .where('action', '=', 'record_of_processing_downloaded')
          .orderBy('id')
          .execute();
      const earlier = (await downloads()).length;
      assertPdf(await record(admin, institute, { language: 'en' }), institute, 'en');
      const events = await downloads();
      assert.equal(events.length, earlier + 1);
      const last = events.at(-1);
      assert.deepEqual(
        { ...last, target_id: Number(last?.target_id) },
        {
          user_id: admin.id,
          action: 'record_of_processing_downloaded',
          target_type: 'institutes',
          target_id: institute,
          status: 200,
        },
      );
    });

    it('answers 403 to every member who is not an administrator, and records nothing', async () => {
      const count = async () =>
        (
          await server.app.database.db
            .selectFrom('audit_events')
            .select('id')
            .where('action', '=', 'record_of_processing_downloaded')
            .execute()
        ).length;
      const earlier = await count();
      for (const user of [teacher, ...others]) {
        const answer = await record(user, institute);
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      }
      assert.equal(await count(), earlier);
    });

    it('answers 404 for another institute, a missing one and a word', async () => {
      const other = await record(admin, otherInstitute);
      assert.equal(other.status, 404, other.text);
      assert.deepEqual(other.json, notFound('Institute', otherInstitute));
      const missing = await record(admin, 987654321);
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.json, notFound('Institute', 987654321));
      const word = await record(admin, 'abc');
      assert.equal(word.status, 404);
      assert.deepEqual(word.json, notFound('Institute', 'abc'));
    });

    it('answers 422 naming language for a language the service does not speak', async () => {
      const answer = await record(admin, institute, { language: 'pt' });
      assert.equal(answer.status, 422, answer.text);
      assert.deepEqual(answer.json, invalid('language', 'is not included in the list'));
    });

    it('is open to the console with its session cookie', async () => {
      const browser = await signIn(server, admin.email);
      const answer = await consoleV3(server, browser, 'GET', `/institutes/${institute}/record_of_processing`);
      assertPdf(answer, institute, 'en');
      const teacherBrowser = await signIn(server, teacher.email);
      const refused = await consoleV3(
        server,
        teacherBrowser,
        'GET',
        `/institutes/${institute}/record_of_processing`,
      );
      assert.equal(refused.status, 403);
    });

    it('refuses unsigned, wrongly signed, replayed and stale requests, and answers 406 without V3 in Accept', async () => {
      const id = institute;
      const unsigned = await admin.client.v3('GET', RECORD, { id }, { unsigned: true });
      assert.equal(unsigned.status, 403);
      assert.deepEqual(unsigned.json, NOT_AUTHORIZED);
      const wrong = await admin.client.v3('GET', RECORD, { id }, { signature: 'ab'.repeat(32) });
      assert.equal(wrong.status, 403);
      assert.deepEqual(wrong.json, NOT_AUTHORIZED);
      const nonce = String(Date.now());
      const timestamp = clock.now();
      assertPdf(await admin.client.v3('GET', RECORD, { id }, { nonce, timestamp }), id, 'en');
      const replay = await admin.client.v3('GET', RECORD, { id }, { nonce, timestamp });
      assert.equal(replay.status, 403);
      assert.deepEqual(replay.json, NOT_AUTHORIZED);
      const stale = await admin.client.v3(
        'GET',
        RECORD,
        { id },
        { timestamp: clock.now() - (86400 + 60) * 1000 },
      );
      assert.equal(stale.status, 403);
      const pdfAccept = await admin.client.v3(
        'GET',
        RECORD,
        { id },
        { headers: { accept: 'application/pdf' } },
      );
      assert.equal(pdfAccept.status, 406);
      const both = await admin.client.v3(
        'GET',
        RECORD,
        { id },
        { headers: { accept: `${V3_ACCEPT}, application/pdf` } },
      );
      assertPdf(both, id, 'en');
    });
  });
}
