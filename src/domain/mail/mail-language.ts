/**
 * Which language an email is written in, and the translator that writes it. A candidate's email is
 * in the candidate's language: their own pick in the room's language menu, else the session's
 * `language`, the exam's `exam_language`, the institute's `default_language` (an exam's
 * `candidate_languages` restricting the choice); never the Accept-Language of whoever pressed
 * "send". A staff email is in the user's console language (My account), else the institute's
 * `default_language`, else English.
 */
import type { Db } from '../../db/database.ts';
import { translator } from '../../i18n/catalogues.ts';
import { chooseLocale, type PageLocale } from '../../i18n/locales.ts';
import type { Translator } from '../../i18n/translate.ts';
import { institutesOverrides } from '../message-overrides/message-overrides.service.ts';
import {
  type ExamMailLanguages,
  findExamMailLanguages,
  findSessionMailLanguages,
  type StudentMailLanguages,
} from './mail-language.repository.ts';

const NO_STUDENT_LANGUAGE: StudentMailLanguages = { chosen: null, student: null };

/** The language of a candidate's email: the student's own first, then the exam's, the institute's, English. */
export function candidateMailLocale(
  exam: ExamMailLanguages,
  student: StudentMailLanguages = NO_STUDENT_LANGUAGE,
): PageLocale {
  return chooseLocale({
    choice: student.chosen,
    student: student.student,
    exam: exam.exam,
    institute: exam.institute,
    allowed: exam.allowed,
  });
}

/** The language of a staff email: the user's console language, else the institute's default, else English. */
export function staffMailLocale(
  userLanguage: string | null | undefined,
  instituteLanguage: string | null | undefined,
): PageLocale {
  return chooseLocale({ choice: userLanguage, institute: instituteLanguage, allowed: null });
}

/**
 * A translator for the emails of an institute in `locale`, with the institute's own wording of
 * them (its message overrides) on top of the catalogue's. Returns it; throws what the database throws.
 */
export async function mailTranslator(db: Db, instituteId: number, locale: PageLocale): Promise<Translator> {
  return translator(locale, await institutesOverrides(db, instituteId, locale));
}

/**
 * The translator of one candidate's email: in the language of session `sessionId` of exam `exam`
 * (candidateMailLocale; the exam's, for a candidate not stored, such as the preview's sample), with
 * the institute's wording. Returns it; throws what the database throws.
 */
export async function candidateMailTranslator(
  db: Db,
  exam: { readonly id: number; readonly instituteId: number },
  sessionId: number | undefined,
): Promise<Translator> {
  const examLanguages = await findExamMailLanguages(db, exam.id);
  const student = sessionId === undefined ? undefined : await findSessionMailLanguages(db, sessionId);
  const locale = examLanguages === undefined ? 'en' : candidateMailLocale(examLanguages, student);
  return mailTranslator(db, exam.instituteId, locale);
}
