import type { Db } from '../../db/database.ts';
import type { PageLocale } from '../../i18n/locales.ts';
import type { Translator } from '../../i18n/translate.ts';
import type { Outbox } from '../mail/outbox-writer.ts';
import { candidateMailLocale, mailTranslator } from '../mail/mail-language.ts';
import { findExamMailLanguages, findStudentMailLanguages } from '../mail/mail-language.repository.ts';
import { examLinkMail, type ExamLinkContent, examNeeds } from '../mail/templates.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { findInstitute } from '../institutes/institutes.repository.ts';
import { move } from '../student-sessions/status.ts';
import type { StudentSession } from '../student-sessions/student-session.ts';
import { listAllStudentSessionsOfExam } from '../student-sessions/student-sessions.repository.ts';
import type { Exam } from './exam.ts';
import { findManageableExam } from './exam-access.ts';
import { markSessionsEmailed } from './send-emails.repository.ts';

/** The send_emails action (contract §7), shared by V3 and V2. */
export interface SendEmailsService {
  /**
   * Emails the exam link to every student of an exam the actor manages who is still `registered`
   * and not yet emailed (archived sessions aside); those move to `email_sent` with `is_email_sent`.
   * The status changes, the outbox rows and their delivery jobs are one transaction. When the
   * institute's `exam_link_emails_enabled` is off nobody is emailed and nothing changes. Returns
   * exactly the sessions just emailed, by id (empty when there were none). Throws NotFound (Exam)
   * when the exam is missing, deleted or out of scope, Forbidden when the actor sees it but may not
   * manage it.
   */
  sendExamEmails(actor: Actor, examId: string | number): Promise<StudentSession[]>;
}

/** Returns `{PUBLIC_URL}/room/<token>`, the page a student opens from the email (contract §11). */
export function roomUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/room/${token}`;
}

/**
 * What the exam-link email of `session` says: the room address, the window (the session's open_time,
 * else the exam's start_time, until the exam's end_time), the duration when the exam and the
 * session use one, and the student's individual information. Returns it; throws nothing.
 */
export function examLinkContent(exam: Exam, session: StudentSession, publicUrl: string): ExamLinkContent {
  return {
    studentName: session.name,
    examName: exam.name,
    roomUrl: roomUrl(publicUrl, session.token),
    from: session.openTime ?? exam.startTime,
    until: exam.endTime,
    durationMinutes: exam.useDuration && session.useDuration ? exam.durationMinutes : null,
    timeZone: exam.timezone,
    needs: examNeeds(exam),
    individualInfo: session.individualInfo,
    individualInfoIsHtml: session.isIndividualInfoHtml,
  };
}

/**
 * Builds the send_emails use case over the database, the clock, the outbox and the public address
 * the room links start with. Returns the service; building it throws nothing.
 */
export function createSendEmailsService(deps: {
  db: Db;
  clock: Clock;
  outbox: Outbox;
  publicUrl: string;
}): SendEmailsService {
  const { db, clock, outbox, publicUrl } = deps;
  return {
    sendExamEmails(actor, examId) {
      return db.transaction().execute(async (trx) => {
        const exam = await findManageableExam(trx, actor, examId);
        const institute = await findInstitute(trx, exam.instituteId);
        if (institute === undefined) throw new Error(`exam ${exam.id} has no institute ${exam.instituteId}`);
        // The institute sends its exam links itself (or not at all): leave every session as it is, so
        // turning the switch on later and calling again emails them then.
        if (!institute.examLinkEmailsEnabled) return [];
        const ids = await markSessionsEmailed(trx, exam.id, {
          from: 'registered',
          to: move('registered', 'email_sent'),
          now: clock.now(),
        });
        if (ids.length === 0) return [];
        const emailed = new Set(ids);
        const sessions = (await listAllStudentSessionsOfExam(trx, exam.id)).filter((session) =>
          emailed.has(session.id),
        );
        // Each student's email in the student's language (mail-language.ts).
        const examLanguages = await findExamMailLanguages(trx, exam.id);
        const studentLanguages = await findStudentMailLanguages(trx, exam.id);
        // One translator per language: it keeps the messages it has parsed.
        const translators = new Map<PageLocale, Translator>();
        for (const session of sessions) {
          const locale =
            examLanguages === undefined
              ? 'en'
              : candidateMailLocale(examLanguages, studentLanguages.get(session.id));
          let t = translators.get(locale);
          if (t === undefined) {
            t = await mailTranslator(trx, exam.instituteId, locale);
            translators.set(locale, t);
          }
          await outbox.write(trx, {
            kind: 'exam_link',
            to: session.email,
            message: examLinkMail(examLinkContent(exam, session, publicUrl), t),
            studentSessionId: session.id,
          });
        }
        return sessions;
      });
    },
  };
}
