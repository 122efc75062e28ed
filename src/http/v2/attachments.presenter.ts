import type { LinkedAttachment } from '../../domain/attachments/attachment.ts';

/**
 * The V2 attachment record: `attachment_id`, its placeholder, its one-minute download address, and
 * its exam and document.
 */
export function presentAttachmentV2(attachment: LinkedAttachment): Record<string, unknown> {
  return {
    attachment_id: attachment.id,
    placeholder: attachment.placeholder,
    url: attachment.url,
    exam_id: attachment.examId,
    document_id: attachment.documentId,
  };
}
