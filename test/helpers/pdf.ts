/**
 * Reads a PDF back the way a person would see it, with poppler-utils (`pdftotext`, `pdfimages`;
 * scripts/ensure-tools.sh installs them): its text per page and the images it holds.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** An image of the PDF as `pdfimages -list` lists it. */
export interface PdfImage {
  readonly page: number;
  readonly width: number;
  readonly height: number;
  /** `jpeg` (DCT), `image` (Flate), ... as pdfimages names the encoding. */
  readonly encoding: string;
}

function withFile<T>(bytes: Uint8Array, read: (file: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-pdf-'));
  const file = path.join(dir, 'report.pdf');
  try {
    fs.writeFileSync(file, bytes);
    return read(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The text of each page as pdftotext extracts it (`-layout`: a label and its value stay on one
 * line). Returns the pages in order.
 */
export function pdfPages(bytes: Uint8Array): string[] {
  const text = withFile(bytes, (file) =>
    execFileSync('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-'], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    }),
  );
  const pages = text.split('\f');
  if (pages.at(-1)?.trim() === '') pages.pop();
  return pages;
}

/** The images the PDF draws, from `pdfimages -list`. Returns them in page order. */
export function pdfImages(bytes: Uint8Array): PdfImage[] {
  const listing = withFile(bytes, (file) => execFileSync('pdfimages', ['-list', file], { encoding: 'utf8' }));
  // Two heading lines, then: page num type width height color comp bpc enc ...
  return listing
    .split('\n')
    .slice(2)
    .map((line) => line.trim().split(/\s+/))
    .filter((columns) => columns.length >= 9)
    .map((columns) => ({
      page: Number(columns[0]),
      width: Number(columns[3]),
      height: Number(columns[4]),
      encoding: columns[8] ?? '',
    }));
}

/**
 * How much of a rectangle of page `page` is ink: the share of its pixels darker than mid grey when
 * pdftoppm draws the page in grey at 72 dpi (one pixel a point). `box` is in points from the top
 * left. Text whose font lost its glyph outlines still extracts (pdfPages), but draws nothing: this
 * tells the two apart. Returns a number from 0 to 1.
 */
export function pdfInk(
  bytes: Uint8Array,
  page: number,
  box: { readonly x: number; readonly y: number; readonly width: number; readonly height: number },
): number {
  const image = withFile(bytes, (file) =>
    execFileSync('pdftoppm', ['-gray', '-r', '72', '-f', String(page), '-l', String(page), file], {
      maxBuffer: 64 * 1024 * 1024,
    }),
  );
  // Binary PGM: "P5", width, height, the largest value (255), then one byte per pixel.
  const header = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(image.subarray(0, 64).toString('latin1'));
  if (header === null) throw new Error('pdftoppm did not answer a PGM image');
  const width = Number(header[1]);
  const pixels = image.subarray(header[0].length);
  let dark = 0;
  let all = 0;
  for (let y = Math.round(box.y); y < Math.round(box.y + box.height); y += 1) {
    for (let x = Math.round(box.x); x < Math.round(box.x + box.width); x += 1) {
      all += 1;
      if ((pixels[y * width + x] ?? 255) < 128) dark += 1;
    }
  }
  return all === 0 ? 0 : dark / all;
}
