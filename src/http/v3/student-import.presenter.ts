import type { ImportOutcome } from '../../domain/student-sessions/student-import.service.ts';
import type { ImportRejected } from '../../domain/student-sessions/student-import.ts';
import { v3Answer } from '../errors.ts';
import { type ExamClockSource, presentStudentSessionsV3 } from './student-sessions.presenter.ts';

/**
 * The answer to an import: for a dry run `{dry_run: true, count, rows, ignored_fields}`, else
 * `{dry_run: false, count, students, ignored_fields}` with the created records (without
 * `is_email_sent`, as the single create answers; their exams' clocks from `clocks`); `now` is the
 * time the records are presented at.
 * With `existing` skip or update (never by default, so older clients get the answer they know),
 * `updated` and `skipped` follow `count` (which counts created sessions only), and each dry-run row
 * says its `action`.
 */
export async function presentImportV3(
  outcome: ImportOutcome,
  clocks: ExamClockSource,
  now: number,
): Promise<Record<string, unknown>> {
  const choosing = outcome.existing !== 'refuse';
  if (outcome.dryRun) {
    const counted = (action: string) => outcome.rows.filter((row) => row.action === action).length;
    return {
      dry_run: true,
      count: counted('create'),
      ...(choosing ? { updated: counted('update'), skipped: counted('skip') } : {}),
      rows: outcome.rows.map((row) => ({
        row: row.row,
        name: row.name,
        email: row.email,
        attempt: row.attempt,
        ...(choosing ? { action: row.action } : {}),
      })),
      ignored_fields: outcome.ignoredFields,
    };
  }
  return {
    dry_run: false,
    count: outcome.sessions.length,
    ...(choosing ? { updated: outcome.updated.length, skipped: outcome.skipped } : {}),
    students: await presentStudentSessionsV3(clocks, outcome.sessions, now, { created: true }),
    ignored_fields: outcome.ignoredFields,
  };
}

/** The 422 body of a refused import: the V3 error body plus `row_errors`. */
export function presentImportRejectedV3(error: ImportRejected): {
  status: number;
  body: Record<string, unknown>;
} {
  const answer = v3Answer(error);
  return {
    status: answer.status,
    body: {
      ...answer.body,
      row_errors: error.rowErrors.map((rowError) => ({
        row: rowError.row,
        field: rowError.field,
        message: rowError.message,
      })),
    },
  };
}
