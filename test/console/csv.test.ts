/**
 * The console's CSV reader (web/console/src/lib/csv.ts), which runs in the browser before an import:
 * encodings, separators, quoting, line ends and blank rows as spreadsheets write them, and column
 * names matched to student fields.
 */
import '../helpers/console-language.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decodeText,
  detectSeparator,
  guessColumns,
  looksLikeHeadings,
  mappingProblems,
  parseCsv,
  studentRows,
} from '../../web/console/src/lib/csv.ts';

const cellsOf = (text: string, separator: ',' | ';' | '\t' = ',') =>
  parseCsv(text, separator).records.map((record) => record.cells);

describe('decodeText', () => {
  it('reads UTF-8 and drops its byte-order mark', () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('Name;Émile')]);
    assert.deepEqual(decodeText(bytes), { text: 'Name;Émile', encoding: 'utf-8' });
  });

  it('reads UTF-16 LE with a byte-order mark (Excel "Unicode text")', () => {
    const text = 'Name\tE-mail\r\nZoë\tzoe@example.org\r\n';
    const body = Buffer.from(text, 'utf16le');
    const decoded = decodeText(new Uint8Array([0xff, 0xfe, ...body]));
    assert.equal(decoded.encoding, 'utf-16le');
    assert.equal(decoded.text, text);
  });

  it('falls back to Windows-1252 for bytes that are not UTF-8', () => {
    const decoded = decodeText(new Uint8Array([0x4a, 0x6f, 0xeb, 0x6c])); // "Joël" in Windows-1252
    assert.deepEqual(decoded, { text: 'Joël', encoding: 'windows-1252' });
  });
});

describe('parseCsv', () => {
  it('splits quoted cells holding separators, doubled quotes and line breaks', () => {
    const text = 'name,info\n"Doe, Jane","She said ""hi""\nand left"\n';
    assert.deepEqual(cellsOf(text), [
      ['name', 'info'],
      ['Doe, Jane', 'She said "hi"\nand left'],
    ]);
  });

  it('takes CRLF, LF and CR line ends and a last line without one', () => {
    assert.deepEqual(cellsOf('a,b\r\nc,d\re,f\ng,h'), [
      ['a', 'b'],
      ['c', 'd'],
      ['e', 'f'],
      ['g', 'h'],
    ]);
  });

  it('leaves out blank rows but numbers the others as a spreadsheet does', () => {
    const parsed = parseCsv(
      '\ufeffname,email\r\n\r\nAda,ada@example.org\r\n  \r\n,\r\nBob,bob@example.org\r\n',
      ',',
    );
    assert.deepEqual(
      parsed.records.map((record) => [record.row, record.cells[0]]),
      [
        [1, 'name'],
        [3, 'Ada'],
        [6, 'Bob'],
      ],
    );
    assert.equal(parsed.unclosedQuote, false);
  });

  it('keeps the row of a record whose quoted cell spans lines, and flags a quote never closed', () => {
    const parsed = parseCsv('a\n"x\ny"\nb\n"open', ',');
    assert.deepEqual(
      parsed.records.map((record) => record.row),
      [1, 2, 3, 4],
    );
    assert.equal(parsed.unclosedQuote, true);
    assert.deepEqual(parsed.records[3]?.cells, ['open']);
  });
});

describe('detectSeparator', () => {
  it('finds semicolons (Excel in many European locales), tabs and commas', () => {
    assert.equal(detectSeparator('Voornaam;Achternaam;E-mail\nJan;de Vries;jan@example.nl\n'), ';');
    assert.equal(detectSeparator('name\temail\nAda\tada@example.org\n'), '\t');
    assert.equal(detectSeparator('name,email\nAda,ada@example.org\n'), ',');
  });

  it('prefers the separator found the same number of times on every line', () => {
    // Commas inside a name; semicolons separate.
    assert.equal(
      detectSeparator('name;email\n"Doe, Jane";jane@example.org\nAda, Countess;ada@example.org\n'),
      ';',
    );
  });
});

describe('guessColumns', () => {
  it('matches common headings in several spellings and languages', () => {
    assert.deepEqual(
      guessColumns(['First name', 'Surname', 'E-mail', 'Student number', 'Notes', 'Shoe size']),
      ['first_name', 'last_name', 'email', 'external_id', 'individual_info', ''],
    );
    assert.deepEqual(guessColumns(['Voornaam', 'Achternaam', 'E-mailadres', 'Studentnummer']), [
      'first_name',
      'last_name',
      'email',
      'external_id',
    ]);
    assert.deepEqual(guessColumns(['Prénom', 'Nom', 'Courriel']), ['first_name', 'last_name', 'email']);
  });

  it('finds the language column a student’s language is read from', () => {
    assert.deepEqual(guessColumns(['Name', 'Email', 'Language']), ['name', 'email', 'language']);
    assert.deepEqual(guessColumns(['Naam', 'E-mail', 'Taal']), ['name', 'email', 'language']);
    assert.deepEqual(guessColumns(['Nom', 'Courriel', 'Langue']), ['last_name', 'email', 'language']);
  });

  it('gives each field to the first column that names it', () => {
    assert.deepEqual(guessColumns(['Email', 'E-mail', 'Name']), ['email', '', 'name']);
  });

  it('tells headings from a first row of data', () => {
    assert.equal(looksLikeHeadings(['Name', 'Email']), true);
    assert.equal(looksLikeHeadings(['Name', 'name@example.org']), false);
    assert.equal(looksLikeHeadings(['Ada', 'Lovelace']), false);
  });
});

describe('mappingProblems and studentRows', () => {
  it('asks for an email column and a name, and refuses a field chosen twice', () => {
    assert.deepEqual(mappingProblems(['name', 'email']), []);
    assert.deepEqual(mappingProblems(['first_name', 'last_name', 'email']), []);
    assert.equal(mappingProblems(['name', '']).length, 1);
    assert.equal(mappingProblems(['', 'email']).length, 1);
    assert.match(mappingProblems(['email', 'email', 'name']).join(' '), /Two columns are set to “Email”/);
  });

  it('builds rows of the mapped, trimmed cells, leaving blank cells and unmapped columns out', () => {
    const records = parseCsv('a,b,c\n Ada , ada@example.org ,x\nBob,,\n', ',').records.slice(1);
    assert.deepEqual(studentRows(records, ['name', 'email', '']), {
      students: [{ name: 'Ada', email: 'ada@example.org' }, { name: 'Bob' }],
      fileRows: [2, 3],
    });
  });
});
