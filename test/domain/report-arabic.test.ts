/**
 * The session report in Arabic (docs/languages.md, "The PDF report"): Arabic letters joined by the
 * font's shaping, each line in its visual order (Arabic right to left; Latin names, addresses and
 * numbers left to right inside it), the layout mirrored. Read back with poppler as a person would
 * see it; page 1 is left in test-output/ as report-arabic.png to look at.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { renderSessionReport, type SessionReportData } from '../../src/domain/reports/session-report.ts';
import { pdfInk, pdfPages } from '../helpers/pdf.ts';
import { sessionReportData } from '../helpers/report-data.ts';

const OUTPUT = path.resolve(import.meta.dirname, '../../test-output');
const NAME = 'ليلى بنت أحمد';
const COMMENT = 'نظرت الطالبة بعيدًا عن الشاشة';
const start = Date.UTC(2026, 10, 21, 8, 30);

function report(locale: 'ar' | 'en'): SessionReportData {
  const base = sessionReportData(start);
  return {
    ...base,
    locale,
    exam: { id: 2, name: 'Constitutional Law', type: 'record_review' },
    session: { ...base.session, name: NAME, email: 'laila@example.org' },
    incidents: [
      { id: 1, kind: 'webcam', comment: `${COMMENT} (Alice Smith).`, offsetSeconds: 62, createdAt: start },
    ],
  };
}

/** The text of the report as pdftotext reads it, without the direction marks it adds. */
function readBack(bytes: Uint8Array): string {
  return pdfPages(bytes)
    .join('\n')
    .replace(/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, '');
}

/** The names of the fonts the PDF embeds (pdffonts). */
function fontNames(bytes: Uint8Array): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-fonts-'));
  try {
    const file = path.join(dir, 'report.pdf');
    fs.writeFileSync(file, bytes);
    return execFileSync('pdffonts', [file], { encoding: 'utf8' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Page 1 drawn as PNG in test-output/, to look at. Returns its path. */
function savePagePng(bytes: Uint8Array, name: string): string {
  fs.mkdirSync(OUTPUT, { recursive: true });
  const pdf = path.join(OUTPUT, `${name}.pdf`);
  fs.writeFileSync(pdf, bytes);
  execFileSync('pdftoppm', [
    '-png',
    '-r',
    '110',
    '-f',
    '1',
    '-l',
    '1',
    '-singlefile',
    pdf,
    path.join(OUTPUT, name),
  ]);
  return path.join(OUTPUT, `${name}.png`);
}

describe('renderSessionReport in Arabic', () => {
  it('writes the Arabic words, names and comments so that they read back as written', async () => {
    const bytes = await renderSessionReport(report('ar'));
    const text = readBack(bytes);
    for (const expected of [
      'تقرير جلسة الاختبار',
      'الجلسة',
      'الطالب',
      'البريد الإلكتروني',
      'الاختبار',
      'انتهى الاختبار',
      'الحوادث',
      'الحكم',
      'سجل الأحكام',
      'الصفحة',
      NAME,
      COMMENT,
      'laila@example.org',
      'Constitutional Law',
      'Uniwersytet Łódzki',
      'Alice Smith',
      '+00:01:02',
    ]) {
      assert.ok(text.includes(expected), `the report shows "${expected}":\n${text}`);
    }
    assert.doesNotMatch(text, /\[U\+|Student session report|Session\b/u);
    assert.match(fontNames(bytes), /IBMPlexSansArabic/u);
    const png = savePagePng(bytes, 'report-arabic');
    assert.ok(fs.statSync(png).size > 10_000, png);
  });

  it('mirrors the layout: the title sits at the right margin', async () => {
    const bytes = await renderSessionReport(report('ar'));
    // The title's line (18 pt, its top 50 pt from the page's top): ink on the right, none on the left.
    assert.ok(pdfInk(bytes, 1, { x: 400, y: 50, width: 145, height: 24 }) > 0.05);
    assert.equal(pdfInk(bytes, 1, { x: 50, y: 50, width: 200, height: 24 }), 0);
  });

  it('embeds the Arabic font in a report in another language only when its data holds Arabic', async () => {
    // An English report of an Arabic name: the name is drawn, shaped, among English labels.
    const mixed = await renderSessionReport(report('en'));
    assert.match(fontNames(mixed), /Arabic/u);
    const text = readBack(mixed);
    assert.doesNotMatch(text, /\[U\+/u);
    assert.ok(text.includes(NAME), text);
    // A report without Arabic stays without the font's weight.
    const plain = await renderSessionReport({
      ...report('en'),
      session: { ...report('en').session, name: 'Laila Ahmed' },
      incidents: [],
    });
    assert.match(fontNames(plain), /NotoSans/u);
    assert.doesNotMatch(fontNames(plain), /Arabic/u);
  });
});
