import type { DocumentContext } from '../../domain/documents/document-access.ts';
import { simpleFormat } from './html.ts';

/**
 * The V2 document record: `document_id`, the text as `document_text` formatted as HTML (every other
 * markup escaped), `has_attachments`, and the owner and institute of its exam.
 */
export function presentDocumentV2({ exam, document }: DocumentContext): Record<string, unknown> {
  return {
    document_id: document.id,
    exam_id: document.examId,
    // HTML (Rails simple_format), as V2 clients built on the Rails service receive it; V3 sends the raw text.
    document_text: simpleFormat(document.examContent),
    has_attachments: document.attachmentsCount > 0,
    // The exam's owner and institute: api.md's V2 record carries them for V2 clients of the Rails service.
    user_id: exam.userId,
    institute_id: exam.instituteId,
  };
}
