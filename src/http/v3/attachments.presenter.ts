import type { LinkedAttachment } from '../../domain/attachments/attachment.ts';
import { isoTime } from '../time.ts';

/** The V3 attachment record (contract §6); `url` is the one-minute download address. */
export function presentAttachmentV3(attachment: LinkedAttachment): Record<string, unknown> {
  return {
    id: attachment.id,
    exam_id: attachment.examId,
    document_id: attachment.documentId,
    placeholder: attachment.placeholder,
    file_name: attachment.fileName,
    content_type: attachment.contentType,
    file_size: attachment.fileSize,
    url: attachment.url,
    created_at: isoTime(attachment.createdAt),
  };
}
