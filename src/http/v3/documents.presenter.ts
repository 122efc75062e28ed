import type { ExamDocument } from '../../domain/documents/document.ts';
import { isoTime } from '../time.ts';

/** The V3 document record (contract §6), plus `attachments_count`. */
export function presentDocumentV3(document: ExamDocument): Record<string, unknown> {
  return {
    id: document.id,
    exam_id: document.examId,
    exam_content: document.examContent,
    attachments_count: document.attachmentsCount,
    created_at: isoTime(document.createdAt),
    updated_at: isoTime(document.updatedAt),
  };
}
