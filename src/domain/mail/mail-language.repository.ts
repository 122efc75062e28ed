/** The languages candidate emails are chosen by (mail-language.ts): the SQL that reads them. */
import type { Db } from '../../db/database.ts';

/** What decides an exam's candidate emails' language, apart from each student's own. */
export interface ExamMailLanguages {
  readonly instituteId: number;
  readonly exam: string | null;
  readonly institute: string | null;
  /** The exam's `candidate_languages`; null: every language. */
  readonly allowed: readonly string[] | null;
}

/** A student session's own languages (both may be null). */
export interface StudentMailLanguages {
  readonly chosen: string | null;
  readonly student: string | null;
}

/** The stored JSON array of `candidate_languages`, or null when unset or unreadable. */
function languageList(stored: string | null): readonly string[] | null {
  if (stored === null || stored === '') return null;
  try {
    const parsed: unknown = JSON.parse(stored);
    return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : null;
  } catch {
    return null;
  }
}

/**
 * The exam's and its institute's languages, as candidate emails are chosen by. Returns them, or
 * undefined when the exam does not exist.
 */
export async function findExamMailLanguages(db: Db, examId: number): Promise<ExamMailLanguages | undefined> {
  const row = await db
    .selectFrom('exams')
    .innerJoin('institutes', 'institutes.id', 'exams.institute_id')
    .select([
      'exams.institute_id as instituteId',
      'exams.exam_language as examLanguage',
      'exams.candidate_languages as candidateLanguages',
      'institutes.default_language as defaultLanguage',
    ])
    .where('exams.id', '=', examId)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    instituteId: row.instituteId,
    exam: row.examLanguage,
    institute: row.defaultLanguage,
    allowed: languageList(row.candidateLanguages),
  };
}

/** The own languages of every session of exam `examId` (one query), by session id. */
export async function findStudentMailLanguages(
  db: Db,
  examId: number,
): Promise<Map<number, StudentMailLanguages>> {
  const rows = await db
    .selectFrom('student_sessions')
    .select(['id', 'language', 'chosen_language'])
    .where('exam_id', '=', examId)
    .execute();
  return new Map(rows.map((row) => [row.id, { chosen: row.chosen_language, student: row.language }]));
}

/** The own languages of one session, or none when it does not exist. */
export async function findSessionMailLanguages(db: Db, sessionId: number): Promise<StudentMailLanguages> {
  const row = await db
    .selectFrom('student_sessions')
    .select(['language', 'chosen_language'])
    .where('id', '=', sessionId)
    .executeTakeFirst();
  return { chosen: row?.chosen_language ?? null, student: row?.language ?? null };
}
