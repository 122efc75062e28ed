/**
 * Reading a list of students from a CSV file in the browser: the bytes decoded (UTF-8 with or
 * without a byte-order mark, UTF-16 as Excel's "Unicode text" writes it, else Windows-1252), the
 * separator found (comma, semicolon, tab or bar), the records split as RFC 4180 says (quotes,
 * doubled quotes, separators and line breaks inside quotes, CRLF, LF or CR line ends), the columns
 * matched to the fields of a student session by their headings, and the rows turned into what the
 * import endpoint takes. Pure: no DOM, so the same code runs in the console and in unit tests.
 */
import { t } from '../../../shared/i18n.svelte.ts';
import { wordsRecord } from './words.ts';

export type Separator = ',' | ';' | '\t' | '|';

/** The separators a file may use, with the words the screen shows for each. */
export const SEPARATORS: readonly { readonly value: Separator; readonly label: string }[] = [
  separator(',', 'console.csv.comma'),
  separator(';', 'console.csv.semicolon'),
  separator('\t', 'console.csv.tab'),
  separator('|', 'console.csv.bar'),
];

function separator(value: Separator, key: string): { readonly value: Separator; readonly label: string } {
  return {
    value,
    get label() {
      return t(key);
    },
  };
}

/** The text of a file and the character encoding it was read as. */
export interface DecodedText {
  readonly text: string;
  readonly encoding: 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';
}

/**
 * Decodes a file's bytes: a UTF-16 byte-order mark selects UTF-16; otherwise UTF-8 (its BOM
 * dropped), and when the bytes are not valid UTF-8, Windows-1252 (what older Excel versions write
 * for "CSV"). Returns the text without any BOM; throws nothing.
 */
export function decodeText(bytes: Uint8Array): DecodedText {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    return { text: new TextDecoder('utf-16le').decode(bytes), encoding: 'utf-16le' };
  }
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    return { text: new TextDecoder('utf-16be').decode(bytes), encoding: 'utf-16be' };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'utf-8' };
  } catch {
    return { text: new TextDecoder('windows-1252').decode(bytes), encoding: 'windows-1252' };
  }
}

/** One record of the file: its cells and its row number in the file (1 for the first, as a spreadsheet counts). */
export interface CsvRecord {
  readonly row: number;
  readonly cells: readonly string[];
}

/** A parsed file: its non-blank records, and a warning when a quote was never closed. */
export interface ParsedCsv {
  readonly records: readonly CsvRecord[];
  readonly unclosedQuote: boolean;
}

/**
 * Splits `text` into records of cells by `separator` (RFC 4180: a cell in double quotes may hold
 * the separator, line breaks and doubled quotes `""`; line ends may be CRLF, LF or CR). A leading
 * BOM is dropped; records whose cells are all blank are left out, but the row numbers of the others
 * still count them, so they match the row numbers a spreadsheet shows. Returns the records; throws
 * nothing (an unclosed quote runs to the end of the file and sets `unclosedQuote`).
 */
export function parseCsv(text: string, separator: Separator): ParsedCsv {
  const source = text.startsWith('\ufeff') ? text.slice(1) : text;
  const records: CsvRecord[] = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let row = 1;
  let index = 0;

  const endCell = () => {
    cells.push(cell);
    cell = '';
  };
  const endRecord = () => {
    endCell();
    if (cells.some((value) => value.trim() !== '')) records.push({ row, cells });
    cells = [];
    row += 1;
  };

  while (index < source.length) {
    const char = source[index] ?? '';
    if (quoted) {
      if (char === '"' && source[index + 1] === '"') {
        cell += '"';
        index += 2;
        continue;
      }
      if (char === '"') quoted = false;
      else cell += char;
      index += 1;
      continue;
    }
    if (char === '"' && cell.trim() === '') {
      // A quote opens a quoted cell only at its start (spaces before it are dropped).
      cell = '';
      quoted = true;
    } else if (char === separator) {
      endCell();
    } else if (char === '\r' || char === '\n') {
      endRecord();
      if (char === '\r' && source[index + 1] === '\n') index += 1;
    } else {
      cell += char;
    }
    index += 1;
  }
  const unclosedQuote = quoted;
  if (cell !== '' || cells.length > 0 || unclosedQuote) endRecord();
  return { records, unclosedQuote };
}

/** Counts the separator candidates on one line, outside double quotes. */
function countOutsideQuotes(line: string, separator: Separator): number {
  let count = 0;
  let quoted = false;
  for (const char of line) {
    if (char === '"') quoted = !quoted;
    else if (char === separator && !quoted) count += 1;
  }
  return count;
}

/**
 * Guesses the separator from the first lines: the candidate found on every one of them the same
 * number of times (the most often, when several are), else the most frequent one, else a comma.
 * Returns it; throws nothing.
 */
export function detectSeparator(text: string): Separator {
  const lines = text
    .replace(/^\ufeff/, '')
    .split(/\r\n|\r|\n/)
    .filter((line) => line.trim() !== '')
    .slice(0, 10);
  let best: { separator: Separator; score: number } = { separator: ',', score: 0 };
  for (const { value } of SEPARATORS) {
    const counts = lines.map((line) => countOutsideQuotes(line, value));
    const first = counts[0] ?? 0;
    if (first === 0) continue;
    const steady = counts.every((count) => count === first);
    // A steady count on every line beats any unsteady one; then more columns win.
    const score = (steady ? 1000 : 0) + first;
    if (score > best.score) best = { separator: value, score };
  }
  return best.separator;
}

/** The student-session fields a column may fill (the import takes the single create's fields). */
export const IMPORT_FIELDS = wordsRecord({
  name: 'console.csv.fieldName',
  first_name: 'console.csv.fieldFirstName',
  last_name: 'console.csv.fieldLastName',
  email: 'console.csv.fieldEmail',
  external_id: 'console.csv.fieldExternalId',
  language: 'console.csv.fieldLanguage',
  attempt: 'console.csv.fieldAttempt',
  individual_info: 'console.csv.fieldIndividualInfo',
  open_time: 'console.csv.fieldOpenTime',
  priority: 'console.csv.fieldPriority',
  skip_requirements: 'console.csv.fieldSkipRequirements',
  extra_time_minutes: 'console.csv.fieldExtraTimeMinutes',
  extra_time_percent: 'console.csv.fieldExtraTimePercent',
  break_count: 'console.csv.fieldBreakCount',
  break_minutes: 'console.csv.fieldBreakMinutes',
  exemptions: 'console.csv.fieldExemptions',
  assistive_technology: 'console.csv.fieldAssistiveTechnology',
  accommodation_note: 'console.csv.fieldAccommodationNote',
});

export type ImportField = keyof typeof IMPORT_FIELDS;

/** A column's field, or '' when the column is not imported. */
export type ColumnChoice = ImportField | '';

/** Headings (lower case, letters and digits only) that name each field, in several languages. */
const HEADINGS: Record<ImportField, readonly string[]> = {
  email: [
    'email',
    'emailaddress',
    'mail',
    'mailaddress',
    'emailadres',
    'emailadresse',
    'courriel',
    'correo',
    'correoelectronico',
    'studentemail',
  ],
  first_name: ['firstname', 'givenname', 'forename', 'first', 'voornaam', 'prenom', 'vorname', 'nombre'],
  last_name: [
    'lastname',
    'surname',
    'familyname',
    'last',
    'achternaam',
    'nom',
    'nachname',
    'apellido',
    'apellidos',
  ],
  name: ['name', 'fullname', 'studentname', 'student', 'candidate', 'candidatename', 'naam', 'displayname'],
  external_id: [
    'studentnumber',
    'studentno',
    'studentnr',
    'studentid',
    'number',
    'id',
    'externalid',
    'matriculationnumber',
    'matriculation',
    'registrationnumber',
    'studentennummer',
    'studentnummer',
    'matrikelnummer',
    'username',
  ],
  language: [
    'language',
    'lang',
    'locale',
    'preferredlanguage',
    'taal',
    'sprache',
    'langue',
    'idioma',
    'lingua',
    'lengua',
  ],
  attempt: ['attempt', 'attemptnumber', 'try'],
  individual_info: ['individualinfo', 'information', 'info', 'notes', 'note', 'remarks', 'comment'],
  open_time: ['opentime', 'opensat', 'opens', 'starttime', 'start'],
  priority: ['priority'],
  skip_requirements: ['skiprequirements', 'skipchecks', 'skiprequirementchecks'],
  extra_time_minutes: [
    'extratimeminutes',
    'extratime',
    'extraminutes',
    'extratijd',
    'zeitverlangerung',
    'tempssupplementaire',
    'tiempoadicional',
    'tempoaggiuntivo',
  ],
  extra_time_percent: ['extratimepercent', 'extratimepercentage', 'extrapercent'],
  break_count: ['breakcount', 'breaks', 'restbreaks', 'pauzes', 'pausen'],
  break_minutes: ['breakminutes', 'breaklength', 'breakduration'],
  exemptions: [
    'exemptions',
    'exemption',
    'vrijstellingen',
    'befreiungen',
    'dispenses',
    'exenciones',
    'esoneri',
  ],
  assistive_technology: ['assistivetechnology', 'assistivetech', 'screenreader'],
  accommodation_note: ['accommodationnote', 'accommodationnotes'],
};

/** A heading reduced for comparison: lower case, accents and everything but letters and digits dropped. */
function reduced(heading: string): string {
  return heading
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

/**
 * Matches each heading to a field by name ("E-mail" → email, "Surname" → last_name, "Student
 * number" → external_id); each field goes to the first column that names it, other columns to ''.
 * Returns one choice per heading.
 */
export function guessColumns(headings: readonly string[]): ColumnChoice[] {
  const taken = new Set<ImportField>();
  return headings.map((heading) => {
    const key = reduced(heading);
    const field = (Object.keys(HEADINGS) as ImportField[]).find(
      (candidate) => !taken.has(candidate) && HEADINGS[candidate].includes(key),
    );
    if (field === undefined) return '';
    taken.add(field);
    return field;
  });
}

/** True when the first record looks like headings: at least one of its cells names a field. */
export function looksLikeHeadings(cells: readonly string[]): boolean {
  return guessColumns(cells).some((choice) => choice !== '') && !cells.some((cell) => cell.includes('@'));
}

/** What is missing from a column mapping before any row can be imported, as sentences (none: fine). */
export function mappingProblems(columns: readonly ColumnChoice[]): string[] {
  const problems: string[] = [];
  if (!columns.includes('email')) problems.push(t('console.csv.chooseEmail'));
  if (!columns.includes('name') && !columns.includes('first_name') && !columns.includes('last_name')) {
    problems.push(t('console.csv.chooseName'));
  }
  const seen = new Set<ColumnChoice>();
  for (const choice of columns) {
    if (choice !== '' && seen.has(choice)) {
      problems.push(t('console.csv.twoColumns', { field: IMPORT_FIELDS[choice] }));
    }
    seen.add(choice);
  }
  return problems;
}

/** One student row for the import endpoint: field → text, blank cells left out. */
export type StudentRow = Partial<Record<ImportField, string>>;

/** The rows to import and, for each, its row number in the file (to name it in errors). */
export interface StudentRows {
  readonly students: StudentRow[];
  readonly fileRows: number[];
}

/**
 * The records (headings already removed) as import rows by the column mapping: each mapped cell,
 * trimmed, under its field; blank cells left out, so optional fields are simply absent. Returns
 * the rows with their file row numbers.
 */
export function studentRows(records: readonly CsvRecord[], columns: readonly ColumnChoice[]): StudentRows {
  const students: StudentRow[] = [];
  const fileRows: number[] = [];
  for (const record of records) {
    const student: StudentRow = {};
    columns.forEach((field, index) => {
      const value = (record.cells[index] ?? '').trim();
      if (field !== '' && value !== '') student[field] = value;
    });
    students.push(student);
    fileRows.push(record.row);
  }
  return { students, fileRows };
}
