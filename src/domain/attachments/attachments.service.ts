import type { Db } from '../../db/database.ts';
import { ATTACHMENT_TYPES } from '../../storage/content-type.ts';
import type { Upload } from '../../storage/upload.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import type { ExamDocument, IdInput } from '../documents/document.ts';
import { type AccessMode, findDocumentFor, findExamFor } from '../documents/document-access.ts';
import {
  ensureDocumentOfExam,
  findDocument,
  findDocumentOfExam,
  removePlaceholder,
} from '../documents/documents.repository.ts';
import { NotFound, ParamMissing } from '../errors.ts';
import type { Exam } from '../exams/exam.ts';
import type { StoredFile } from '../files/file.ts';
import type { FilesService } from '../files/files.service.ts';
import { parseId } from '../ids.ts';
import type { Params } from '../input.ts';
import { type Page, parseListQuery } from '../listing.ts';
import {
  ATTACHMENT_LIST_FIELDS,
  ATTACHMENT_URL_SECONDS,
  type Attachment,
  type AttachmentOwner,
  type LinkedAttachment,
} from './attachment.ts';
import {
  deleteAttachment,
  findAttachmentOfDocument,
  insertAttachment,
  listAttachments,
} from './attachments.repository.ts';

export interface AttachmentsService {
  /**
   * One page of the owner's attachments, filtered and sorted by `params`; empty when the exam has no
   * document yet. Throws NotFound (Exam or Document) or Invalid (filter, sort, page, limit).
   */
  list(actor: Actor, owner: AttachmentOwner, params: Params): Promise<Page<LinkedAttachment>>;
  /** Returns the owner's attachment `id`. Throws NotFound (Exam, Document or Attachment). */
  get(actor: Actor, owner: AttachmentOwner, id: IdInput): Promise<LinkedAttachment>;
  /**
   * Keeps `upload` as a new attachment of the owner's document; for an exam without a document, an
   * empty one is created with it. `field` names the upload's parameter in errors. Returns the
   * attachment; throws NotFound (Exam or Document), Forbidden, ParamMissing (no file, or an empty
   * one) or UnsupportedMediaType (content outside ATTACHMENT_TYPES, whatever the declared type).
   */
  create(
    actor: Actor,
    owner: AttachmentOwner,
    upload: Upload | undefined,
    field?: string,
  ): Promise<LinkedAttachment>;
  /**
   * Destroys the attachment and removes every occurrence of its placeholder from the document text
   * (one transaction), then its stored file. Throws NotFound (Exam, Document or Attachment) or Forbidden.
   */
  destroy(actor: Actor, owner: AttachmentOwner, id: IdInput): Promise<void>;
}

/** The exam an owner lies under, and its document when it has one. */
interface OwnerContext {
  readonly exam: Exam;
  readonly document: ExamDocument | undefined;
}

export function createAttachmentsService(deps: {
  db: Db;
  clock: Clock;
  files: FilesService;
}): AttachmentsService {
  const { db, clock, files } = deps;

  async function resolve(actor: Actor, owner: AttachmentOwner, mode: AccessMode): Promise<OwnerContext> {
    if (owner.documentId !== undefined) return findDocumentFor(db, actor, owner, mode);
    const exam = await findExamFor(db, actor, owner.examId, mode);
    return { exam, document: await findDocumentOfExam(db, exam.id) };
  }

  async function attachmentIn(
    database: Db,
    document: ExamDocument | undefined,
    id: IdInput,
  ): Promise<Attachment> {
    const numeric = parseId(id);
    const found =
      numeric === undefined || document === undefined
        ? undefined
        : await findAttachmentOfDocument(database, document.id, numeric);
    if (found === undefined) throw new NotFound('Attachment', id);
    return found;
  }

  async function linked(attachment: Attachment): Promise<LinkedAttachment> {
    const address = await files.address(attachment.fileId, ATTACHMENT_URL_SECONDS);
    return { ...attachment, url: address.url, urlExpiresAt: address.expiresAt };
  }

  /** Records the kept file under the owner's document, creating the exam's document when needed. */
  function record(context: OwnerContext, owner: AttachmentOwner, file: StoredFile): Promise<Attachment> {
    return db.transaction().execute(async (trx) => {
      const now = clock.now();
      if (context.document === undefined) {
        return insertAttachment(trx, await ensureDocumentOfExam(trx, context.exam.id, now), file, now);
      }
      const document = await findDocument(trx, context.document.id);
      if (document === undefined) throw new NotFound('Document', owner.documentId ?? context.document.id);
      return insertAttachment(trx, document, file, now);
    });
  }

  return {
    async list(actor, owner, params) {
      const { document } = await resolve(actor, owner, 'read');
      const query = parseListQuery(params, ATTACHMENT_LIST_FIELDS);
      if (document === undefined) return { items: [], total: 0, page: query.page, limit: query.limit };
      const page = await listAttachments(db, document.id, query);
      return { ...page, items: await Promise.all(page.items.map(linked)) };
    },

    async get(actor, owner, id) {
      const { document } = await resolve(actor, owner, 'read');
      return linked(await attachmentIn(db, document, id));
    },

    async create(actor, owner, upload, field = 'document') {
      const context = await resolve(actor, owner, 'manage');
      // An empty file part is what a browser form sends when no file was chosen.
      if (upload === undefined || upload.size === 0) throw new ParamMissing(field);
      const file = await files.keep(upload, ATTACHMENT_TYPES, context.exam.instituteId);
      let attachment: Attachment;
      try {
        attachment = await record(context, owner, file);
      } catch (error) {
        await files.remove([file.id]);
        throw error;
      }
      return linked(attachment);
    },

    async destroy(actor, owner, id) {
      const { document } = await resolve(actor, owner, 'manage');
      const removed = await db.transaction().execute(async (trx) => {
        const attachment = await attachmentIn(trx, document, id);
        if (!(await deleteAttachment(trx, attachment.id))) throw new NotFound('Attachment', id);
        await removePlaceholder(trx, attachment.documentId, attachment.placeholder, clock.now());
        return attachment;
      });
      // After the commit, so a rolled-back destroy never loses the file its row still points at.
      await files.remove([removed.fileId]);
    },
  };
}
