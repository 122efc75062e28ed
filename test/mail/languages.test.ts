/**
 * Emails in the reader's language (docs/languages.md, "Emails"): a candidate's email in the
 * student's own language (the session's `language`, else the exam's, else the institute's), sent
 * over a real SMTP server; Arabic right to left; the console's preview in the language the student
 * would get; staff emails in the institute's language.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { examEndedMail, passwordResetMail, staffInvitationMail } from '../../src/domain/mail/templates.ts';
import { candidateMailLocale, staffMailLocale } from '../../src/domain/mail/mail-language.ts';
import { translator } from '../../src/i18n/catalogues.ts';
import { object } from '../helpers/json.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import type { Scalar } from '../helpers/signing.ts';
import { runDueJobs, startSmtpServer, type ReceivedMail, type TestSmtpServer } from './support.ts';

type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://exams.example.org';

describe('the language of an email', () => {
  const exam = { instituteId: 1, exam: 'fr', institute: 'nl', allowed: null };

  it('is the candidate’s pick, then the student’s, the exam’s and the institute’s language', () => {
    assert.equal(candidateMailLocale(exam, { chosen: 'it', student: 'de' }), 'it');
    assert.equal(candidateMailLocale(exam, { chosen: null, student: 'de-CH' }), 'de');
    assert.equal(candidateMailLocale(exam, { chosen: null, student: null }), 'fr');
    assert.equal(candidateMailLocale({ ...exam, exam: null }), 'nl');
    assert.equal(candidateMailLocale({ ...exam, exam: 'pt', institute: null }), 'en');
  });

  it('keeps to the languages the exam allows candidates', () => {
    const restricted = { ...exam, allowed: ['fr', 'es'] };
    assert.equal(candidateMailLocale(restricted, { chosen: null, student: 'de' }), 'fr');
    assert.equal(candidateMailLocale(restricted, { chosen: 'es', student: 'de' }), 'es');
  });

  it('is the user’s console language for staff, else the institute’s, else English', () => {
    assert.equal(staffMailLocale('it', 'es'), 'it');
    assert.equal(staffMailLocale(null, 'es'), 'es');
    assert.equal(staffMailLocale(null, null), 'en');
  });

  it('writes staff links and the end notice in that language, the time with its zone', () => {
    const content = { name: 'Ana', email: 'ana@example.org', url: 'https://x.example/console', expiresAt: 0 };
    const invitation = staffInvitationMail(content, translator('es'));
    assert.equal(invitation.subject, 'Invitación a Invigil');
    assert.ok(invitation.text.startsWith('Estimado/a Ana:\n'), invitation.text);
    assert.ok(invitation.text.includes('hasta el 1 de enero de 1970 a las 0:00 UTC'), invitation.text);
    assert.match(invitation.html, /<html lang="es" dir="ltr">/);
    const reset = passwordResetMail(content, translator('nl'));
    assert.equal(reset.subject, 'Kies een nieuw Invigil-wachtwoord');
    const ended = examEndedMail(
      {
        studentName: 'Jan',
        examName: 'Recht',
        endedAt: Date.parse('2026-11-21T12:00:00Z'),
        timeZone: 'Europe/Amsterdam',
      },
      translator('nl'),
    );
    assert.equal(ended.subject, 'Uw examen is beëindigd: Recht');
    assert.ok(
      ended.text.includes('Uw sessie van het examen ‘Recht’ is beëindigd op 21 november 2026 om 13:00 CET.'),
      ended.text,
    );
  });
});

for (const dialect of DIALECTS) {
  describe(`emails in the student’s language [${dialect}]`, () => {
    let server: TestServer;
    let smtp: TestSmtpServer;
    let clock: TestClock;
    let instituteId: number;
    let owner: TestUser;

    before(async () => {
      smtp = await startSmtpServer();
      clock = new TestClock(Date.now());
      server = await startTestServer(dialect, { clock, env: { SMTP_URL: smtp.url, PUBLIC_URL } });
      instituteId = await server.institute();
      owner = await server.user(instituteId, 'teacher');
    });

    after(async () => {
      await server.close();
      await smtp.close();
    });

    beforeEach(async () => {
      await runDueJobs(server, dialect, clock);
      smtp.messages.length = 0;
    });

    async function createExam(params: Record<string, Scalar> = {}): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams', {
        name: 'Öffentliches Recht',
        type: 'record_review',
        duration_minutes: 90,
        start_time: '2026-11-21T09:00:00Z',
        end_time: '2026-11-21T12:00:00Z',
        web_cam: true,
        timezone: 'Europe/Berlin',
        ...params,
      });
      assert.equal(answer.status, 201, answer.text);
      return Number(object(object(answer.json, 'body').exam, 'exam').id);
    }

    /** Adds a student, and gives the session `language` (as an import or an LMS launch sets it). */
    async function addStudent(
      examId: number,
      name: string,
      email: string,
      language: string | null,
    ): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name,
        email,
      });
      assert.equal(answer.status, 201, answer.text);
      const id = Number(object(object(answer.json, 'body').student, 'student').id);
      await server.app.database.db
        .updateTable('student_sessions')
        .set({ language })
        .where('id', '=', id)
        .execute();
      return id;
    }

    function mailTo(address: string): ReceivedMail {
      const found = smtp.messages.filter((message) => message.envelopeTo.includes(address));
      assert.equal(found.length, 1, `exactly one message to ${address}`);
      return found[0] as ReceivedMail;
    }

    it('sends the exam link in German to a student whose language is de, dates in the exam’s zone', async () => {
      const exam = await createExam();
      await addStudent(exam, 'Jürgen Weiß', 'juergen@example.org', 'de');
      await addStudent(exam, 'Ann Lee', 'ann@example.org', null);
      const sent = await owner.client.v3('POST', '/exams/:id/send_emails', { id: exam });
      assert.equal(sent.status, 200, sent.text);
      assert.equal(await runDueJobs(server, dialect, clock), 2);

      const german = mailTo('juergen@example.org');
      assert.equal(german.subject, 'Ihr Prüfungslink: Öffentliches Recht');
      const text = german.text ?? '';
      for (const expected of [
        'Guten Tag Jürgen Weiß,',
        'Sie sind für die Prüfung „Öffentliches Recht“ angemeldet.',
        'Sie können die Prüfung zwischen dem 21. November 2026 um 10:00 MEZ und dem 21. November 2026 um 13:00 MEZ beginnen.',
        'Nach dem Start haben Sie 90 Minuten Zeit.',
        'Was Sie benötigen:',
        'Eine Kamera und ein Mikrofon',
        'Öffnen Sie Ihren Prüfungsraum über diesen Link:',
        'Der Link ist persönlich',
      ]) {
        assert.ok(text.includes(expected), `the German text says "${expected}":\n${text}`);
      }
      assert.doesNotMatch(text, /You may|What you need|Hello/);
      const html = german.html ?? '';
      assert.match(html, /<html lang="de" dir="ltr">/);
      assert.ok(
        html.includes('Sie sind für die Prüfung <strong>Öffentliches Recht</strong> angemeldet.'),
        html,
      );
      assert.ok(html.includes('>Prüfungsraum öffnen</a>'), html);

      // No language of their own: the exam's (English, the institute's default), as before.
      const english = mailTo('ann@example.org');
      assert.equal(english.subject, 'Your exam link: Öffentliches Recht');
      assert.ok(english.text?.includes('Hello Ann Lee,'));
      assert.ok(
        english.text?.includes(
          'You may start from 2026-11-21 10:00 Europe/Berlin (09:00 UTC) until 2026-11-21 13:00 Europe/Berlin (12:00 UTC).',
        ),
        english.text,
      );
    });

    it('writes an Arabic email right to left', async () => {
      const exam = await createExam();
      await addStudent(exam, 'ليلى', 'layla@example.org', 'ar');
      await owner.client.v3('POST', '/exams/:id/send_emails', { id: exam });
      await runDueJobs(server, dialect, clock);
      const mail = mailTo('layla@example.org');
      assert.equal(mail.subject, 'رابط اختبارك: Öffentliches Recht');
      const html = mail.html ?? '';
      assert.match(html, /<html lang="ar" dir="rtl">/);
      assert.match(html, /<body dir="rtl" [^>]*text-align: right;/);
      assert.ok(mail.text?.includes('مرحبًا ليلى،'), mail.text);
      assert.ok(mail.text?.includes('بعد البدء، لديك 90 دقيقة.'), mail.text);
    });

    it('sends the end notice in the student’s language', async () => {
      const exam = await createExam();
      const id = await addStudent(exam, 'Chiara', 'chiara@example.org', 'it');
      const ended = await owner.client.v3('POST', '/student_sessions/:id/end_exam', { id });
      assert.equal(ended.status, 200, ended.text);
      await runDueJobs(server, dialect, clock);
      const mail = mailTo('chiara@example.org');
      assert.equal(mail.subject, 'Il Suo esame è terminato: Öffentliches Recht');
      assert.match(
        mail.text ?? '',
        /la Sua sessione dell’esame «Öffentliches Recht» è stata chiusa il .+ (CET|CEST|GMT\+\d)/,
      );
    });

    it('writes the institute’s own wording of an email in that language', async () => {
      await server.app.database.db
        .insertInto('message_overrides')
        .values({
          institute_id: instituteId,
          locale: 'de',
          key: 'email.examLink.personal',
          message: 'Dieser Link gehört nur Ihnen.',
          updated_at: clock.now(),
          updated_by: null,
        })
        .execute();
      try {
        const exam = await createExam();
        await addStudent(exam, 'Karl', 'karl@example.org', 'de');
        await addStudent(exam, 'Kate', 'kate@example.org', 'en');
        await owner.client.v3('POST', '/exams/:id/send_emails', { id: exam });
        await runDueJobs(server, dialect, clock);
        assert.ok(mailTo('karl@example.org').text?.includes('Dieser Link gehört nur Ihnen.'));
        assert.ok(mailTo('kate@example.org').text?.includes('The link is personal: do not share it.'));
      } finally {
        await server.app.database.db
          .deleteFrom('message_overrides')
          .where('institute_id', '=', instituteId)
          .execute();
      }
    });

    it('previews the email in the language the student would get, the sample in the exam’s', async () => {
      const exam = await createExam({ exam_language: 'fr' });
      const id = await addStudent(exam, 'Jürgen Weiß', 'juergen2@example.org', 'de');
      const forStudent = await owner.client.v3('GET', '/exams/:id/email_preview', {
        id: exam,
        kind: 'exam_link',
        student_session_id: id,
      });
      assert.equal(forStudent.status, 200, forStudent.text);
      const preview = object(forStudent.json, 'preview');
      assert.equal(preview.subject, 'Ihr Prüfungslink: Öffentliches Recht');
      assert.ok(String(preview.text).startsWith('Guten Tag Jürgen Weiß,'), String(preview.text));

      const sample = await owner.client.v3('GET', '/exams/:id/email_preview', {
        id: exam,
        kind: 'exam_link',
      });
      assert.equal(sample.status, 200, sample.text);
      const samplePreview = object(sample.json, 'preview');
      assert.equal(samplePreview.subject, 'Votre lien d’examen\u00a0: Öffentliches Recht');
      assert.ok(String(samplePreview.text).startsWith('Bonjour Camille Dupont,'), String(samplePreview.text));
      assert.equal(smtp.messages.length, 0, 'a preview sends nothing');
    });
  });
}
