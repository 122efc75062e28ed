import { requiredString, type Params } from '../input.ts';
import type { ListFields } from '../listing.ts';

/** An id as a client sent it (a path segment or a parameter); services report it back as sent. */
export type IdInput = string | number;

/** The instruction text of an exam, shown to its students (at most one per exam). */
export interface ExamDocument {
  readonly id: number;
  readonly examId: number;
  readonly examContent: string;
  readonly attachmentsCount: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * How a request names a document: within its exam (V3 paths carry both ids), or by its own id
 * alone (the legacy V2 paths `/documents/:id`).
 */
export type DocumentRef =
  | { readonly examId: IdInput; readonly documentId: IdInput }
  | { readonly examId?: undefined; readonly documentId: IdInput };

/** The parameter that carries the document text: `exam_content` in V3, `document_text` in V2. */
export type ContentParam = 'exam_content' | 'document_text';

/** Filterable and sortable document fields. */
export const DOCUMENT_LIST_FIELDS: ListFields = {
  id: { column: 'id', type: 'integer' },
  created_at: { column: 'created_at', type: 'time' },
  updated_at: { column: 'updated_at', type: 'time' },
};

/**
 * Reads the document text from the parameter `name`. Returns it as sent; throws ParamMissing when it
 * is absent, empty or blank, Invalid when it is not text.
 */
export function readDocumentContent(params: Params, name: ContentParam): string {
  return requiredString(params, name);
}
