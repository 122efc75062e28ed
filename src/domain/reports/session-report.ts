/**
 * The session report (docs/reports.md): one student session as a PDF for a misconduct committee,
 * rendered from a plain data object. Pure apart from the PDF library: no database, no storage, no
 * clock (the moment of generation is part of the data).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import fontkit from '@foliojs-fork/fontkit';
import { PDFDocument, type PDFFont, type PDFImage, type PDFPage, type RGB, rgb } from 'pdf-lib';

/** Resolves the font files shipped in npm packages (see readFontFiles). */
const requireFont = createRequire(import.meta.url);

/** A fact about the session: a label and its value as shown. */
export interface ReportCheck {
  readonly name: string;
  readonly value: string;
}

/** The session's facts. Times are epoch milliseconds. No token, pin code or secret appears here. */
export interface ReportSession {
  readonly id: number;
  readonly name: string;
  readonly email: string;
  readonly attempt: number;
  readonly status: string;
  readonly archived: boolean;
  readonly reviewed: string;
  readonly externalId: string | null;
  readonly studentId: string | null;
  readonly lmsUserId: string | null;
  readonly startTime: number | null;
  /** When the candidate accepted the exam's terms (docs/room.md "Terms"); absent or null: not accepted. */
  readonly termsAcceptedAt?: number | null;
  readonly endTime: number | null;
  readonly endReason: string | null;
  readonly recordingStartedAt: number | null;
  readonly recordingEndedAt: number | null;
  readonly operatingSystem: string | null;
  readonly browser: string | null;
  readonly browserVersion: string | null;
  readonly bandwidthSpeed: number | null;
  readonly transcodingStatus: string;
  readonly checks: readonly ReportCheck[];
}

/** A photo of the session: its bytes when they could be read, else why not. */
export interface ReportPhoto {
  readonly kind: 'id_card' | 'face_photo';
  readonly contentType: string | null;
  /** Undefined when the session has none, or its stored bytes are gone or too large. */
  readonly bytes: Uint8Array | undefined;
  /** Shown instead of the picture when there are no bytes (or they cannot be drawn). */
  readonly note: string | undefined;
}

/** An incident as the report lists it. */
export interface ReportIncident {
  readonly id: number;
  readonly kind: string | null;
  readonly comment: string;
  /** Seconds into the recording (the client's `offset_time`), or null when not given. */
  readonly offsetSeconds: number | null;
  readonly createdAt: number;
}

/** A verdict as the report shows it (the latest, and each entry of the history). */
export interface ReportVerdict {
  readonly verdict: string;
  readonly comment: string | null;
  readonly reviewerName: string | null;
  readonly reviewerId: number | null;
  /** `not_required`, `pending` or `confirmed` (docs/review.md, "Second review"). */
  readonly secondReview: string;
  readonly at: number;
}

/** A finalised recording, summarised (the video itself is not in the PDF). */
export interface ReportRecording {
  readonly source: string;
  readonly status: string;
  readonly durationSeconds: number | null;
  readonly gaps: number;
}

/** Everything the report shows. */
export interface SessionReportData {
  readonly generatedAt: number;
  /** The exam's IANA time zone: every absolute time is shown in it. */
  readonly timeZone: string;
  readonly institute: { readonly id: number; readonly name: string };
  readonly exam: { readonly id: number; readonly name: string; readonly type: string };
  readonly session: ReportSession;
  readonly photos: readonly ReportPhoto[];
  readonly recordings: readonly ReportRecording[];
  readonly incidents: readonly ReportIncident[];
  /** The newest verdict, or undefined before the first. */
  readonly verdict: ReportVerdict | undefined;
  /** Every verdict recorded, oldest first. */
  readonly history: readonly ReportVerdict[];
}

/** The download name of a session's report. */
export function reportFileName(sessionId: number): string {
  return `student-session-${sessionId}-report.pdf`;
}

// ---- Times ----

/** The zone when the runtime knows it, else UTC (a report never fails over a zone name). */
function usableZone(zone: string): string {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone;
  } catch {
    return 'UTC';
  }
}

/** One formatter per zone: making one costs more than formatting a thousand instants. */
const instantFormats = new Map<string, Intl.DateTimeFormat>();

function instantFormat(zone: string): Intl.DateTimeFormat {
  let format = instantFormats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone: usableZone(zone),
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'shortOffset',
    });
    instantFormats.set(zone, format);
  }
  return format;
}

/**
 * An instant in `zone` as `2026-11-21 10:30:00 GMT+1` (24-hour clock, the zone's offset at that
 * moment). Returns `-` for null.
 */
export function formatInstant(millis: number | null, zone: string): string {
  if (millis === null) return '-';
  const parts = instantFormat(zone).formatToParts(new Date(millis));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((item) => item.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}:${part('second')} ${part('timeZoneName')}`;
}

/** A number of seconds as `+01:02:03` (`-00:00:05` before the start). Returns `-` for null. */
export function formatOffset(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '-';
  const sign = seconds < 0 ? '-' : '+';
  const whole = Math.floor(Math.abs(seconds));
  const parts = [Math.floor(whole / 3600), Math.floor((whole % 3600) / 60), whole % 60];
  return sign + parts.map((value) => String(value).padStart(2, '0')).join(':');
}

/** An incident placed in time: when it happened and how far into the session. */
export interface PlacedIncident extends ReportIncident {
  /** Epoch milliseconds. */
  readonly at: number;
  /** Seconds from the session's start, or null when the session never started. */
  readonly sinceStart: number | null;
}

/**
 * Places each incident in time and orders them by it (ties by id). An incident with an
 * `offset_time` happened that many seconds after video time 0 (the recording's start, else the
 * session's start); one without happened when it was recorded. Returns them.
 */
export function placeIncidents(
  incidents: readonly ReportIncident[],
  session: Pick<ReportSession, 'startTime' | 'recordingStartedAt'>,
): PlacedIncident[] {
  const videoZero = session.recordingStartedAt ?? session.startTime;
  return incidents
    .map((incident) => {
      const at =
        incident.offsetSeconds !== null && videoZero !== null
          ? videoZero + incident.offsetSeconds * 1000
          : incident.createdAt;
      const sinceStart = session.startTime === null ? null : (at - session.startTime) / 1000;
      return { ...incident, at, sinceStart };
    })
    .sort((a, b) => a.at - b.at || a.id - b.id);
}

// ---- Words and units ----

/** Stored values whose plain reading is not just the words of the value. */
const VALUE_WORDS: Readonly<Record<string, string>> = {
  after_check_req: 'Requirements checked',
  exam_not_started: 'Exam not started',
  not_sent_to_queue: 'Not sent to the queue',
  in_review: 'In review',
  webcam: 'Webcam',
  screen: 'Screen',
  mobile: 'Phone camera',
};

/**
 * A stored code (`exam_finished`, `not_required`) as words (`Exam finished`, `Not required`): a
 * few by a table, the rest by their words with the first capitalised. Returns the words.
 */
export function inWords(value: string): string {
  const known = VALUE_WORDS[value];
  if (known !== undefined) return known;
  const words = value.replace(/_/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A bandwidth measured by the room's check, in megabits per second (`12.5 Mbit/s`). */
export function bandwidthText(megabits: number): string {
  const rounded = Math.round(megabits * 10) / 10;
  return `${rounded.toLocaleString('en-GB')} Mbit/s`;
}

// ---- Text the fonts can show ----

/**
 * Makes text showable with the report's fonts: control characters become spaces, a character a
 * font has stays, an accented one no font has loses its accent when the base letter remains, and
 * anything else is written as its code point (`[U+0627]`), so nothing is lost without a trace.
 * `covered` says whether a code point has a glyph. Never throws. Returns the text.
 */
export function showableText(text: string, covered: (codePoint: number) => boolean): string {
  let result = '';
  for (const character of text.normalize('NFC')) {
    const code = character.codePointAt(0) ?? 0;
    if (code < 0x20 || (code >= 0x7f && code < 0xa0)) {
      result += ' ';
      continue;
    }
    if (covered(code)) {
      result += character;
      continue;
    }
    const base = character.normalize('NFD').replace(/\p{M}/gu, '');
    if (base !== '' && [...base].every((c) => covered(c.codePointAt(0) ?? 0))) {
      result += base;
      continue;
    }
    result += `[U+${code.toString(16).toUpperCase().padStart(4, '0')}]`;
  }
  return result;
}

/**
 * One weight of the report's type: the Latin font (Latin, Greek, Cyrillic) and the Chinese one
 * that draws what the first lacks. Widths are measured once per character, so measuring a text
 * costs a lookup per character (docs/security.md, "H1").
 */
class Face {
  readonly #fonts: readonly PDFFont[];
  readonly #covers: readonly ReadonlySet<number>[];
  /** Advance width at size 1 of each character met, and which font draws it. */
  readonly #glyphs = new Map<number, { readonly font: number; readonly width: number }>();

  constructor(fonts: readonly PDFFont[]) {
    this.#fonts = fonts;
    this.#covers = fonts.map((font) => new Set(font.getCharacterSet()));
  }

  covers(code: number): boolean {
    return this.#covers.some((set) => set.has(code));
  }

  #glyph(code: number): { readonly font: number; readonly width: number } {
    const known = this.#glyphs.get(code);
    if (known !== undefined) return known;
    const index = Math.max(
      0,
      this.#covers.findIndex((set) => set.has(code)),
    );
    const font = this.#fonts[index] ?? this.#fonts[0];
    const glyph = {
      font: index,
      width: font === undefined ? 0 : font.widthOfTextAtSize(String.fromCodePoint(code), 1),
    };
    this.#glyphs.set(code, glyph);
    return glyph;
  }

  /** The width of one character at `size`. */
  advance(character: string, size: number): number {
    return this.#glyph(character.codePointAt(0) ?? 0).width * size;
  }

  /** The width of showable text at `size`: the sum of its characters' advances. */
  width(text: string, size: number): number {
    let total = 0;
    for (const character of text) total += this.advance(character, size);
    return total;
  }

  /** Draws showable text at (x, y), each stretch in the font that has its characters. */
  draw(page: PDFPage, text: string, x: number, y: number, size: number, color: RGB): void {
    let run = '';
    let runFont = -1;
    let left = x;
    const flush = () => {
      const font = this.#fonts[runFont];
      if (run === '' || font === undefined) return;
      page.drawText(run, { x: left, y, size, font, color });
      left += this.width(run, size);
    };
    for (const character of text) {
      const { font } = this.#glyph(character.codePointAt(0) ?? 0);
      if (font !== runFont) {
        flush();
        run = '';
        runFont = font;
      }
      run += character;
    }
    flush();
  }
}

/** The font files, read once per thread: Noto Sans (Latin) and Noto Sans SC, regular and bold. */
let fontFiles: { regular: Uint8Array[]; bold: Uint8Array[] } | undefined;

function readFontFiles(): { regular: Uint8Array[]; bold: Uint8Array[] } {
  if (fontFiles !== undefined) return fontFiles;
  const read = (file: string) => new Uint8Array(fs.readFileSync(requireFont.resolve(file)));
  fontFiles = {
    regular: [
      read('@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf'),
      read('@expo-google-fonts/noto-sans-sc/400Regular/NotoSansSC_400Regular.ttf'),
    ],
    bold: [
      read('@expo-google-fonts/noto-sans/700Bold/NotoSans_700Bold.ttf'),
      read('@expo-google-fonts/noto-sans-sc/700Bold/NotoSansSC_700Bold.ttf'),
    ],
  };
  return fontFiles;
}

type Fontkit = Parameters<PDFDocument['registerFontkit']>[0];
type FontkitFont = ReturnType<Fontkit['create']>;

/**
 * fontkit whose fonts map text to glyphs through the character map alone, without OpenType
 * shaping. Shaping every line cost about 20 ms per incident (most of a report's time), and the
 * scripts the fonts cover (Latin, Greek, Cyrillic, Chinese) need none; only kerning is lost.
 */
const unshapedFontkit: Fontkit = {
  create(buffer, postscriptName) {
    // This fontkit recognises a font by Buffer methods: hand it the bytes as a Buffer (no copy).
    const bytes = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    const font: FontkitFont = fontkit.create(bytes, postscriptName);
    const unshaped: FontkitFont = Object.create(font) as FontkitFont;
    const glyphs = new Map<number, ReturnType<FontkitFont['glyphForCodePoint']>>();
    const glyphOf = (code: number) => {
      let glyph = glyphs.get(code);
      if (glyph === undefined) {
        glyph = font.glyphForCodePoint(code);
        glyphs.set(code, glyph);
      }
      return glyph;
    };
    unshaped.layout = (text) => {
      const run: ReturnType<FontkitFont['glyphForCodePoint']>[] = [];
      for (const character of text) run.push(glyphOf(character.codePointAt(0) ?? 0));
      return { glyphs: run } as ReturnType<FontkitFont['layout']>;
    };
    return unshaped;
  },
};

/**
 * Embeds one weight, each font subset (only the glyphs drawn are written). Without shaping, what
 * is measured character by character is what is drawn. Returns the face.
 */
async function embedFace(doc: PDFDocument, files: readonly Uint8Array[]): Promise<Face> {
  const fonts = await Promise.all(files.map((bytes) => doc.embedFont(bytes, { subset: true })));
  return new Face(fonts);
}

// ---- Layout ----

const PAGE_WIDTH = 595.28;
const PAGE_HEIGHT = 841.89;
const MARGIN = 50;
const FOOTER_SPACE = 40;
const CONTENT_WIDTH = PAGE_WIDTH - 2 * MARGIN;
const BODY_SIZE = 10;
const LINE = 13;
const LABEL_WIDTH = 150;
const PHOTO_BOX = { width: 240, height: 180 };
const GREY = rgb(0.4, 0.4, 0.4);
const BLACK = rgb(0, 0, 0);
const RULE = rgb(0.75, 0.75, 0.75);

/** Writes pages top to bottom, starting a new page whenever the next block does not fit. */
class Writer {
  readonly #doc: PDFDocument;
  readonly regular: Face;
  readonly bold: Face;
  page!: PDFPage;
  y = 0;

  constructor(doc: PDFDocument, regular: Face, bold: Face) {
    this.#doc = doc;
    this.regular = regular;
    this.bold = bold;
    this.newPage();
  }

  newPage(): void {
    this.page = this.#doc.addPage([PAGE_WIDTH, PAGE_HEIGHT]);
    this.y = PAGE_HEIGHT - MARGIN;
  }

  /** Makes room for `height` points, on a new page when this one has too little left. */
  need(height: number): void {
    if (this.y - height < MARGIN + FOOTER_SPACE) this.newPage();
  }

  text(value: string): string {
    return showableText(value, (code) => this.regular.covers(code) && this.bold.covers(code));
  }

  /**
   * Splits text into lines no wider than `width` (a word wider than that is cut). Each character
   * is measured once, so the time is linear in the text's length. Returns the lines.
   */
  wrap(value: string, face: Face, size: number, width: number): string[] {
    const lines: string[] = [];
    const space = face.advance(' ', size);
    for (const paragraph of value.split(/\r\n|\r|\n/)) {
      let line = '';
      let lineWidth = 0;
      for (const word of this.text(paragraph).split(' ')) {
        const wordWidth = face.width(word, size);
        const candidate = line === '' ? wordWidth : lineWidth + space + wordWidth;
        if (candidate <= width) {
          line = line === '' ? word : `${line} ${word}`;
          lineWidth = candidate;
          continue;
        }
        if (line !== '') lines.push(line);
        line = '';
        lineWidth = 0;
        // A word wider than the column is cut where it must (Chinese text, with no spaces, too).
        for (const character of word) {
          const advance = face.advance(character, size);
          if (line !== '' && lineWidth + advance > width) {
            lines.push(line);
            line = '';
            lineWidth = 0;
          }
          line += character;
          lineWidth += advance;
        }
      }
      lines.push(line);
    }
    return lines;
  }

  /** Draws already wrapped lines at `x`, moving down. */
  lines(lines: readonly string[], x: number, face: Face, size = BODY_SIZE, color = BLACK): void {
    for (const line of lines) {
      this.need(LINE);
      if (line !== '') face.draw(this.page, line, x, this.y - size, size, color);
      this.y -= LINE;
    }
  }

  paragraph(value: string, options: { face?: Face; size?: number; color?: RGB } = {}): void {
    const face = options.face ?? this.regular;
    const size = options.size ?? BODY_SIZE;
    this.lines(this.wrap(value, face, size, CONTENT_WIDTH), MARGIN, face, size, options.color ?? BLACK);
  }

  heading(value: string): void {
    this.need(LINE * 3 + 10);
    this.y -= 10;
    this.bold.draw(this.page, this.text(value), MARGIN, this.y - 13, 13, BLACK);
    this.y -= 17;
    this.page.drawLine({
      start: { x: MARGIN, y: this.y },
      end: { x: PAGE_WIDTH - MARGIN, y: this.y },
      thickness: 0.5,
      color: RULE,
    });
    this.y -= 6;
  }

  /**
   * A label and its (wrapped) value side by side. A row that fits on a page stays together; a
   * longer one (a long comment) flows on over the next pages.
   */
  field(label: string, value: string): void {
    const labelLines = this.wrap(label, this.bold, BODY_SIZE, LABEL_WIDTH - 8);
    const valueLines = this.wrap(value, this.regular, BODY_SIZE, CONTENT_WIDTH - LABEL_WIDTH);
    const rows = Math.max(labelLines.length, valueLines.length);
    if (rows * LINE < PAGE_HEIGHT / 3) this.need(rows * LINE);
    for (let row = 0; row < rows; row += 1) {
      this.need(LINE);
      const y = this.y - BODY_SIZE;
      const labelLine = labelLines[row];
      const valueLine = valueLines[row];
      if (labelLine !== undefined && labelLine !== '') {
        this.bold.draw(this.page, labelLine, MARGIN, y, BODY_SIZE, BLACK);
      }
      if (valueLine !== undefined && valueLine !== '') {
        this.regular.draw(this.page, valueLine, MARGIN + LABEL_WIDTH, y, BODY_SIZE, BLACK);
      }
      this.y -= LINE;
    }
  }

  space(points: number): void {
    this.y -= points;
  }

  /** Draws an image scaled into a box whose top left is (x, y). */
  image(image: PDFImage, x: number, top: number): void {
    const scale = Math.min(PHOTO_BOX.width / image.width, PHOTO_BOX.height / image.height, 1);
    const width = image.width * scale;
    const height = image.height * scale;
    this.page.drawImage(image, { x, y: top - height, width, height });
  }
}

const PHOTO_TITLES: Readonly<Record<ReportPhoto['kind'], string>> = {
  id_card: 'ID card',
  face_photo: 'Face photo',
};

/** The picture of a photo, or the reason it is not drawn. */
async function embedPhoto(doc: PDFDocument, photo: ReportPhoto): Promise<PDFImage | string> {
  if (photo.bytes === undefined) return photo.note ?? 'None';
  // pdf-lib reads an image from the start of its ArrayBuffer, ignoring a view's offset: a Buffer
  // from Node's pool (Buffer.concat of a small file) would be read from someone else's bytes.
  const bytes = photo.bytes.byteOffset === 0 ? photo.bytes : new Uint8Array(photo.bytes);
  try {
    if (photo.contentType === 'image/jpeg') return await doc.embedJpg(bytes);
    if (photo.contentType === 'image/png') return await doc.embedPng(bytes);
  } catch {
    return `Stored as ${photo.contentType}, but the image could not be read.`;
  }
  return `Stored as ${photo.contentType ?? 'an unknown type'}, which the PDF cannot show; see the photo itself.`;
}

function verdictLine(entry: ReportVerdict, zone: string): string {
  const who =
    entry.reviewerName ?? (entry.reviewerId === null ? 'unknown reviewer' : `user ${entry.reviewerId}`);
  const standing =
    entry.secondReview === 'not_required'
      ? ''
      : ` (second review: ${inWords(entry.secondReview).toLowerCase()})`;
  return `${inWords(entry.verdict)}${standing} by ${who}, ${formatInstant(entry.at, zone)}`;
}

function durationText(seconds: number | null): string {
  return seconds === null ? '-' : formatOffset(seconds).slice(1);
}

/**
 * Renders the report of one session: its facts, photos, recordings, incidents (ordered by time,
 * each with its time since the session's start and its time in the exam's zone), the verdict and
 * its history, and on every page a footer with the moment of generation and `Page i of n`. Text is
 * drawn in embedded, subset Unicode fonts (Latin, Greek, Cyrillic, Chinese); a character neither
 * has is written as its code point (showableText), and a photo that cannot be drawn is named
 * instead, so any session renders. The time is linear in the size of the data, but it is CPU work:
 * the service runs it in a worker thread (report-renderer.ts). Returns the PDF's bytes; throws only
 * what the PDF library throws for reasons unrelated to the data.
 */
export async function renderSessionReport(data: SessionReportData): Promise<Uint8Array> {
  const zone = usableZone(data.timeZone);
  const doc = await PDFDocument.create();
  const generated = new Date(data.generatedAt);
  const { session } = data;
  doc.setTitle(`Student session ${session.id} report`);
  doc.setSubject(`Exam ${data.exam.id}, student session ${session.id}`);
  doc.setAuthor(data.institute.name);
  doc.setCreator('Invigil');
  doc.setProducer('Invigil (pdf-lib)');
  doc.setCreationDate(generated);
  doc.setModificationDate(generated);
  doc.registerFontkit(unshapedFontkit);
  const files = readFontFiles();
  const [regular, bold] = await Promise.all([embedFace(doc, files.regular), embedFace(doc, files.bold)]);
  const out = new Writer(doc, regular, bold);
  const when = (millis: number | null) => formatInstant(millis, zone);

  out.paragraph('Student session report', { face: bold, size: 18 });
  out.space(8);
  out.paragraph(`${session.name} <${session.email}>`, { face: bold, size: 12 });
  out.paragraph(`${data.exam.name} – ${data.institute.name}`, { color: GREY });
  out.paragraph(`Times are shown in the exam's time zone, ${zone}.`, { color: GREY });

  out.heading('Session');
  out.field('Student', session.name);
  out.field('Email', session.email);
  out.field('Institute', `${data.institute.name} (id ${data.institute.id})`);
  out.field('Exam', `${data.exam.name} (id ${data.exam.id}, ${inWords(data.exam.type).toLowerCase()})`);
  out.field('Student session id', String(session.id));
  out.field('Attempt', String(session.attempt));
  if (session.externalId !== null) out.field('External id', session.externalId);
  if (session.studentId !== null) out.field('Student id', session.studentId);
  if (session.lmsUserId !== null) out.field('LMS user id', session.lmsUserId);
  out.field('Status', session.archived ? `${inWords(session.status)} (archived)` : inWords(session.status));
  out.field('Started', when(session.startTime));
  if (session.termsAcceptedAt != null) out.field('Terms accepted', when(session.termsAcceptedAt));
  out.field('Finished', when(session.endTime));
  if (session.endReason !== null) out.field('End reason', inWords(session.endReason));
  out.field('Recording', `${when(session.recordingStartedAt)} to ${when(session.recordingEndedAt)}`);
  const browser = [session.browser, session.browserVersion].filter((part) => part !== null).join(' ');
  out.field('Browser', browser === '' ? '-' : browser);
  out.field('Operating system', session.operatingSystem ?? '-');
  if (session.bandwidthSpeed !== null) out.field('Bandwidth', bandwidthText(session.bandwidthSpeed));
  for (const check of session.checks) out.field(check.name, inWords(check.value));

  if (data.photos.length > 0) {
    out.heading('Photos');
    const pictures = await Promise.all(data.photos.map((photo) => embedPhoto(doc, photo)));
    out.need(PHOTO_BOX.height + 2 * LINE);
    const top = out.y;
    pictures.forEach((picture, index) => {
      const photo = data.photos[index];
      if (photo === undefined) return;
      const x = MARGIN + index * (PHOTO_BOX.width + 15);
      bold.draw(out.page, out.text(PHOTO_TITLES[photo.kind]), x, top - BODY_SIZE, BODY_SIZE, BLACK);
      if (typeof picture === 'string') {
        const lines = out.wrap(picture, regular, BODY_SIZE, PHOTO_BOX.width);
        lines.forEach((line, row) => {
          regular.draw(out.page, line, x, top - BODY_SIZE - LINE * (row + 1) - 4, BODY_SIZE, GREY);
        });
        return;
      }
      out.image(picture, x, top - LINE - 2);
    });
    out.y = top - PHOTO_BOX.height - 2 * LINE;
  }

  if (data.recordings.length > 0) {
    out.heading('Recordings');
    for (const recording of data.recordings) {
      const gaps = recording.gaps === 1 ? '1 gap' : `${recording.gaps} gaps`;
      out.field(
        inWords(recording.source),
        `${inWords(recording.status)}, duration ${durationText(recording.durationSeconds)}, ${gaps}`,
      );
    }
  }

  const placed = placeIncidents(data.incidents, session);
  out.heading(`Incidents (${placed.length})`);
  if (placed.length === 0) out.paragraph('No incident was recorded.', { color: GREY });
  for (const [index, incident] of placed.entries()) {
    const label = `${index + 1}. ${formatOffset(incident.sinceStart)}`;
    const kind = incident.kind === null ? '' : ` [${inWords(incident.kind)}]`;
    out.field(label, `${when(incident.at)}${kind}\n${incident.comment}`);
    out.space(3);
  }

  out.heading('Verdict');
  if (data.verdict === undefined) {
    out.paragraph(`No verdict recorded (reviewed: ${inWords(session.reviewed).toLowerCase()}).`, {
      color: GREY,
    });
  } else {
    out.field('Verdict', inWords(data.verdict.verdict));
    out.field('Second review', inWords(data.verdict.secondReview));
    out.field(
      'Reviewer',
      data.verdict.reviewerName ??
        (data.verdict.reviewerId === null ? '-' : `user ${data.verdict.reviewerId}`),
    );
    out.field('Recorded', when(data.verdict.at));
    out.field('Comment', data.verdict.comment ?? '-');
  }

  out.heading(`Verdict history (${data.history.length})`);
  if (data.history.length === 0) out.paragraph('No verdict recorded.', { color: GREY });
  for (const [index, entry] of data.history.entries()) {
    out.field(
      `${index + 1}.`,
      entry.comment === null ? verdictLine(entry, zone) : `${verdictLine(entry, zone)}\n${entry.comment}`,
    );
    out.space(3);
  }

  const pages = doc.getPages();
  const footerStart = out.text(
    `Generated ${when(data.generatedAt)} by Invigil – student session ${session.id}`,
  );
  pages.forEach((page, index) => {
    const number = `Page ${index + 1} of ${pages.length}`;
    regular.draw(page, footerStart, MARGIN, MARGIN - 20, 8, GREY);
    regular.draw(page, number, PAGE_WIDTH - MARGIN - regular.width(number, 8), MARGIN - 20, 8, GREY);
  });

  return doc.save({ objectsPerTick: Infinity });
}
