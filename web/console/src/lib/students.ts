/** The student record as the console reads it, and what the students table offers on a row. */
import type { paths } from '../../../shared/api-schema';

/** One student session as GET /api/v3/exams/{exam_id}/student_sessions lists it. */
export type Student =
  paths['/api/v3/exams/{exam_id}/student_sessions']['get']['responses'][200]['content']['application/json']['students'][number];

/** One student session as GET /api/v3/student_sessions/{id} reads it (and the actions on it answer it). */
export type StudentRecord =
  paths['/api/v3/student_sessions/{id}']['get']['responses'][200]['content']['application/json']['student'];

/** The row actions that ask first: a new attempt, ending the exam, deleting. */
export type StudentAction = 'attempt' | 'end' | 'delete';

/** One refused row of an import as the screen lists it. */
export interface ShownRowError {
  /** The row number in the file (as the spreadsheet numbers it). */
  readonly fileRow: number;
  /** The column (or columns) the field came from, or the field's own name. */
  readonly column: string;
  readonly message: string;
}
