import type { Db } from '../../db/database.ts';
import type { Actor } from '../access.ts';
import { deleteAttachmentsOfDocument } from '../attachments/attachments.repository.ts';
import type { Clock } from '../clock.ts';
import { NotFound, Taken } from '../errors.ts';
import { listAllExams } from '../exams/exams.repository.ts';
import type { FilesService } from '../files/files.service.ts';
import type { Params } from '../input.ts';
import { type Page, parseListQuery } from '../listing.ts';
import {
  type ContentParam,
  DOCUMENT_LIST_FIELDS,
  type DocumentRef,
  type ExamDocument,
  type IdInput,
  readDocumentContent,
} from './document.ts';
import { type DocumentContext, findDocumentFor, findExamFor } from './document-access.ts';
import {
  deleteDocument,
  findDocumentsOfExams,
  insertDocument,
  listDocuments,
  updateDocumentContent,
} from './documents.repository.ts';

export interface DocumentsService {
  /**
   * One page of the exam's documents (it has at most one), filtered and sorted by `params`.
   * Throws NotFound (Exam) or Invalid (filter, sort, page, limit).
   */
  list(actor: Actor, examId: IdInput, params: Params): Promise<Page<ExamDocument>>;
  /** Returns the document `ref` names. Throws NotFound (Exam or Document). */
  get(actor: Actor, ref: DocumentRef): Promise<ExamDocument>;
  /**
   * Returns the document `ref` names together with its exam (whose owner and institute V2's record
   * shows). Throws NotFound (Exam or Document).
   */
  getWithExam(actor: Actor, ref: DocumentRef): Promise<DocumentContext>;
  /**
   * The documents of every exam the actor owns or co-manages (not deleted), each with its exam,
   * ordered by exam id: the legacy listing, which has no pages. Returns an empty array when there
   * are none; throws nothing of its own.
   */
  listOwned(actor: Actor): Promise<DocumentContext[]>;
  /**
   * Creates the exam's document with the text in `contentParam`. Returns it; throws NotFound (Exam),
   * Forbidden, ParamMissing (the text) or Taken (`exam_id`: the exam already has a document).
   */
  create(actor: Actor, examId: IdInput, params: Params, contentParam?: ContentParam): Promise<ExamDocument>;
  /**
   * Replaces the text with the one in `contentParam` (required). Returns the document as saved;
   * throws NotFound (Exam or Document), Forbidden or ParamMissing.
   */
  update(actor: Actor, ref: DocumentRef, params: Params, contentParam?: ContentParam): Promise<ExamDocument>;
  /**
   * Destroys the document with its attachments, then their stored files. Throws NotFound (Exam or
   * Document) or Forbidden.
   */
  destroy(actor: Actor, ref: DocumentRef): Promise<void>;
}

export function createDocumentsService(deps: {
  db: Db;
  clock: Clock;
  files: FilesService;
}): DocumentsService {
  const { db, clock, files } = deps;

  return {
    async list(actor, examId, params) {
      const exam = await findExamFor(db, actor, examId, 'read');
      return listDocuments(db, exam.id, parseListQuery(params, DOCUMENT_LIST_FIELDS));
    },

    async get(actor, ref) {
      return (await findDocumentFor(db, actor, ref, 'read')).document;
    },

    getWithExam(actor, ref) {
      return findDocumentFor(db, actor, ref, 'read');
    },

    async listOwned(actor) {
      const exams = await listAllExams(db, { kind: 'own', instituteId: actor.instituteId, userId: actor.id });
      const documents = await findDocumentsOfExams(
        db,
        exams.map((exam) => exam.id),
      );
      return exams.flatMap((exam) => {
        const document = documents.get(exam.id);
        return document === undefined ? [] : [{ exam, document }];
      });
    },

    async create(actor, examId, params, contentParam = 'exam_content') {
      const exam = await findExamFor(db, actor, examId, 'manage');
      const content = readDocumentContent(params, contentParam);
      const created = await insertDocument(db, exam.id, content, clock.now());
      if (created === undefined) throw new Taken('exam_id');
      return created;
    },

    async update(actor, ref, params, contentParam = 'exam_content') {
      const { document } = await findDocumentFor(db, actor, ref, 'manage');
      const content = readDocumentContent(params, contentParam);
      const saved = await updateDocumentContent(db, document.id, content, clock.now());
      if (saved === undefined) throw new NotFound('Document', ref.documentId);
      return saved;
    },

    async destroy(actor, ref) {
      const { document } = await findDocumentFor(db, actor, ref, 'manage');
      const fileIds = await db.transaction().execute(async (trx) => {
        const held = await deleteAttachmentsOfDocument(trx, document.id);
        if (!(await deleteDocument(trx, document.id))) throw new NotFound('Document', ref.documentId);
        return held;
      });
      // After the commit: a failed transaction must not lose files its rows still point at.
      await files.remove(fileIds);
    },
  };
}
