import type { Db } from '../../db/database.ts';
import type { PageLocale } from '../../i18n/locales.ts';
import type { Translator } from '../../i18n/translate.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { findManageableExam } from '../exams/exam-access.ts';
import { candidateMailLocale, mailTranslator } from '../mail/mail-language.ts';
import { findExamMailLanguages, findStudentMailLanguages } from '../mail/mail-language.repository.ts';
import type { Outbox } from '../mail/outbox-writer.ts';
import { practiceReminderMail } from '../mail/templates.ts';
import { practicePageUrl } from './practice-link.ts';
import { markReminded, reminderRecipients } from './practice.repository.ts';

/** The practice reminders of an exam (docs/practice.md). */
export interface PracticeRemindersService {
  /**
   * Emails a practice reminder (the student's practice link) to every non-archived student of an
   * exam the actor manages whose practice has not passed and whose session has not started or
   * finished, each in the student's language, through the outbox; sets their
   * `practice_reminded_at`. The emails and the marks are one transaction. Returns how many were
   * emailed. Throws NotFound (Exam) when the exam is missing, deleted or out of scope, Forbidden
   * when the actor sees it but may not manage it.
   */
  sendReminders(actor: Actor, examId: string | number): Promise<{ sent: number }>;
}

/**
 * Builds the reminders over the database, the clock, the outbox and the public address the
 * practice links start with. Returns the service; building it throws nothing.
 */
export function createPracticeRemindersService(deps: {
  db: Db;
  clock: Clock;
  outbox: Outbox;
  publicUrl: string;
}): PracticeRemindersService {
  const { db, clock, outbox, publicUrl } = deps;
  return {
    sendReminders(actor, examId) {
      return db.transaction().execute(async (trx) => {
        const exam = await findManageableExam(trx, actor, examId);
        const recipients = await reminderRecipients(trx, exam.id);
        if (recipients.length === 0) return { sent: 0 };
        const examLanguages = await findExamMailLanguages(trx, exam.id);
        const studentLanguages = await findStudentMailLanguages(trx, exam.id);
        const translators = new Map<PageLocale, Translator>();
        for (const student of recipients) {
          const locale =
            examLanguages === undefined
              ? 'en'
              : candidateMailLocale(examLanguages, studentLanguages.get(student.id));
          let t = translators.get(locale);
          if (t === undefined) {
            t = await mailTranslator(trx, exam.instituteId, locale);
            translators.set(locale, t);
          }
          await outbox.write(trx, {
            kind: 'practice_reminder',
            to: student.email,
            message: practiceReminderMail(
              {
                studentName: student.name,
                examName: exam.name,
                practiceUrl: practicePageUrl(publicUrl, student.token),
              },
              t,
            ),
            studentSessionId: student.id,
          });
        }
        await markReminded(
          trx,
          recipients.map((student) => student.id),
          clock.now(),
        );
        return { sent: recipients.length };
      });
    },
  };
}
