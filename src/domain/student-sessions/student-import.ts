import { DomainError, Invalid, NotFound, ParamMissing, Taken } from '../errors.ts';
import { has, optionalString, param, type Params } from '../input.ts';

/**
 * Bulk import of student sessions (docs/api-v3-student-sessions.md, Import): the shape of an import
 * request and of its answer. Each row is read and checked by the very functions that create one
 * session (student-session.ts); this file adds only what belongs to a file of rows: the row limit,
 * `first_name` + `last_name` as a name, duplicates within the file, and which fields no rule read.
 */

/** The most rows one import may carry (the body limit, MAX_BODY_BYTES, may come first). */
export const MAX_IMPORT_ROWS = 5000;

/** At most this many ignored field names are reported. */
export const MAX_IGNORED_FIELDS = 100;

/** What is wrong with one row: its 1-based position in `students`, the field (null: the row itself) and the rule. */
export interface RowError {
  readonly row: number;
  readonly field: string | null;
  readonly message: string;
}

/**
 * What an import does with a row whose email and attempt the exam already has (`existing`):
 * `refuse` it (the default: the row is invalid, nothing is imported), `skip` it, or `update` that
 * session with the row's fields.
 */
export const EXISTING_ROW_CHOICES = ['refuse', 'skip', 'update'] as const;
export type ExistingRowChoice = (typeof EXISTING_ROW_CHOICES)[number];

/** What the import does with one valid row: create a session, skip it, or update the exam's session. */
export type RowAction = 'create' | 'skip' | 'update';

/** A row that passed every check, as the dry run shows it: the values it carries and what it will do. */
export interface CheckedRow {
  readonly row: number;
  readonly name: string;
  readonly email: string;
  readonly attempt: number;
  readonly action: RowAction;
}

/** Reads `existing` (absent or empty: `refuse`). Throws Invalid naming the choices. */
export function readExistingChoice(params: Params): ExistingRowChoice {
  const value = optionalString(params, 'existing');
  if (value === undefined || value === null || value === '') return 'refuse';
  const choice = EXISTING_ROW_CHOICES.find((known) => known === value);
  if (choice === undefined)
    throw new Invalid('existing', `must be one of ${EXISTING_ROW_CHOICES.join(', ')}`);
  return choice;
}

/**
 * An import refused as a whole because some rows are invalid (nothing was created). Answered 422
 * with `row_errors` beside `error` by the import route.
 */
export class ImportRejected extends DomainError {
  readonly code = 'invalid';
  readonly rowErrors: readonly RowError[];
  constructor(rowErrors: readonly RowError[], total: number) {
    const count = rowErrors.reduce((rows, error) => rows.add(error.row), new Set<number>()).size;
    super(`${count} of ${total} rows ${count === 1 ? 'is' : 'are'} invalid: nothing was imported`);
    this.rowErrors = rowErrors;
  }
}

/**
 * Reads `students`: a JSON array, or a string holding one (as `filter` holds its JSON, so a form
 * body and a very long file fit too). Returns its items, unchecked. Throws ParamMissing when absent
 * or empty, Invalid when not an array or longer than MAX_IMPORT_ROWS.
 */
export function readImportRows(params: Params): readonly unknown[] {
  let value = param(params, 'students');
  if (value === undefined || value === null || value === '') throw new ParamMissing('students');
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      throw new Invalid('students', 'is not valid JSON');
    }
  }
  if (!Array.isArray(value)) throw new Invalid('students', 'must be an array of student rows');
  if (value.length === 0) throw new ParamMissing('students');
  if (value.length > MAX_IMPORT_ROWS)
    throw new Invalid('students', `must hold at most ${MAX_IMPORT_ROWS} rows`);
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One row as request parameters, recording in `read` every field a rule looks at (so the fields no
 * rule reads can be reported, however the create rules grow). A row without `name` but with
 * `first_name` and/or `last_name` gets them, trimmed and joined by a space, as its `name`. Returns
 * undefined when the row is not a JSON object; throws Invalid when a name part is not text.
 */
export function rowParams(row: unknown, read: Set<string>): Params | undefined {
  if (!isRecord(row)) return undefined;
  const tracked = trackReads(row, read);
  if (has(tracked, 'name') || !(has(tracked, 'first_name') || has(tracked, 'last_name'))) return tracked;
  const parts = [optionalString(tracked, 'first_name'), optionalString(tracked, 'last_name')]
    .map((part) => part?.trim() ?? '')
    .filter((part) => part !== '');
  return trackReads({ ...row, name: parts.join(' ') }, read);
}

/** A view of `row` that adds to `read` the name of every field looked up, tested or read. */
function trackReads(row: Record<string, unknown>, read: Set<string>): Params {
  const note = (name: string | symbol) => {
    if (typeof name === 'string') read.add(name);
  };
  return new Proxy(row, {
    get(target, name, receiver) {
      note(name);
      return Reflect.get(target, name, receiver) as unknown;
    },
    has(target, name) {
      note(name);
      return Reflect.has(target, name);
    },
    getOwnPropertyDescriptor(target, name) {
      note(name);
      return Reflect.getOwnPropertyDescriptor(target, name);
    },
  });
}

/**
 * The field and message a row error reports for what a create rule threw: the field it names and
 * its rule, as the single create's `errors` would say it; a missing LTI resource is reported on
 * `lti_resource_id`. Returns undefined for anything else (a bug or an outage, not the row's fault).
 */
export function rowErrorOf(error: unknown): { field: string; message: string } | undefined {
  if (error instanceof ParamMissing) return { field: error.field, message: 'is missing or empty' };
  if (error instanceof Invalid) return { field: error.field, message: error.detail };
  if (error instanceof Taken) return { field: error.field, message: 'has already been taken' };
  if (error instanceof NotFound) {
    return { field: 'lti_resource_id', message: "is not an LTI resource of the exam's institute" };
  }
  return undefined;
}

/** The fields `row` sent that no rule read while checking it (`first_name` beside a `name`). */
export function unreadFields(row: unknown, read: ReadonlySet<string>): string[] {
  return isRecord(row) ? Object.keys(row).filter((name) => !read.has(name)) : [];
}

/** The ignored field names to report: sorted, at most MAX_IGNORED_FIELDS of them. Returns them. */
export function ignoredFieldList(names: Iterable<string>): string[] {
  return [...new Set(names)].sort().slice(0, MAX_IGNORED_FIELDS);
}

/** The key that makes two rows the same session: the stored email and the attempt. */
export function sessionKey(email: string, attempt: number): string {
  return `${attempt}:${email}`;
}
