import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import yauzl from 'yauzl';
import type { Manifest, ManifestFile } from '../../src/domain/exports/exam-export.ts';

/** One entry of a zip as read back: its name, its uncompressed bytes' size and SHA-256. */
export interface ZipEntryDigest {
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
  /** 0 stored, 8 deflated. */
  readonly compressionMethod: number;
  /** The entry's bytes as UTF-8, for the generated `manifest.json` and `students.csv` only (others may be large). */
  readonly text?: string;
}

/** The files the archive makes itself, at its root, after the handed-in files. */
const GENERATED = ['students.csv', 'manifest.json'];

/**
 * Opens a zip (a buffer or a file path) with yauzl, as an unzipper would, streaming each entry once
 * (CRC and sizes checked by yauzl). Returns the entries by name in archive order; throws when the
 * archive is malformed or an entry name repeats.
 */
export async function digestZip(source: Buffer | string): Promise<Map<string, ZipEntryDigest>> {
  const options = { lazyEntries: true, validateEntrySizes: true };
  const zip =
    typeof source === 'string'
      ? await yauzl.openPromise(source, options)
      : await yauzl.fromBufferPromise(source, options);
  const entries = new Map<string, ZipEntryDigest>();
  try {
    for await (const entry of zip.eachEntry()) {
      assert.equal(yauzl.validateFileName(entry.fileName), null, `a safe entry name: ${entry.fileName}`);
      assert.ok(!entries.has(entry.fileName), `entry ${entry.fileName} appears once`);
      const stream = await zip.openReadStreamPromise(entry);
      const hash = crypto.createHash('sha256');
      const kept: Buffer[] = [];
      let size = 0;
      for await (const chunk of stream) {
        const bytes = chunk as Buffer;
        size += bytes.length;
        hash.update(bytes);
        if (GENERATED.includes(entry.fileName)) kept.push(bytes);
      }
      entries.set(entry.fileName, {
        name: entry.fileName,
        size,
        sha256: hash.digest('hex'),
        compressionMethod: entry.compressionMethod,
        ...(GENERATED.includes(entry.fileName) ? { text: Buffer.concat(kept).toString('utf8') } : {}),
      });
    }
  } finally {
    zip.close();
  }
  return entries;
}

/** Parses the archive's `manifest.json`, asserting its shape. Returns it. */
export function manifestOf(entries: ReadonlyMap<string, ZipEntryDigest>): Manifest {
  const text = entries.get('manifest.json')?.text;
  assert.ok(text !== undefined, 'the archive has a manifest.json');
  const manifest = JSON.parse(text) as Manifest;
  assert.equal(typeof manifest.exam_id, 'number');
  assert.match(manifest.generated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const files: unknown = manifest.files;
  assert.ok(Array.isArray(files), 'files is a list');
  assert.equal(manifest.file_count, manifest.files.length);
  assert.ok(Array.isArray(manifest.students), 'students is a list');
  assert.equal(manifest.student_count, manifest.students.length);
  assert.equal(
    manifest.total_size,
    manifest.files.reduce((sum, file) => sum + file.size, 0),
  );
  return manifest;
}

/**
 * Parses the archive's `students.csv` (RFC 4180: quoted cells, doubled quotes, CRLF rows, a leading
 * byte order mark). Returns its rows as objects keyed by the header.
 */
export function studentsCsvOf(entries: ReadonlyMap<string, ZipEntryDigest>): Record<string, string>[] {
  const text = entries.get('students.csv')?.text;
  assert.ok(text !== undefined, 'the archive has a students.csv');
  assert.ok(text.startsWith('\uFEFF'), 'students.csv starts with a byte order mark');
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let index = 1; index < text.length; index += 1) {
    const char = text[index];
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        cell += '"';
        index += 1;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(cell);
      cell = '';
    } else if (char === '\r' && text[index + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      index += 1;
    } else cell += char;
  }
  assert.equal(cell, '', 'students.csv ends with a line break');
  const [header, ...body] = rows;
  assert.ok(header !== undefined, 'students.csv has a header');
  return body.map((cells) => {
    assert.equal(cells.length, header.length, 'every row has every column');
    return Object.fromEntries(header.map((name, index) => [name, cells[index] ?? '']));
  });
}

/**
 * Asserts the archive holds exactly the manifest's files plus `students.csv` and `manifest.json`, each entry with the
 * size and SHA-256 the manifest gives it. Returns the manifest's files by path.
 */
export function assertMatchesManifest(
  entries: ReadonlyMap<string, ZipEntryDigest>,
  manifest: Manifest,
): Map<string, ManifestFile> {
  const listed = new Map(manifest.files.map((file) => [file.path, file]));
  assert.equal(listed.size, manifest.files.length, 'no path is listed twice');
  assert.deepEqual(
    [...entries.keys()].filter((name) => !GENERATED.includes(name)).sort(),
    [...listed.keys()].sort(),
    'the archive holds exactly the listed files',
  );
  for (const [path, file] of listed) {
    const entry = entries.get(path);
    assert.ok(entry !== undefined, `${path} is in the archive`);
    assert.equal(entry.size, file.size, `${path}: the listed size`);
    assert.equal(entry.sha256, file.sha256, `${path}: the listed SHA-256`);
  }
  return listed;
}
