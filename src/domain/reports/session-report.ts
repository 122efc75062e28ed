/**
 * The session report (docs/reports.md): one student session as a PDF for a misconduct committee,
 * rendered from a plain data object. Pure apart from the PDF library: no database, no storage, no
 * clock (the moment of generation is part of the data).
 */
import { PDFDocument, type PDFFont, type PDFImage, type PDFPage, rgb, StandardFonts } from 'pdf-lib';

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

/**
 * An instant in `zone` as `2026-11-21 10:30:00 GMT+1` (24-hour clock, the zone's offset at that
 * moment). Returns `-` for null.
 */
export function formatInstant(millis: number | null, zone: string): string {
  if (millis === null) return '-';
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: usableZone(zone),
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'shortOffset',
  }).formatToParts(new Date(millis));
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

// ---- Text the standard fonts can show ----

/** Letters without a WinAnsi form and without a decomposition to one: their nearest Latin letter. */
const LATIN_FALLBACKS: Readonly<Record<string, string>> = {
  Ł: 'L',
  ł: 'l',
  Đ: 'D',
  đ: 'd',
  Ħ: 'H',
  ħ: 'h',
  ı: 'i',
  Ŀ: 'L',
  ŀ: 'l',
  ø: 'o',
  Ø: 'O',
  '\u2010': '-',
  '\u2011': '-',
  '\u2212': '-',
  '\u00a0': ' ',
};

/**
 * Makes text showable in a standard PDF font (WinAnsi): control characters become spaces, a
 * character the font has stays, an accented one it lacks loses its accent when the base letter
 * remains (ő → o), a few letters map to their nearest Latin one (Ł → L), anything else becomes `?`.
 * Never throws. Returns the text.
 */
export function showableText(text: string, characters: ReadonlySet<number>): string {
  let result = '';
  for (const character of text.normalize('NFC')) {
    const code = character.codePointAt(0) ?? 0;
    if (code < 0x20 || (code >= 0x7f && code < 0xa0)) {
      result += ' ';
      continue;
    }
    if (characters.has(code)) {
      result += character;
      continue;
    }
    const fallback = LATIN_FALLBACKS[character];
    if (fallback !== undefined && [...fallback].every((c) => characters.has(c.codePointAt(0) ?? 0))) {
      result += fallback;
      continue;
    }
    const base = character.normalize('NFD').replace(/\p{M}/gu, '');
    if (base !== '' && [...base].every((c) => characters.has(c.codePointAt(0) ?? 0))) {
      result += base;
      continue;
    }
    result += '?';
  }
  return result;
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
  readonly regular: PDFFont;
  readonly bold: PDFFont;
  readonly #characters: ReadonlySet<number>;
  page!: PDFPage;
  y = 0;

  constructor(doc: PDFDocument, regular: PDFFont, bold: PDFFont) {
    this.#doc = doc;
    this.regular = regular;
    this.bold = bold;
    this.#characters = new Set(regular.getCharacterSet());
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
    return showableText(value, this.#characters);
  }

  /** Splits text into lines no wider than `width` (long words are cut). Returns the lines. */
  wrap(value: string, font: PDFFont, size: number, width: number): string[] {
    const lines: string[] = [];
    for (const paragraph of value.split(/\r\n|\r|\n/)) {
      let line = '';
      for (const word of this.text(paragraph).split(' ')) {
        const candidate = line === '' ? word : `${line} ${word}`;
        if (font.widthOfTextAtSize(candidate, size) <= width) {
          line = candidate;
          continue;
        }
        if (line !== '') lines.push(line);
        // A word wider than the column is cut where it must.
        let rest = word;
        while (font.widthOfTextAtSize(rest, size) > width) {
          let cut = rest.length - 1;
          while (cut > 1 && font.widthOfTextAtSize(rest.slice(0, cut), size) > width) cut -= 1;
          lines.push(rest.slice(0, cut));
          rest = rest.slice(cut);
        }
        line = rest;
      }
      lines.push(line);
    }
    return lines;
  }

  /** Draws already wrapped lines at `x`, moving down. */
  lines(lines: readonly string[], x: number, font: PDFFont, size = BODY_SIZE, color = BLACK): void {
    for (const line of lines) {
      this.need(LINE);
      if (line !== '') this.page.drawText(line, { x, y: this.y - size, size, font, color });
      this.y -= LINE;
    }
  }

  paragraph(
    value: string,
    options: { font?: PDFFont; size?: number; color?: ReturnType<typeof rgb> } = {},
  ): void {
    const font = options.font ?? this.regular;
    const size = options.size ?? BODY_SIZE;
    this.lines(this.wrap(value, font, size, CONTENT_WIDTH), MARGIN, font, size, options.color ?? BLACK);
  }

  heading(value: string): void {
    this.need(LINE * 3 + 10);
    this.y -= 10;
    this.page.drawText(this.text(value), { x: MARGIN, y: this.y - 13, size: 13, font: this.bold });
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
        this.page.drawText(labelLine, { x: MARGIN, y, size: BODY_SIZE, font: this.bold });
      }
      if (valueLine !== undefined && valueLine !== '') {
        this.page.drawText(valueLine, { x: MARGIN + LABEL_WIDTH, y, size: BODY_SIZE, font: this.regular });
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
  try {
    if (photo.contentType === 'image/jpeg') return await doc.embedJpg(photo.bytes);
    if (photo.contentType === 'image/png') return await doc.embedPng(photo.bytes);
  } catch {
    return `Stored as ${photo.contentType}, but the image could not be read.`;
  }
  return `Stored as ${photo.contentType ?? 'an unknown type'}, which the PDF cannot show; see the photo itself.`;
}

function verdictLine(entry: ReportVerdict, zone: string): string {
  const who =
    entry.reviewerName ?? (entry.reviewerId === null ? 'unknown reviewer' : `user ${entry.reviewerId}`);
  const standing = entry.secondReview === 'not_required' ? '' : ` (second review: ${entry.secondReview})`;
  return `${entry.verdict}${standing} by ${who}, ${formatInstant(entry.at, zone)}`;
}

function durationText(seconds: number | null): string {
  return seconds === null ? '-' : formatOffset(seconds).slice(1);
}

/**
 * Renders the report of one session: its facts, photos, recordings, incidents (ordered by time,
 * each with its time since the session's start and its time in the exam's zone), the verdict and
 * its history, and on every page a footer with the moment of generation and `Page i of n`. Text the
 * standard fonts cannot show is replaced (showableText), and a photo that cannot be drawn is named
 * instead, so any session renders. Returns the PDF's bytes; throws only what the PDF library throws
 * for reasons unrelated to the data.
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
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const out = new Writer(doc, regular, bold);
  const when = (millis: number | null) => formatInstant(millis, zone);

  out.paragraph('Student session report', { font: bold, size: 18 });
  out.space(8);
  out.paragraph(`${session.name} <${session.email}>`, { font: bold, size: 12 });
  out.paragraph(`${data.exam.name} - ${data.institute.name}`, { color: GREY });
  out.paragraph(`Times are shown in the exam's time zone, ${zone}.`, { color: GREY });

  out.heading('Session');
  out.field('Student', session.name);
  out.field('Email', session.email);
  out.field('Institute', `${data.institute.name} (id ${data.institute.id})`);
  out.field('Exam', `${data.exam.name} (id ${data.exam.id}, ${data.exam.type})`);
  out.field('Student session id', String(session.id));
  out.field('Attempt', String(session.attempt));
  if (session.externalId !== null) out.field('External id', session.externalId);
  if (session.studentId !== null) out.field('Student id', session.studentId);
  if (session.lmsUserId !== null) out.field('LMS user id', session.lmsUserId);
  out.field('Status', session.archived ? `${session.status} (archived)` : session.status);
  out.field('Started', when(session.startTime));
  out.field('Finished', when(session.endTime));
  if (session.endReason !== null) out.field('End reason', session.endReason);
  out.field('Recording', `${when(session.recordingStartedAt)} to ${when(session.recordingEndedAt)}`);
  const browser = [session.browser, session.browserVersion].filter((part) => part !== null).join(' ');
  out.field('Browser', browser === '' ? '-' : browser);
  out.field('Operating system', session.operatingSystem ?? '-');
  if (session.bandwidthSpeed !== null) out.field('Bandwidth', String(session.bandwidthSpeed));
  for (const check of session.checks) out.field(check.name, check.value);

  if (data.photos.length > 0) {
    out.heading('Photos');
    const pictures = await Promise.all(data.photos.map((photo) => embedPhoto(doc, photo)));
    out.need(PHOTO_BOX.height + 2 * LINE);
    const top = out.y;
    pictures.forEach((picture, index) => {
      const photo = data.photos[index];
      if (photo === undefined) return;
      const x = MARGIN + index * (PHOTO_BOX.width + 15);
      out.page.drawText(out.text(PHOTO_TITLES[photo.kind]), {
        x,
        y: top - BODY_SIZE,
        size: BODY_SIZE,
        font: bold,
      });
      if (typeof picture === 'string') {
        const lines = out.wrap(picture, regular, BODY_SIZE, PHOTO_BOX.width);
        lines.forEach((line, row) => {
          out.page.drawText(line, {
            x,
            y: top - BODY_SIZE - LINE * (row + 1) - 4,
            size: BODY_SIZE,
            font: regular,
            color: GREY,
          });
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
      out.field(
        recording.source,
        `${recording.status}, duration ${durationText(recording.durationSeconds)}, ${recording.gaps} gap(s)`,
      );
    }
  }

  const placed = placeIncidents(data.incidents, session);
  out.heading(`Incidents (${placed.length})`);
  if (placed.length === 0) out.paragraph('No incident was recorded.', { color: GREY });
  for (const [index, incident] of placed.entries()) {
    const label = `${index + 1}. ${formatOffset(incident.sinceStart)}`;
    const kind = incident.kind === null ? '' : ` [${incident.kind}]`;
    out.field(label, `${when(incident.at)}${kind}\n${incident.comment}`);
    out.space(3);
  }

  out.heading('Verdict');
  if (data.verdict === undefined) {
    out.paragraph(`No verdict recorded (reviewed: ${session.reviewed}).`, { color: GREY });
  } else {
    out.field('Verdict', data.verdict.verdict);
    out.field('Second review', data.verdict.secondReview);
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
    `Generated ${when(data.generatedAt)} by Invigil - student session ${session.id}`,
  );
  pages.forEach((page, index) => {
    const number = `Page ${index + 1} of ${pages.length}`;
    page.drawText(footerStart, { x: MARGIN, y: MARGIN - 20, size: 8, font: regular, color: GREY });
    page.drawText(number, {
      x: PAGE_WIDTH - MARGIN - regular.widthOfTextAtSize(number, 8),
      y: MARGIN - 20,
      size: 8,
      font: regular,
      color: GREY,
    });
  });

  return doc.save({ objectsPerTick: Infinity });
}
