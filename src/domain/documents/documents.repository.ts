import { type ExpressionBuilder, type Selectable, sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { prepared } from '../../db/prepared.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import type { DocumentsTable, Tables } from '../../db/tables.ts';
import type { ListQuery, Page } from '../listing.ts';
import type { ExamDocument } from './document.ts';

/** pg may read a count as text; a scalar subquery is typed nullable. */
type DocumentRow = Selectable<DocumentsTable> & { attachments_count: number | string | null };

function documentFromRow(row: DocumentRow): ExamDocument {
  return {
    id: row.id,
    examId: row.exam_id,
    examContent: row.exam_content,
    attachmentsCount: Number(row.attachments_count),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** How many attachments the document has, as a column of every document read. */
function attachmentsCount(eb: ExpressionBuilder<Tables, 'documents'>) {
  return eb
    .selectFrom('attachments')
    .select(eb.fn.countAll<number>().as('count'))
    .whereRef('attachments.document_id', '=', 'documents.id')
    .as('attachments_count');
}

function selectDocuments(db: Db) {
  return db.selectFrom('documents').selectAll('documents').select(attachmentsCount);
}

async function selectOne(db: Db, id: number): Promise<ExamDocument | undefined> {
  const row = await selectDocuments(db).where('documents.id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : documentFromRow(row);
}

/** Returns the document, or undefined. */
export function findDocument(db: Db, id: number): Promise<ExamDocument | undefined> {
  return selectOne(db, id);
}

/** The exam's document row (every poll of a room reads it), compiled once. */
const documentOfExam = prepared([1] as [number], (db, examId) =>
  selectDocuments(db).where('documents.exam_id', '=', examId),
);

/** Returns the exam's document, or undefined when it has none. */
export async function findDocumentOfExam(db: Db, examId: number): Promise<ExamDocument | undefined> {
  const [row] = await documentOfExam(db, [examId]);
  return row === undefined ? undefined : documentFromRow(row);
}

/** Returns the documents of these exams (each has at most one), by exam id; one query. */
export async function findDocumentsOfExams(
  db: Db,
  examIds: readonly number[],
): Promise<Map<number, ExamDocument>> {
  const byExam = new Map<number, ExamDocument>();
  if (examIds.length === 0) return byExam;
  const rows = await selectDocuments(db).where('documents.exam_id', 'in', examIds).execute();
  for (const row of rows) {
    const document = documentFromRow(row);
    byExam.set(document.examId, document);
  }
  return byExam;
}

/**
 * Inserts the exam's document unless it already has one (the unique index decides, so two
 * concurrent creates cannot both succeed). Returns the new document, or undefined when one existed.
 */
export async function insertDocument(
  db: Db,
  examId: number,
  content: string,
  now: number,
): Promise<ExamDocument | undefined> {
  const row = await db
    .insertInto('documents')
    .values({ exam_id: examId, exam_content: content, created_at: now, updated_at: now })
    .onConflict((conflict) => conflict.column('exam_id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return row === undefined ? undefined : selectOne(db, row.id);
}

/** Returns the exam's document, first creating it with an empty text when it has none. */
export async function ensureDocumentOfExam(db: Db, examId: number, now: number): Promise<ExamDocument> {
  const created = await insertDocument(db, examId, '', now);
  if (created !== undefined) return created;
  const existing = await findDocumentOfExam(db, examId);
  if (existing === undefined) throw new Error(`document of exam ${examId} neither inserted nor found`);
  return existing;
}

/** Replaces the text. Returns the document as saved, or undefined if it vanished meanwhile. */
export async function updateDocumentContent(
  db: Db,
  id: number,
  content: string,
  now: number,
): Promise<ExamDocument | undefined> {
  await db
    .updateTable('documents')
    .set({ exam_content: content, updated_at: now })
    .where('id', '=', id)
    .execute();
  return selectOne(db, id);
}

/**
 * Removes every occurrence of `placeholder` from the document's text, in one statement (so a
 * concurrent edit of the text is never overwritten). `replace` is plain, case-sensitive substring
 * replacement on both databases. The update time moves only when the text changed.
 */
export async function removePlaceholder(
  db: Db,
  documentId: number,
  placeholder: string,
  now: number,
): Promise<void> {
  if (placeholder === '') return;
  await db
    .updateTable('documents')
    .set({ exam_content: sql<string>`replace(exam_content, ${placeholder}, '')`, updated_at: now })
    .where('id', '=', documentId)
    .where(sql<boolean>`exam_content <> replace(exam_content, ${placeholder}, '')`)
    .execute();
}

/** Deletes the document row (its attachments must be gone first). Returns true when a row went. */
export async function deleteDocument(db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('documents').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** One page of the exam's documents (zero or one) with the total count. */
export async function listDocuments(db: Db, examId: number, list: ListQuery): Promise<Page<ExamDocument>> {
  const base = applyConditions(
    db.selectFrom('documents').where('documents.exam_id', '=', examId),
    list,
    'documents',
  );
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    applyOrderAndPage(base.selectAll('documents').select(attachmentsCount), list, 'documents').execute(),
  ]);
  return {
    items: rows.map((row) => documentFromRow(row)),
    total: Number(countRow.count),
    page: list.page,
    limit: list.limit,
  };
}
