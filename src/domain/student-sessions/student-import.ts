import { DomainError, Invalid, NotFound, ParamMissing, Taken } from '../errors.ts';
import { has, optionalString, param, type Params } from '../input.ts';
import { type Accommodations, EXEMPT_CHECKS, readAccommodations } from './accommodations.ts';

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

// ---- Accommodation columns (docs/api-v3-student-sessions.md, "Accommodation columns") ----

/**
 * The flat row fields (a file's columns) that carry a student's accommodations, besides the
 * single create's `accommodations` object: `extra_time_minutes`, `extra_time_percent`,
 * `break_count`, `break_minutes`, `exemptions` (`check:reason` pairs separated by `;`),
 * `assistive_technology` (yes/no) and `accommodation_note`.
 */
export const ACCOMMODATION_COLUMNS = [
  'extra_time_minutes',
  'extra_time_percent',
  'break_count',
  'break_minutes',
  'exemptions',
  'assistive_technology',
  'accommodation_note',
] as const;
export type AccommodationColumn = (typeof ACCOMMODATION_COLUMNS)[number];

/** The cells that clear a column's value: no exemptions, no note. */
const NONE_WORDS: readonly string[] = ['none', '-'];
const YES_WORDS: readonly string[] = ['yes', 'y', 'true', '1'];
const NO_WORDS: readonly string[] = ['no', 'n', 'false', '0'];

/** A cell's value: undefined when absent or blank (a blank cell changes nothing), else trimmed text or the value. */
function cell(params: Params, column: AccommodationColumn): unknown {
  if (!has(params, column)) return undefined;
  const value = param(params, column);
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value.trim() === '' ? undefined : value.trim();
  return value;
}

/**
 * Reads an `exemptions` cell: `check:reason` pairs separated by `;` (`webcam:no camera; id_photo:blind`),
 * the check one of EXEMPT_CHECKS (case, spaces and hyphens forgiven: `Screen share` is `screen_share`),
 * the reason required (everything after the first `:`, so it may hold colons but not `;`). `none`
 * or `-` clears the exemptions; a JSON list in the API's form is taken too. Throws Invalid on `exemptions`.
 */
export function readExemptionsCell(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (value.startsWith('[')) return value;
  if (NONE_WORDS.includes(value.toLowerCase())) return [];
  const pairs = value
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair !== '');
  return pairs.map((pair) => {
    const colon = pair.indexOf(':');
    const name = (colon < 0 ? pair : pair.slice(0, colon))
      .trim()
      .toLowerCase()
      .replace(/[\s-]+/g, '_');
    const check = EXEMPT_CHECKS.find((known) => known === name);
    if (check === undefined) {
      throw new Invalid('exemptions', `${name} is not a check (${EXEMPT_CHECKS.join(', ')})`);
    }
    const reason = colon < 0 ? '' : pair.slice(colon + 1).trim();
    if (reason === '') throw new Invalid('exemptions', `needs a reason for ${check} (check:reason)`);
    return { check, reason };
  });
}

function readYesNo(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const word = value.toLowerCase();
  if (YES_WORDS.includes(word)) return true;
  if (NO_WORDS.includes(word)) return false;
  throw new Invalid('assistive_technology', 'must be yes or no');
}

/** The column a field of readAccommodations names (`accommodations.breaks.minutes` → `break_minutes`). */
function columnOfField(field: string): string {
  const key = field.replace(/^accommodations\.?/, '');
  if (key.startsWith('breaks.minutes')) return 'break_minutes';
  if (key.startsWith('breaks')) return 'break_count';
  if (key.startsWith('exemptions')) return 'exemptions';
  if (key === 'note') return 'accommodation_note';
  return ACCOMMODATION_COLUMNS.find((column) => column === key) ?? field;
}

/**
 * The `accommodations` object (API form, only the keys the row's columns give) a row's
 * accommodation columns make, over `current` for the rest of a break allowance (a row that names
 * only `break_minutes` keeps the current count). Undefined when no column has a value. Throws
 * Invalid naming the column.
 */
function accommodationsOfColumns(
  params: Params,
  current: Accommodations,
): Record<string, unknown> | undefined {
  const object: Record<string, unknown> = {};
  const minutes = cell(params, 'extra_time_minutes');
  if (minutes !== undefined) object.extra_time_minutes = minutes;
  const percent = cell(params, 'extra_time_percent');
  if (percent !== undefined) object.extra_time_percent = percent;
  const breakCount = cell(params, 'break_count');
  const breakMinutes = cell(params, 'break_minutes');
  if (breakCount !== undefined || breakMinutes !== undefined) {
    const count = breakCount ?? current.breaks?.count;
    const minutes = breakMinutes ?? current.breaks?.minutes;
    if (count === undefined) throw new Invalid('break_count', "can't be blank when break_minutes is set");
    const none = count === 0 || (typeof count === 'string' && /^0+$/.test(count));
    if (minutes === undefined && !none) {
      throw new Invalid('break_minutes', "can't be blank when break_count is set");
    }
    // No breaks (count 0) needs no length.
    object.breaks = { count, minutes: minutes ?? 0 };
  }
  const exemptions = cell(params, 'exemptions');
  if (exemptions !== undefined) object.exemptions = readExemptionsCell(exemptions);
  const assistive = cell(params, 'assistive_technology');
  if (assistive !== undefined) object.assistive_technology = readYesNo(assistive);
  const note = cell(params, 'accommodation_note');
  if (note !== undefined) object.note = note;
  return Object.keys(object).length === 0 ? undefined : object;
}

/**
 * A row's accommodations over `current` (NO_ACCOMMODATIONS for a new session, the session's own for
 * an update): from its accommodation columns, where a blank cell changes nothing, or else from its
 * `accommodations` object as the single create reads it. Returns undefined when the row has
 * neither. Throws Invalid naming the column (`break_minutes`), or `accommodations.…` for the
 * object, and when a row sends both.
 */
export function readRowAccommodations(params: Params, current: Accommodations): Accommodations | undefined {
  const object = accommodationsOfColumns(params, current);
  if (object === undefined) return readAccommodations(params, current);
  if (has(params, 'accommodations')) {
    const column = ACCOMMODATION_COLUMNS.find((name) => cell(params, name) !== undefined) ?? 'accommodations';
    throw new Invalid(column, 'cannot be combined with accommodations');
  }
  try {
    return readAccommodations({ accommodations: object }, current);
  } catch (error) {
    if (error instanceof Invalid) throw new Invalid(columnOfField(error.field), error.detail);
    throw error;
  }
}
