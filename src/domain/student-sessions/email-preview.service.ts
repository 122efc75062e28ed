import type { Db } from '../../db/database.ts';
import { candidateMailTranslator } from '../mail/mail-language.ts';
import { examLinkMail } from '../mail/templates.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Invalid, NotFound } from '../errors.ts';
import { examLinkContent } from '../exams/send-emails.service.ts';
import { findManageableExam } from '../exams/exam-access.ts';
import { parseId } from '../ids.ts';
import { optionalString, type Params, requiredString } from '../input.ts';
import { type EmailPreview, PREVIEW_KINDS, sampleSession } from './email-preview.ts';
import { readStudentSessionId, type StudentSession } from './student-session.ts';
import { findStudentSession } from './student-sessions.repository.ts';

/** Previews of the emails send_emails writes, rendered by the same code, sent to nobody. */
export interface EmailPreviewService {
  /**
   * Renders the email of `kind` (params, required: `exam_link`) for the session that
   * `student_session_id` names, which must belong to the exam, or for a sample candidate when it is
   * absent or empty: subject, text and HTML exactly as send_emails would write them to the outbox,
   * the room link included. Writes nothing. Returns the preview; throws NotFound (Exam, then Student
   * Session), Forbidden (the actor may not manage the exam: only managers send), ParamMissing or
   * Invalid on `kind`.
   */
  preview(actor: Actor, examId: string | number, params: Params): Promise<EmailPreview>;
}

/**
 * Builds the preview use case over the database, the clock and the public address room links
 * start with. Returns the service; building it throws nothing.
 */
export function createEmailPreviewService(deps: {
  db: Db;
  clock: Clock;
  publicUrl: string;
}): EmailPreviewService {
  const { db, clock, publicUrl } = deps;

  async function sessionOf(examId: number, params: Params): Promise<StudentSession | undefined> {
    const sent = optionalString(params, 'student_session_id');
    if (sent === undefined || sent === null || sent.trim() === '') return undefined;
    const id = readStudentSessionId(params);
    const numeric = parseId(id);
    const session = numeric === undefined ? undefined : await findStudentSession(db, numeric);
    if (session === undefined || session.examId !== examId) throw new NotFound('Student Session', id);
    return session;
  }

  return {
    async preview(actor, examId, params) {
      const exam = await findManageableExam(db, actor, examId);
      const sentKind = requiredString(params, 'kind');
      const kind = PREVIEW_KINDS.find((known) => known === sentKind);
      if (kind === undefined) throw new Invalid('kind', 'is not included in the list');
      const session = await sessionOf(exam.id, params);
      // In the language the student would get it in; the sample student speaks the exam's language.
      const t = await candidateMailTranslator(db, exam, session?.id);
      const shown = session ?? {
        ...sampleSession(exam.id, clock.now()),
        name: t.t('email.examLink.sampleStudent'),
      };
      const mail = examLinkMail(examLinkContent(exam, shown, publicUrl), t);
      return { kind, to: shown.email, ...mail, sample: session === undefined };
    },
  };
}
