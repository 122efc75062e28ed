import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import type { AttachmentsTable } from '../../db/tables.ts';
import type { StoredFile } from '../files/file.ts';
import type { ListQuery, Page } from '../listing.ts';
import { type Attachment, placeholderFor } from './attachment.ts';

function attachmentFromRow(row: Selectable<AttachmentsTable>): Attachment {
  return {
    id: row.id,
    examId: row.exam_id,
    documentId: row.document_id,
    fileId: row.file_id,
    placeholder: row.placeholder,
    fileName: row.file_name,
    contentType: row.content_type,
    fileSize: row.file_size,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Records a stored file as an attachment of the document, with its placeholder (which holds the new
 * id, hence the second statement: run it in a transaction). Returns the attachment.
 */
export async function insertAttachment(
  db: Db,
  document: { readonly id: number; readonly examId: number },
  file: StoredFile,
  now: number,
): Promise<Attachment> {
  const inserted = await db
    .insertInto('attachments')
    .values({
      exam_id: document.examId,
      document_id: document.id,
      file_id: file.id,
      placeholder: '',
      file_name: file.originalName,
      content_type: file.contentType,
      file_size: file.size,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const row = await db
    .updateTable('attachments')
    .set({ placeholder: placeholderFor(inserted.id) })
    .where('id', '=', inserted.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return attachmentFromRow(row);
}

/** Returns the document's attachment `id`, or undefined (also when it belongs to another document). */
export async function findAttachmentOfDocument(
  db: Db,
  documentId: number,
  id: number,
): Promise<Attachment | undefined> {
  const row = await db
    .selectFrom('attachments')
    .selectAll()
    .where('id', '=', id)
    .where('document_id', '=', documentId)
    .executeTakeFirst();
  return row === undefined ? undefined : attachmentFromRow(row);
}

/** Deletes one attachment row. Returns true when it went. */
export async function deleteAttachment(db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('attachments').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Deletes every attachment of the document. Returns the ids of the files they held. */
export async function deleteAttachmentsOfDocument(db: Db, documentId: number): Promise<number[]> {
  const rows = await db
    .deleteFrom('attachments')
    .where('document_id', '=', documentId)
    .returning('file_id')
    .execute();
  return rows.map((row) => row.file_id);
}

/** One page of the document's attachments with the total count. */
export async function listAttachments(
  db: Db,
  documentId: number,
  list: ListQuery,
): Promise<Page<Attachment>> {
  const base = applyConditions(
    db.selectFrom('attachments').where('attachments.document_id', '=', documentId),
    list,
    'attachments',
  );
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    applyOrderAndPage(base.selectAll('attachments'), list, 'attachments').execute(),
  ]);
  return {
    items: rows.map(attachmentFromRow),
    total: Number(countRow.count),
    page: list.page,
    limit: list.limit,
  };
}
