/**
 * The words and checks of the student import screen that need no page: what a chosen file is, the
 * fields guessed for its columns, the service's answers put back in terms of the file (its row
 * numbers and column names), and what the check and the import say. Pure, like csv.ts.
 */
import { guessColumns, IMPORT_FIELDS, type ColumnChoice, type DecodedText, type ImportField } from './csv';
import { t } from '../../../shared/i18n.svelte.ts';
import type { ShownRowError } from './students';

/** The most rows one import takes (the service's MAX_IMPORT_ROWS). */
export const MAX_IMPORT_ROWS = 5000;

/** A checked row: its number in the file, and what the import will do with it. */
export interface PlannedRow {
  readonly fileRow: number;
  readonly name: string;
  readonly email: string;
  readonly action: 'create' | 'skip' | 'update';
}

/** The dry run's verdict, for the input it was made for. */
export interface CheckedImport {
  readonly input: string;
  readonly count: number;
  readonly updated: number;
  readonly skipped: number;
  readonly rows: readonly PlannedRow[];
  readonly ignored: readonly string[];
}

/** A refused import's answer, as far as the screen reads it. */
export interface ImportAnswer {
  readonly error?: unknown;
  readonly row_errors?: readonly { row?: number; field?: string | null; message?: string }[];
}

/** True when the bytes are a zip (xlsx, ods) or an OLE file (xls), not text. */
export function isSpreadsheetFile(name: string, bytes: Uint8Array): boolean {
  if (/\.(xlsx|xlsm|xls|ods|numbers)$/i.test(name)) return true;
  const zip = bytes[0] === 0x50 && bytes[1] === 0x4b;
  const ole = bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0;
  return zip || ole;
}

/** The guessed fields for the first record: by column name, or, without names, the email by its @. */
export function guessFor(first: readonly string[], hasHeadings: boolean): ColumnChoice[] {
  if (hasHeadings) return guessColumns(first);
  const email = first.findIndex((cell) => cell.includes('@'));
  return first.map((_, index) => (index === email ? 'email' : ''));
}

/** The column name(s) a refused field came from, for the row errors. */
export function columnOf(
  field: string | null,
  columns: readonly ColumnChoice[],
  headings: readonly string[],
): string {
  if (field === null) return t('console.studentImport.wholeRow');
  const index = columns.indexOf(field as ColumnChoice);
  if (index >= 0) return headings[index] ?? field;
  if (field === 'name') {
    const parts = (['first_name', 'last_name'] as const)
      .map((part) => columns.indexOf(part))
      .filter((index) => index >= 0)
      .map((index) => headings[index]);
    if (parts.length > 0) return parts.join(' + ');
  }
  return field in IMPORT_FIELDS ? IMPORT_FIELDS[field as ImportField] : field;
}

/** A rule naming another row ("has already been taken by row 3": its place among the rows sent) with that row's number in the file. */
export function inFileRows(message: string, fileRows: readonly number[]): string {
  return message.replace(/\bby row (\d+)\b/, (words, row: string) => {
    const fileRow = fileRows[Number(row) - 1];
    return fileRow === undefined ? words : `by row ${fileRow}`;
  });
}

/** The refused rows of an answer, numbered and named as in the file. */
export function shownRowErrors(
  rowErrors: NonNullable<ImportAnswer['row_errors']>,
  fileRows: readonly number[],
  columns: readonly ColumnChoice[],
  headings: readonly string[],
): ShownRowError[] {
  return rowErrors.map((rowError) => ({
    fileRow: fileRows[(rowError.row ?? 1) - 1] ?? rowError.row ?? 0,
    column: columnOf(rowError.field ?? null, columns, headings),
    message: inFileRows(rowError.message ?? t('console.studentImport.invalid'), fileRows),
  }));
}

/** "Imported 3 students from list.csv; updated 1; skipped 2 already registered." */
export function doneMessage(fileName: string, created: number, updated: number, skipped: number): string {
  const parts = [t('console.studentImport.imported', { count: created, file: fileName })];
  if (updated > 0) parts.push(t('console.studentImport.updated', { count: updated }));
  if (skipped > 0) parts.push(t('console.studentImport.skipped', { count: skipped }));
  return t('console.studentImport.sentence', { text: parts.join(t('console.studentImport.partsSeparator')) });
}

/** What the check found, in words ("2 rows are valid: …"). */
export function verdict(result: CheckedImport): string {
  const total = result.count + result.updated + result.skipped;
  const valid = t('console.studentImport.valid', { total });
  const found: string[] = [];
  if (result.updated + result.skipped > 0) {
    found.push(t('console.studentImport.toAdd', { count: result.count }));
    if (result.updated > 0) found.push(t('console.studentImport.toUpdate', { count: result.updated }));
    if (result.skipped > 0) found.push(t('console.studentImport.toSkip', { count: result.skipped }));
  }
  const ignored =
    result.ignored.length > 0
      ? ` ${t('console.studentImport.ignored', { fields: result.ignored.join(', ') })}`
      : '';
  if (result.count + result.updated === 0)
    return `${t('console.studentImport.nothing', { valid })}${ignored}`;
  const ready =
    found.length > 0
      ? t('console.studentImport.readyWith', { valid, found: found.join(', ') })
      : t('console.studentImport.ready', { valid });
  return `${ready}${ignored}`;
}

/** The import button's words: "Import 1 student", "Import 2 students and update 1 student". */
export function importLabel(result: CheckedImport): string {
  if (result.count > 0 && result.updated > 0)
    return t('console.studentImport.importAndUpdate', { count: result.count, updated: result.updated });
  if (result.count > 0) return t('console.studentImport.importCount', { count: result.count });
  if (result.updated > 0) return t('console.studentImport.updateCount', { count: result.updated });
  return '';
}

/** Which encoding the file was read as, and what to do when accents look wrong. */
export function encodingNote(text: DecodedText): string {
  if (text.encoding === 'windows-1252') {
    return t('console.studentImport.windows1252');
  }
  return text.encoding === 'utf-8' ? t('console.studentImport.utf8') : t('console.studentImport.utf16');
}
