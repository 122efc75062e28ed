import type { DocumentRef, IdInput } from '../documents/document.ts';
import type { ListFields } from '../listing.ts';

/** A file attached to an exam's document, as stored. */
export interface Attachment {
  readonly id: number;
  readonly examId: number;
  readonly documentId: number;
  readonly fileId: number;
  readonly placeholder: string;
  readonly fileName: string;
  readonly contentType: string;
  readonly fileSize: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** An attachment with an expiring download address, as both API versions answer it. */
export interface LinkedAttachment extends Attachment {
  readonly url: string;
  /** When `url` stops working (epoch milliseconds). */
  readonly urlExpiresAt: number;
}

/** How long an attachment's download address stays valid (api.md: one minute). */
export const ATTACHMENT_URL_SECONDS = 60;

/**
 * Whose attachments a request means: a named document (V3 nested paths, V2 by document id), or the
 * exam's document, whichever it is (V3 `/exams/:exam_id/attachments`; it may not exist yet).
 */
export type AttachmentOwner = DocumentRef | { readonly examId: IdInput; readonly documentId?: undefined };

/** The token a document's text carries where the candidate page shows a link to the file. */
export function placeholderFor(attachmentId: number): string {
  return `[attachment:${attachmentId}]`;
}

/** Filterable and sortable attachment fields. */
export const ATTACHMENT_LIST_FIELDS: ListFields = {
  id: { column: 'id', type: 'integer' },
  file_name: { column: 'file_name', type: 'string' },
  content_type: { column: 'content_type', type: 'string' },
  file_size: { column: 'file_size', type: 'integer' },
  created_at: { column: 'created_at', type: 'time' },
};
