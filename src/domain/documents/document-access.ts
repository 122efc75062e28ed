import type { Db } from '../../db/database.ts';
import { type Actor, canManageExam, canReadExam } from '../access.ts';
import { Forbidden, NotFound } from '../errors.ts';
import { findManageableExam, findVisibleExam } from '../exams/exam-access.ts';
import type { Exam } from '../exams/exam.ts';
import { findExam } from '../exams/exams.repository.ts';
import { parseId } from '../ids.ts';
import type { DocumentRef, ExamDocument, IdInput } from './document.ts';
import { findDocument } from './documents.repository.ts';

/** What reading or changing something under a document needs: the exam (for access) and the document. */
export interface DocumentContext {
  readonly exam: Exam;
  readonly document: ExamDocument;
}

/** Whether the caller only reads (any role that sees the exam) or changes (managers of the exam). */
export type AccessMode = 'read' | 'manage';

/**
 * The exam `examId` names, for reading or changing what lies under it. Returns it; throws NotFound
 * (Exam) when it is missing, deleted or out of scope, Forbidden when `mode` is manage and the actor
 * only sees it.
 */
export function findExamFor(db: Db, actor: Actor, examId: IdInput, mode: AccessMode): Promise<Exam> {
  return mode === 'manage' ? findManageableExam(db, actor, examId) : findVisibleExam(db, actor, examId);
}

/**
 * The document `ref` names, with its exam. With an exam id, the exam is checked first (NotFound
 * Exam, Forbidden) and the document must belong to it; by document id alone, a document whose exam
 * the actor cannot see is missing like any other. Returns both; throws NotFound (Document) for an
 * unknown document or one of another exam, NotFound (Exam) or Forbidden as findExamFor does.
 */
export async function findDocumentFor(
  db: Db,
  actor: Actor,
  ref: DocumentRef,
  mode: AccessMode,
): Promise<DocumentContext> {
  if (ref.examId !== undefined) {
    const exam = await findExamFor(db, actor, ref.examId, mode);
    const id = parseId(ref.documentId);
    const document = id === undefined ? undefined : await findDocument(db, id);
    if (document === undefined || document.examId !== exam.id) throw new NotFound('Document', ref.documentId);
    return { exam, document };
  }
  const id = parseId(ref.documentId);
  const document = id === undefined ? undefined : await findDocument(db, id);
  const exam = document === undefined ? undefined : await findExam(db, document.examId);
  if (
    document === undefined ||
    exam === undefined ||
    exam.status === 'deleted' ||
    !canReadExam(actor, exam)
  ) {
    throw new NotFound('Document', ref.documentId);
  }
  if (mode === 'manage' && !canManageExam(actor, exam)) throw new Forbidden();
  return { exam, document };
}
