/**
 * The session report (docs/reports.md): one student session as a PDF for a misconduct committee,
 * rendered from a plain data object. Pure apart from the PDF library: no database, no storage, no
 * clock (the moment of generation is part of the data). Its fonts, bidi layout and page writer
 * (Face, Writer, embedFace, ...) are exported for the institute's record of processing
 * (src/domain/processing-record), which the same worker thread renders.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import fontkit from '@foliojs-fork/fontkit';
import type { Bidi } from 'bidi-js';
import { PDFDocument, type PDFFont, type PDFImage, type PDFPage, type RGB, rgb } from 'pdf-lib';
import { translator } from '../../i18n/catalogues.ts';
import { intlLocaleOf } from '../../i18n/dates.ts';
import { chooseLocale, type PageLocale, textDirection } from '../../i18n/locales.ts';
import type { MessageValues, Translator } from '../../i18n/translate.ts';

/** Resolves the font files shipped in npm packages (see readFontFiles), and bidi-js. */
const requirePackage = createRequire(import.meta.url);

/**
 * The Unicode Bidirectional Algorithm (bidi-js). The package is CommonJS whose types describe an
 * ES default export: required, it is the factory itself.
 */
const bidi = (requirePackage('bidi-js') as () => Bidi)();

/** A fact about the session: a label and its value as shown. */
export interface ReportCheck {
  readonly name: string;
  readonly value: string;
}

/** A student's accommodations as the report lists them (docs/accommodations.md). */
export interface ReportAccommodations {
  readonly extraTimeMinutes: number;
  readonly extraTimePercent: number;
  /** Null: no rest breaks allowed. */
  readonly breaks: { readonly count: number; readonly minutes: number } | null;
  readonly breaksTaken: number;
  /** `check` is one of the exempt checks (webcam, id_photo, …); `reason` is staff-only text. */
  readonly exemptions: readonly { readonly check: string; readonly reason: string }[];
  readonly assistiveTechnology: boolean;
  readonly note: string | null;
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
  /** The student's accommodations; absent or empty: the report has no such section. */
  readonly accommodations?: ReportAccommodations;
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
  /** The language of the report's words and dates (reportLocale); English when absent. */
  readonly locale?: PageLocale;
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
  /** The candidate's appeal against the verdict (docs/appeals.md); absent: none was made. */
  readonly appeal?: ReportAppeal;
}

/** An appeal as the report shows it. Times are epoch milliseconds. */
export interface ReportAppeal {
  /** `open`, `upheld` or `overturned`. */
  readonly status: string;
  /** The verdict appealed. */
  readonly appealedVerdict: string;
  readonly statement: string;
  readonly submittedAt: number;
  readonly fileNames: readonly string[];
  readonly decidedByName: string | null;
  readonly decidedById: number | null;
  readonly decidedAt: number | null;
  readonly comment: string | null;
}

/**
 * The language a report is written in: the one asked for (a reviewer's pick), else the institute's
 * default language, else English. Returns it.
 */
export function reportLocale(
  requested: string | null | undefined,
  institute: string | null | undefined,
): PageLocale {
  return chooseLocale({ choice: requested, institute, pseudo: true });
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

/** One formatter per language and zone (making one costs more than formatting a thousand instants). */
const instantFormats = new Map<string, Intl.DateTimeFormat>();

function instantFormat(locale: string, zone: string): Intl.DateTimeFormat {
  const key = `${locale} ${zone}`;
  let format = instantFormats.get(key);
  if (format === undefined) {
    format = new Intl.DateTimeFormat(locale, {
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
    instantFormats.set(key, format);
  }
  return format;
}

/**
 * An instant in `zone` as `2026-11-21 10:30:00 GMT+1` (24-hour clock, the zone's offset at that
 * moment). Returns `-` for null.
 */
export function formatInstant(millis: number | null, zone: string): string {
  if (millis === null) return '-';
  const parts = instantFormat('en-GB', zone).formatToParts(new Date(millis));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((item) => item.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}:${part('second')} ${part('timeZoneName')}`;
}

/**
 * An instant in `zone` as the report of `locale` shows it: in English as formatInstant does; in
 * another language its numeric date and 24-hour time with seconds, in that language's order, and
 * the zone's offset (`21.11.2026, 10:30:00 GMT+1`). Returns `-` for null.
 */
export function reportInstant(millis: number | null, zone: string, locale: string): string {
  if (locale === 'en') return formatInstant(millis, zone);
  if (millis === null) return '-';
  return instantFormat(intlLocaleOf(locale), zone).format(new Date(millis));
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

/**
 * The catalogue's words for the stored codes the report shows (statuses, checks, verdicts, end
 * reasons, exam types, recordings); the English messages read as inWords reads the code.
 */
const VALUE_KEYS: Readonly<Record<string, string>> = {
  registered: 'pdf.value.registered',
  email_sent: 'pdf.value.emailSent',
  after_check_req: 'pdf.value.afterCheckReq',
  in_setup: 'pdf.value.inSetup',
  exam_not_started: 'pdf.value.examNotStarted',
  exam_started: 'pdf.value.examStarted',
  exam_finished: 'pdf.value.examFinished',
  not_started: 'pdf.value.notStarted',
  not_completed: 'pdf.value.notCompleted',
  succeeded: 'pdf.value.succeeded',
  failed: 'pdf.value.failed',
  skipped: 'pdf.value.skipped',
  not_reviewed: 'pdf.value.notReviewed',
  in_review: 'pdf.value.inReview',
  passed: 'pdf.value.passed',
  suspicious: 'pdf.value.suspicious',
  violation: 'pdf.value.violation',
  not_required: 'pdf.value.notRequired',
  pending: 'pdf.value.pending',
  confirmed: 'pdf.value.confirmed',
  api: 'pdf.value.api',
  dropped: 'pdf.value.dropped',
  finished: 'pdf.value.finished',
  retention: 'pdf.value.retention',
  time_up: 'pdf.value.timeUp',
  demo: 'pdf.value.demo',
  classroom: 'pdf.value.classroom',
  record_review: 'pdf.value.recordReview',
  live_proctoring: 'pdf.value.liveProctoring',
  webcam: 'pdf.value.webcam',
  screen: 'pdf.value.screen',
  mobile: 'pdf.value.mobile',
  queued: 'pdf.value.queued',
  processing: 'pdf.value.processing',
  completed: 'pdf.value.completed',
};

/** A stored code as words in `t`'s language: the catalogue's when it has them, else inWords. */
export function valueWords(t: Translator, value: string): string {
  const key = VALUE_KEYS[value];
  return key === undefined ? inWords(value) : t.t(key);
}

/**
 * Words of valueWords placed inside a sentence: the first letter lowered, as English, Dutch,
 * French, Spanish and Italian write them there; German keeps it (its nouns are capitalised).
 */
function midSentence(t: Translator, words: string): string {
  if (t.locale === 'de') return words;
  return words.charAt(0).toLocaleLowerCase(intlLocaleOf(t.locale)) + words.slice(1);
}

/** A bandwidth measured by the room's check, in megabits per second (`12.5 Mbit/s`, `12,5 Mbit/s`). */
export function bandwidthText(megabits: number, locale = 'en'): string {
  const rounded = Math.round(megabits * 10) / 10;
  return `${rounded.toLocaleString(locale === 'en' ? 'en-GB' : intlLocaleOf(locale))} Mbit/s`;
}

// ---- Text the fonts can show ----

/**
 * Makes text showable with the report's fonts: control characters become spaces, a character a
 * font has stays, an accented one no font has loses its accent when the base letter remains, and
 * anything else is written as its code point (`[U+05D0]`), so nothing is lost without a trace.
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

/** The base direction of a line of text: its paragraph's, as the Bidirectional Algorithm names it. */
export type Direction = 'ltr' | 'rtl';

/**
 * The invisible marks that steer the Bidirectional Algorithm (LRM, RLM, ALM, embeddings, overrides,
 * isolates): they order a line's text, and draw nothing.
 */
function isBidiControl(code: number): boolean {
  return (
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** Text with a right-to-left letter (Hebrew, Arabic, Syriac, Thaana, N'Ko and their presentation forms). */
const RIGHT_TO_LEFT_LETTER = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]/u;

/** A code point only the Arabic font has: how the font engine tells the font that needs shaping. */
const ARABIC_ALEF = 0x0627;

/** First strong isolate and pop directional isolate: text placed inside RTL text keeps its own order. */
export const FSI = '\u2068';
export const PDI = '\u2069';
/** Left-to-right isolate: a signed duration stays `+00:01:02` inside RTL text. */
const LRI = '\u2066';

/**
 * The direction of a paragraph as the Bidirectional Algorithm finds it (rules P2, P3): that of its
 * first strong letter outside isolates, else `fallback`. Returns it.
 */
function paragraphDirection(text: string, fallback: Direction): Direction {
  let isolates = 0;
  for (const character of text) {
    const type = bidi.getBidiCharTypeName(character);
    if (type === 'LRI' || type === 'RLI' || type === 'FSI') isolates += 1;
    else if (type === 'PDI') isolates = Math.max(0, isolates - 1);
    else if (isolates > 0) continue;
    else if (type === 'L') return 'ltr';
    else if (type === 'R' || type === 'AL') return 'rtl';
  }
  return fallback;
}

/** A stretch of a line whose characters share a bidi level, in logical order, and its direction. */
interface DirectionalRun {
  readonly text: string;
  readonly rightToLeft: boolean;
}

/**
 * The runs of a line in visual order, left to right (the Bidirectional Algorithm, bidi-js, with the
 * line as its paragraph). Each run's text stays in logical order, with the characters an RTL run
 * mirrors (brackets) already mirrored. Returns them.
 */
function visualRuns(line: string, direction: Direction): DirectionalRun[] {
  const embedding = bidi.getEmbeddingLevels(line, direction);
  const { levels } = embedding;
  const order = bidi.getReorderedIndices(line, embedding);
  const mirrored = bidi.getMirroredCharactersMap(line, levels);
  const runs: DirectionalRun[] = [];
  let index = 0;
  while (index < order.length) {
    const first = order[index] ?? 0;
    const level = levels[first] ?? 0;
    const step = level % 2 === 1 ? -1 : 1;
    let next = index + 1;
    // A run goes on while the visual order walks the text one code unit at a time, at one level.
    while (
      next < order.length &&
      order[next] === (order[next - 1] ?? 0) + step &&
      levels[order[next] ?? 0] === level
    )
      next += 1;
    const last = order[next - 1] ?? first;
    let text = '';
    for (let unit = Math.min(first, last); unit <= Math.max(first, last); unit += 1)
      text += mirrored.get(unit) ?? line[unit] ?? '';
    runs.push({ text, rightToLeft: step === -1 });
    index = next;
  }
  return runs;
}

/** A glyph source of a face: which font, and its advance width at size 1 (0 for a bidi mark). */
interface GlyphSource {
  readonly font: number;
  readonly width: number;
}

/** What a bidi mark is drawn with: nothing. */
const NO_GLYPH: GlyphSource = { font: -1, width: 0 };

/**
 * One weight of the report's type: the Latin font (Latin, Greek, Cyrillic), the Chinese one that
 * draws what the first lacks and, in an Arabic report, the Arabic one. Widths are
 * measured once per character, so measuring a text costs a lookup per character (docs/security.md,
 * "H1"); Arabic, whose letters change shape with their neighbours, is measured once per word.
 */
export class Face {
  readonly #fonts: readonly PDFFont[];
  readonly #covers: readonly ReadonlySet<number>[];
  /** Per font: whether it shapes its text (Arabic joining forms) rather than drawing letter by letter. */
  readonly #shapes: readonly boolean[];
  /** Advance width at size 1 of each character met, and which font draws it. */
  readonly #glyphs = new Map<number, GlyphSource>();
  /** Advance width at size 1 of each shaped word met. */
  readonly #shapedWidths = new Map<string, number>();

  constructor(fonts: readonly PDFFont[]) {
    this.#fonts = fonts;
    this.#covers = fonts.map((font) => new Set(font.getCharacterSet()));
    this.#shapes = this.#covers.map((set) => set.has(ARABIC_ALEF));
  }

  /**
   * Whether the face draws a code point. Bidi marks count as drawn (as nothing) only with the
   * Arabic font, where they order the line; elsewhere they are shown as code points, as before.
   */
  covers(code: number): boolean {
    return (this.#shapes.includes(true) && isBidiControl(code)) || this.#covers.some((set) => set.has(code));
  }

  #glyph(code: number): GlyphSource {
    const known = this.#glyphs.get(code);
    if (known !== undefined) return known;
    if (isBidiControl(code)) return NO_GLYPH;
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

  /** The width at size 1 of a stretch of one shaping font, shaped as it is drawn. */
  #shapedWidth(text: string, font: number): number {
    const known = this.#shapedWidths.get(text);
    if (known !== undefined) return known;
    const width = this.#fonts[font]?.widthOfTextAtSize(text, 1) ?? 0;
    this.#shapedWidths.set(text, width);
    return width;
  }

  /**
   * The stretches of text each drawn by one font, in logical order (bidi marks dropped). Returns
   * them with their font and whether that font shapes them.
   */
  #stretches(text: string): { text: string; font: number; shaped: boolean }[] {
    const stretches: { text: string; font: number; shaped: boolean }[] = [];
    let current: { text: string; font: number; shaped: boolean } | undefined;
    for (const character of text) {
      const { font } = this.#glyph(character.codePointAt(0) ?? 0);
      if (font < 0) continue;
      if (current?.font !== font) {
        current = { text: '', font, shaped: this.#shapes[font] === true };
        stretches.push(current);
      }
      current.text += character;
    }
    return stretches;
  }

  /** The width of one character at `size`. */
  advance(character: string, size: number): number {
    return this.#glyph(character.codePointAt(0) ?? 0).width * size;
  }

  /**
   * The width of showable text at `size`: the sum of its characters' advances, a stretch of the
   * shaping (Arabic) font as shaped.
   */
  width(text: string, size: number): number {
    let total = 0;
    let shaped = '';
    let shapedFont = -1;
    const flush = () => {
      if (shaped !== '') total += this.#shapedWidth(shaped, shapedFont) * size;
      shaped = '';
    };
    for (const character of text) {
      const glyph = this.#glyph(character.codePointAt(0) ?? 0);
      if (glyph.font >= 0 && this.#shapes[glyph.font] === true) {
        if (glyph.font !== shapedFont) flush();
        shaped += character;
        shapedFont = glyph.font;
        continue;
      }
      flush();
      total += glyph.width * size;
    }
    flush();
    return total;
  }

  /**
   * Draws showable text left to right at (x, y), each stretch in the font that has its characters.
   * Returns the width drawn.
   */
  draw(page: PDFPage, text: string, x: number, y: number, size: number, color: RGB): number {
    let left = x;
    for (const stretch of this.#stretches(text)) {
      const font = this.#fonts[stretch.font];
      if (font === undefined) continue;
      // A shaping font lays out right to left: what it draws left to right goes one character at a time.
      const pieces = stretch.shaped ? [...stretch.text] : [stretch.text];
      for (const piece of pieces) {
        page.drawText(piece, { x: left, y, size, font, color });
        left += this.width(piece, size);
      }
    }
    return left - x;
  }

  /**
   * Draws one line of showable text at (x, y) in its visual order: the line's directional runs
   * (bidi-js) placed left to right, an RTL run drawn backwards, Arabic shaped by its font (which
   * lays it out right to left). A left-to-right line without RTL letters is drawn as it is.
   */
  drawLine(
    page: PDFPage,
    text: string,
    x: number,
    y: number,
    size: number,
    color: RGB,
    direction: Direction,
  ): void {
    if (direction === 'ltr' && !RIGHT_TO_LEFT_LETTER.test(text)) {
      this.draw(page, text, x, y, size, color);
      return;
    }
    let left = x;
    for (const run of visualRuns(text, direction)) {
      if (!run.rightToLeft) {
        left += this.draw(page, run.text, left, y, size, color);
        continue;
      }
      for (const stretch of this.#stretches(run.text).reverse()) {
        const font = this.#fonts[stretch.font];
        if (font === undefined) continue;
        const drawn = stretch.shaped ? stretch.text : [...stretch.text].reverse().join('');
        page.drawText(drawn, { x: left, y, size, font, color });
        left += this.width(stretch.text, size);
      }
    }
  }
}

/** Regular and bold files of one family. */
interface FontFiles {
  readonly regular: Uint8Array[];
  readonly bold: Uint8Array[];
}

/** The font files, read once per thread: Noto Sans (Latin) and Noto Sans SC, regular and bold. */
let fontFiles: FontFiles | undefined;
/**
 * Whether any text of a document's data is Arabic (photos' bytes are skipped). Linear in the data.
 * Shared with the record of processing (src/domain/processing-record).
 */
export function holdsArabic(data: unknown): boolean {
  const text = JSON.stringify(data, (_key, value: unknown) =>
    value instanceof Uint8Array ? undefined : value,
  );
  return /\p{Script=Arabic}/u.test(text);
}

/**
 * IBM Plex Sans Arabic, regular and bold, read the first time a report is written in Arabic. Not
 * Noto Sans Arabic: it draws a letter's dots as separate marks that only OpenType positioning puts
 * in place (pdf-lib draws advances alone), and its dotless shapes, shared by several letters, make
 * the text read back wrong (ت, ب and ي alike).
 */
let arabicFontFiles: FontFiles | undefined;

const readFont = (file: string) => new Uint8Array(fs.readFileSync(requirePackage.resolve(file)));

export function readFontFiles(): FontFiles {
  fontFiles ??= {
    regular: [
      readFont('@expo-google-fonts/noto-sans/400Regular/NotoSans_400Regular.ttf'),
      readFont('@expo-google-fonts/noto-sans-sc/400Regular/NotoSansSC_400Regular.ttf'),
    ],
    bold: [
      readFont('@expo-google-fonts/noto-sans/700Bold/NotoSans_700Bold.ttf'),
      readFont('@expo-google-fonts/noto-sans-sc/700Bold/NotoSansSC_700Bold.ttf'),
    ],
  };
  return fontFiles;
}

export function readArabicFontFiles(): FontFiles {
  arabicFontFiles ??= {
    regular: [
      readFont('@expo-google-fonts/ibm-plex-sans-arabic/400Regular/IBMPlexSansArabic_400Regular.ttf'),
    ],
    bold: [readFont('@expo-google-fonts/ibm-plex-sans-arabic/700Bold/IBMPlexSansArabic_700Bold.ttf')],
  };
  return arabicFontFiles;
}

type Fontkit = Parameters<PDFDocument['registerFontkit']>[0];
type FontkitFont = ReturnType<Fontkit['create']>;
type GlyphRun = ReturnType<FontkitFont['layout']>;

/** fontkit's layout with the script and direction given (pdf-lib's types name only the text and features). */
type DirectedLayout = (
  text: string,
  features: Parameters<FontkitFont['layout']>[1],
  script: string,
  language: string | undefined,
  direction: Direction,
) => GlyphRun;

type FontkitGlyph = GlyphRun['glyphs'][number];

/**
 * A glyph of right-to-left text that stands for several characters (the lam-alef ligature), with
 * them in visual order: text extraction (poppler, pdf.js) reads the glyphs' characters as drawn and
 * then reverses a right-to-left word, which gives back the logical order only so. Returns it.
 */
function visuallyMapped(glyph: FontkitGlyph): FontkitGlyph {
  if (glyph.codePoints.length < 2) return glyph;
  const mapped = Object.create(glyph) as FontkitGlyph;
  mapped.codePoints = [...glyph.codePoints].reverse();
  return mapped;
}

/**
 * fontkit whose fonts map text to glyphs through the character map alone, without OpenType
 * shaping: shaping every line cost about 20 ms per incident (most of a report's time), and the
 * scripts the Latin and Chinese fonts cover need none; only kerning is lost. The Arabic font is the
 * exception: its letters take their joining forms (initial, medial, final, the lam-alef ligature)
 * only through shaping. It is laid out as Arabic, right to left: fontkit hands the glyphs back in
 * visual order, and each keeps the characters it stands for (the PDF's ToUnicode map).
 */
export const reportFontkit: Fontkit = {
  create(buffer, postscriptName) {
    // This fontkit recognises a font by Buffer methods: hand it the bytes as a Buffer (no copy).
    const bytes = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    const font: FontkitFont = fontkit.create(bytes, postscriptName);
    const wrapped: FontkitFont = Object.create(font) as FontkitFont;
    if (font.hasGlyphForCodePoint(ARABIC_ALEF)) {
      const layout = font.layout.bind(font) as DirectedLayout;
      // pdf-lib lays a text out to measure it and again to draw it: each word is shaped once.
      const runs = new Map<string, GlyphRun>();
      wrapped.layout = (text, features) => {
        let run = runs.get(text);
        if (run === undefined) {
          run = layout(text, features, 'arab', undefined, 'rtl');
          run.glyphs = run.glyphs.map(visuallyMapped);
          runs.set(text, run);
        }
        return run;
      };
      return wrapped;
    }
    const glyphs = new Map<number, ReturnType<FontkitFont['glyphForCodePoint']>>();
    const glyphOf = (code: number) => {
      let glyph = glyphs.get(code);
      if (glyph === undefined) {
        glyph = font.glyphForCodePoint(code);
        glyphs.set(code, glyph);
      }
      return glyph;
    };
    wrapped.layout = (text) => {
      const run: ReturnType<FontkitFont['glyphForCodePoint']>[] = [];
      for (const character of text) run.push(glyphOf(character.codePointAt(0) ?? 0));
      return { glyphs: run } as GlyphRun;
    };
    return wrapped;
  },
};

/**
 * Embeds one weight, each font subset (only the glyphs drawn are written). What is measured is
 * what is drawn: character by character, Arabic word by word as shaped. Returns the face.
 */
export async function embedFace(doc: PDFDocument, files: readonly Uint8Array[]): Promise<Face> {
  const fonts = await Promise.all(files.map((bytes) => doc.embedFont(bytes, { subset: true })));
  return new Face(fonts);
}

/**
 * `t` for a report in `direction`: in a right-to-left report every text placed in a message (a name,
 * an exam's name, a time) is isolated (FSI … PDI), so it keeps its own order and the sentence
 * around it stays right to left, as HTML's `<bdi>` does. A bare number needs none. Returns it.
 */
export function isolatingTranslator(t: Translator, direction: Direction): Translator {
  if (direction === 'ltr') return t;
  const plain = t.t.bind(t);
  t.t = (key: string, values?: MessageValues) => {
    if (values === undefined) return plain(key);
    const isolated: Record<string, MessageValues[string]> = {};
    for (const [name, value] of Object.entries(values))
      isolated[name] = typeof value === 'string' && !/^\d+$/u.test(value) ? `${FSI}${value}${PDI}` : value;
    return plain(key, isolated);
  };
  return t;
}

// ---- Layout ----

export const PAGE_WIDTH = 595.28;
const PAGE_HEIGHT = 841.89;
export const MARGIN = 50;
const FOOTER_SPACE = 40;
const CONTENT_WIDTH = PAGE_WIDTH - 2 * MARGIN;
const BODY_SIZE = 10;
const LINE = 13;
const LABEL_WIDTH = 150;
const PHOTO_BOX = { width: 240, height: 180 };
export const GREY = rgb(0.4, 0.4, 0.4);
const BLACK = rgb(0, 0, 0);
const RULE = rgb(0.75, 0.75, 0.75);

/** A wrapped line and the direction of its paragraph. */
interface Line {
  readonly text: string;
  readonly direction: Direction;
}

/**
 * Writes pages top to bottom, starting a new page whenever the next block does not fit. Positions
 * are given from the page's start edge: the left in a left-to-right report, the right in a
 * right-to-left one, whose layout is the mirror image (labels on the right, text right-aligned).
 */
export class Writer {
  readonly #doc: PDFDocument;
  readonly regular: Face;
  readonly bold: Face;
  readonly direction: Direction;
  page!: PDFPage;
  y = 0;

  constructor(doc: PDFDocument, regular: Face, bold: Face, direction: Direction) {
    this.#doc = doc;
    this.regular = regular;
    this.bold = bold;
    this.direction = direction;
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
   * The base direction of a paragraph: left to right in a left-to-right report; in a right-to-left
   * one that of its first letter (a Latin name reads left to right), right to left without any.
   */
  directionOf(value: string): Direction {
    return this.direction === 'ltr' ? 'ltr' : paragraphDirection(value, 'rtl');
  }

  /** The x of something `width` wide placed `start` points from the page's start edge. */
  x(start: number, width: number): number {
    return this.direction === 'ltr' ? start : PAGE_WIDTH - start - width;
  }

  /** Draws one line `start` points from the page's start edge, its baseline at `y`. */
  say(
    page: PDFPage,
    line: string,
    start: number,
    y: number,
    options: { face: Face; size: number; color: RGB; direction: Direction },
  ): void {
    const { face, size, color, direction } = options;
    const width = this.direction === 'ltr' ? 0 : face.width(line, size);
    face.drawLine(page, line, this.x(start, width), y, size, color, direction);
  }

  /** Splits text into lines no wider than `width` (see wrapDirected). Returns the lines. */
  wrap(value: string, face: Face, size: number, width: number): string[] {
    return this.wrapDirected(value, face, size, width).map((line) => line.text);
  }

  /**
   * Splits text into lines no wider than `width` (a word wider than that is cut), each with the
   * direction of the paragraph it comes from. Each character is measured once, so the time is
   * linear in the text's length. Returns the lines.
   */
  wrapDirected(value: string, face: Face, size: number, width: number): Line[] {
    const lines: Line[] = [];
    const space = face.advance(' ', size);
    for (const paragraph of value.split(/\r\n|\r|\n/)) {
      const direction = this.directionOf(paragraph);
      const push = (text: string) => lines.push({ text, direction });
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
        if (line !== '') push(line);
        line = '';
        lineWidth = 0;
        // A word wider than the column is cut where it must (Chinese text, with no spaces, too).
        for (const character of word) {
          const advance = face.advance(character, size);
          if (line !== '' && lineWidth + advance > width) {
            push(line);
            line = '';
            lineWidth = 0;
          }
          line += character;
          lineWidth += advance;
        }
      }
      push(line);
    }
    return lines;
  }

  /** Draws wrapped lines `start` points from the start edge, moving down. */
  lines(lines: readonly Line[], start: number, face: Face, size = BODY_SIZE, color = BLACK): void {
    for (const { text, direction } of lines) {
      this.need(LINE);
      if (text !== '') this.say(this.page, text, start, this.y - size, { face, size, color, direction });
      this.y -= LINE;
    }
  }

  paragraph(value: string, options: { face?: Face; size?: number; color?: RGB } = {}): void {
    const face = options.face ?? this.regular;
    const size = options.size ?? BODY_SIZE;
    this.lines(
      this.wrapDirected(value, face, size, CONTENT_WIDTH),
      MARGIN,
      face,
      size,
      options.color ?? BLACK,
    );
  }

  heading(value: string): void {
    this.need(LINE * 3 + 10);
    this.y -= 10;
    const text = this.text(value);
    this.say(this.page, text, MARGIN, this.y - 13, {
      face: this.bold,
      size: 13,
      color: BLACK,
      direction: this.directionOf(text),
    });
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
    const labelLines = this.wrapDirected(label, this.bold, BODY_SIZE, LABEL_WIDTH - 8);
    const valueLines = this.wrapDirected(value, this.regular, BODY_SIZE, CONTENT_WIDTH - LABEL_WIDTH);
    const rows = Math.max(labelLines.length, valueLines.length);
    if (rows * LINE < PAGE_HEIGHT / 3) this.need(rows * LINE);
    for (let row = 0; row < rows; row += 1) {
      this.need(LINE);
      const y = this.y - BODY_SIZE;
      const labelLine = labelLines[row];
      const valueLine = valueLines[row];
      if (labelLine !== undefined && labelLine.text !== '') {
        const { text, direction } = labelLine;
        this.say(this.page, text, MARGIN, y, { face: this.bold, size: BODY_SIZE, color: BLACK, direction });
      }
      if (valueLine !== undefined && valueLine.text !== '') {
        const { text, direction } = valueLine;
        this.say(this.page, text, MARGIN + LABEL_WIDTH, y, {
          face: this.regular,
          size: BODY_SIZE,
          color: BLACK,
          direction,
        });
      }
      this.y -= LINE;
    }
  }

  space(points: number): void {
    this.y -= points;
  }

  /** Draws an image scaled into a box `start` points from the start edge, its top at `top`. */
  image(image: PDFImage, start: number, top: number): void {
    const scale = Math.min(PHOTO_BOX.width / image.width, PHOTO_BOX.height / image.height, 1);
    const width = image.width * scale;
    const height = image.height * scale;
    this.page.drawImage(image, { x: this.x(start, width), y: top - height, width, height });
  }
}

const PHOTO_TITLES: Readonly<Record<ReportPhoto['kind'], string>> = {
  id_card: 'pdf.photos.idCard',
  face_photo: 'pdf.photos.facePhoto',
};

/** The picture of a photo, or the reason it is not drawn. */
async function embedPhoto(doc: PDFDocument, photo: ReportPhoto, t: Translator): Promise<PDFImage | string> {
  if (photo.bytes === undefined) return photo.note ?? t.t('pdf.photos.none');
  // pdf-lib reads an image from the start of its ArrayBuffer, ignoring a view's offset: a Buffer
  // from Node's pool (Buffer.concat of a small file) would be read from someone else's bytes.
  const bytes = photo.bytes.byteOffset === 0 ? photo.bytes : new Uint8Array(photo.bytes);
  try {
    if (photo.contentType === 'image/jpeg') return await doc.embedJpg(bytes);
    if (photo.contentType === 'image/png') return await doc.embedPng(bytes);
  } catch {
    return t.t('pdf.photos.unreadable', { type: photo.contentType });
  }
  return photo.contentType === null
    ? t.t('pdf.photos.unknownType')
    : t.t('pdf.photos.unshowable', { type: photo.contentType });
}

function reviewerText(t: Translator, name: string | null, id: number | null, unknown: string): string {
  return name ?? (id === null ? unknown : t.t('pdf.verdict.user', { id: String(id) }));
}

function verdictLine(t: Translator, entry: ReportVerdict, zone: string): string {
  const values = {
    verdict: valueWords(t, entry.verdict),
    who: reviewerText(t, entry.reviewerName, entry.reviewerId, t.t('pdf.verdict.unknownReviewer')),
    time: reportInstant(entry.at, zone, t.locale),
  };
  if (entry.secondReview === 'not_required') return t.t('pdf.history.line', values);
  return t.t('pdf.history.lineSecondReview', {
    ...values,
    standing: midSentence(t, valueWords(t, entry.secondReview)),
  });
}

/** The label of each exempt check in the accommodations section. */
const EXEMPTION_NAMES: Readonly<Record<string, string>> = {
  webcam: 'pdf.exemption.webcam',
  microphone: 'pdf.exemption.microphone',
  screen_share: 'pdf.exemption.screenShare',
  mobile: 'pdf.exemption.mobile',
  id_photo: 'pdf.exemption.idPhoto',
  face_photo: 'pdf.exemption.facePhoto',
  fullscreen: 'pdf.exemption.fullscreen',
};

/** True when the section has anything to list: an accommodation, or a break taken. */
function listsAccommodations(
  accommodations: ReportAccommodations | undefined,
): accommodations is ReportAccommodations {
  if (accommodations === undefined) return false;
  return (
    accommodations.extraTimeMinutes > 0 ||
    accommodations.extraTimePercent > 0 ||
    accommodations.breaks !== null ||
    accommodations.breaksTaken > 0 ||
    accommodations.exemptions.length > 0 ||
    accommodations.assistiveTechnology ||
    accommodations.note !== null
  );
}

/** The extra time in words: `25% of the exam's duration, plus 10 minutes`; null for none. */
function extraTimeText(t: Translator, accommodations: ReportAccommodations): string | null {
  const { extraTimeMinutes: minutes, extraTimePercent: percent } = accommodations;
  const minutesText = t.t('pdf.accommodations.extraTimeMinutes', { minutes });
  const percentText = t.t('pdf.accommodations.extraTimePercent', { percent: String(percent) });
  if (minutes > 0 && percent > 0) {
    return t.t('pdf.accommodations.extraTimeBoth', { percent: percentText, minutes: minutesText });
  }
  if (percent > 0) return percentText;
  return minutes > 0 ? minutesText : null;
}

function durationText(seconds: number | null): string {
  return seconds === null ? '-' : formatOffset(seconds).slice(1);
}

/**
 * Renders the report of one session: its facts, photos, recordings, incidents (ordered by time,
 * each with its time since the session's start and its time in the exam's zone), the verdict and
 * its history, and on every page a footer with the moment of generation and `Page i of n`. Text is
 * drawn in embedded, subset Unicode fonts (Latin, Greek, Cyrillic, Chinese, and Arabic in an
 * Arabic report); a character none has is written as its code point (showableText), and a photo
 * that cannot be drawn is named instead, so any session renders. A report in a right-to-left
 * language (Arabic) is laid out as the mirror image, each line in its bidi order (Face.drawLine). The time is linear in the size of the data, but it is CPU work:
 * the service runs it in a worker thread (report-renderer.ts). Returns the PDF's bytes; throws only
 * what the PDF library throws for reasons unrelated to the data.
 */
export async function renderSessionReport(data: SessionReportData): Promise<Uint8Array> {
  const zone = usableZone(data.timeZone);
  const locale = data.locale ?? 'en';
  const direction = textDirection(locale);
  const t = isolatingTranslator(translator(locale), direction);
  /** Text set inside a right-to-left line that keeps its own order: a name, an address. */
  const isolate = (value: string) => (direction === 'rtl' ? `${FSI}${value}${PDI}` : value);
  /** A signed duration inside a right-to-left line, kept left to right. */
  const leftToRight = (value: string) => (direction === 'rtl' ? `${LRI}${value}${PDI}` : value);
  const words = (value: string) => valueWords(t, value);
  const doc = await PDFDocument.create();
  const generated = new Date(data.generatedAt);
  const { session } = data;
  doc.setTitle(t.t('pdf.meta.title', { session: String(session.id) }));
  doc.setSubject(t.t('pdf.meta.subject', { exam: String(data.exam.id), session: String(session.id) }));
  doc.setAuthor(data.institute.name);
  doc.setCreator('Invigil');
  doc.setProducer('Invigil (pdf-lib)');
  doc.setCreationDate(generated);
  doc.setModificationDate(generated);
  doc.setLanguage(t.locale);
  doc.registerFontkit(reportFontkit);
  const files = readFontFiles();
  // The Arabic font is embedded for a report in Arabic, or one whose data holds Arabic (a name, a
  // comment): other reports stay without its weight.
  const arabic = locale === 'ar' || holdsArabic(data) ? readArabicFontFiles() : { regular: [], bold: [] };
  const [regular, bold] = await Promise.all([
    embedFace(doc, [...files.regular, ...arabic.regular]),
    embedFace(doc, [...files.bold, ...arabic.bold]),
  ]);
  const out = new Writer(doc, regular, bold, direction);
  const when = (millis: number | null) => reportInstant(millis, zone, t.locale);

  out.paragraph(t.t('pdf.title'), { face: bold, size: 18 });
  out.space(8);
  out.paragraph(`${isolate(session.name)} <${isolate(session.email)}>`, { face: bold, size: 12 });
  out.paragraph(`${isolate(data.exam.name)} – ${isolate(data.institute.name)}`, { color: GREY });
  out.paragraph(t.t('pdf.timesIn', { zone }), { color: GREY });

  out.heading(t.t('pdf.session.heading'));
  out.field(t.t('pdf.session.student'), session.name);
  out.field(t.t('pdf.session.email'), session.email);
  out.field(
    t.t('pdf.session.institute'),
    t.t('pdf.session.instituteValue', { name: data.institute.name, id: String(data.institute.id) }),
  );
  out.field(
    t.t('pdf.session.exam'),
    t.t('pdf.session.examValue', {
      name: data.exam.name,
      id: String(data.exam.id),
      type: midSentence(t, words(data.exam.type)),
    }),
  );
  out.field(t.t('pdf.session.sessionId'), String(session.id));
  out.field(t.t('pdf.session.attempt'), String(session.attempt));
  if (session.externalId !== null) out.field(t.t('pdf.session.externalId'), session.externalId);
  if (session.studentId !== null) out.field(t.t('pdf.session.studentId'), session.studentId);
  if (session.lmsUserId !== null) out.field(t.t('pdf.session.lmsUserId'), session.lmsUserId);
  out.field(
    t.t('pdf.session.status'),
    session.archived ? t.t('pdf.session.archived', { status: words(session.status) }) : words(session.status),
  );
  out.field(t.t('pdf.session.started'), when(session.startTime));
  if (session.termsAcceptedAt != null)
    out.field(t.t('pdf.session.termsAccepted'), when(session.termsAcceptedAt));
  out.field(t.t('pdf.session.finished'), when(session.endTime));
  if (session.endReason !== null) out.field(t.t('pdf.session.endReason'), words(session.endReason));
  out.field(
    t.t('pdf.session.recording'),
    t.t('pdf.session.recordingValue', {
      from: when(session.recordingStartedAt),
      until: when(session.recordingEndedAt),
    }),
  );
  const browser = [session.browser, session.browserVersion].filter((part) => part !== null).join(' ');
  out.field(t.t('pdf.session.browser'), browser === '' ? '-' : browser);
  out.field(t.t('pdf.session.operatingSystem'), session.operatingSystem ?? '-');
  if (session.bandwidthSpeed !== null)
    out.field(t.t('pdf.session.bandwidth'), bandwidthText(session.bandwidthSpeed, t.locale));
  for (const check of session.checks) out.field(check.name, words(check.value));

  const { accommodations } = session;
  if (listsAccommodations(accommodations)) {
    out.heading(t.t('pdf.accommodations.heading'));
    const extra = extraTimeText(t, accommodations);
    if (extra !== null) out.field(t.t('pdf.accommodations.extraTime'), extra);
    if (accommodations.breaks !== null) {
      out.field(
        t.t('pdf.accommodations.breaks'),
        t.t('pdf.accommodations.breaksValue', {
          count: accommodations.breaks.count,
          minutes: accommodations.breaks.minutes,
        }),
      );
    }
    if (accommodations.breaks !== null || accommodations.breaksTaken > 0) {
      out.field(t.t('pdf.accommodations.breaksTaken'), String(accommodations.breaksTaken));
    }
    if (accommodations.exemptions.length > 0) {
      const lines = accommodations.exemptions.map((exemption) => {
        const name = EXEMPTION_NAMES[exemption.check];
        return t.t('pdf.accommodations.exemptionValue', {
          check: name === undefined ? exemption.check : t.t(name),
          reason: exemption.reason,
        });
      });
      out.field(t.t('pdf.accommodations.exemptions'), lines.join('\n'));
    }
    if (accommodations.assistiveTechnology) {
      out.field(
        t.t('pdf.accommodations.assistiveTechnology'),
        t.t('pdf.accommodations.assistiveTechnologyValue'),
      );
    }
    if (accommodations.note !== null) out.field(t.t('pdf.accommodations.note'), accommodations.note);
  }

  if (data.photos.length > 0) {
    out.heading(t.t('pdf.photos.heading'));
    const pictures = await Promise.all(data.photos.map((photo) => embedPhoto(doc, photo, t)));
    out.need(PHOTO_BOX.height + 2 * LINE);
    const top = out.y;
    pictures.forEach((picture, index) => {
      const photo = data.photos[index];
      if (photo === undefined) return;
      const start = MARGIN + index * (PHOTO_BOX.width + 15);
      const title = out.text(t.t(PHOTO_TITLES[photo.kind]));
      out.say(out.page, title, start, top - BODY_SIZE, {
        face: bold,
        size: BODY_SIZE,
        color: BLACK,
        direction: out.directionOf(title),
      });
      if (typeof picture === 'string') {
        const lines = out.wrapDirected(picture, regular, BODY_SIZE, PHOTO_BOX.width);
        lines.forEach((line, row) => {
          const y = top - BODY_SIZE - LINE * (row + 1) - 4;
          out.say(out.page, line.text, start, y, {
            face: regular,
            size: BODY_SIZE,
            color: GREY,
            direction: line.direction,
          });
        });
        return;
      }
      out.image(picture, start, top - LINE - 2);
    });
    out.y = top - PHOTO_BOX.height - 2 * LINE;
  }

  if (data.recordings.length > 0) {
    out.heading(t.t('pdf.recordings.heading'));
    for (const recording of data.recordings) {
      out.field(
        words(recording.source),
        t.t('pdf.recordings.value', {
          status: words(recording.status),
          duration: durationText(recording.durationSeconds),
          gaps: recording.gaps,
        }),
      );
    }
  }

  const placed = placeIncidents(data.incidents, session);
  out.heading(t.t('pdf.incidents.heading', { count: String(placed.length) }));
  if (placed.length === 0) out.paragraph(t.t('pdf.incidents.none'), { color: GREY });
  for (const [index, incident] of placed.entries()) {
    const label = `${index + 1}. ${leftToRight(formatOffset(incident.sinceStart))}`;
    const kind = incident.kind === null ? '' : ` [${words(incident.kind)}]`;
    out.field(label, `${when(incident.at)}${kind}\n${incident.comment}`);
    out.space(3);
  }

  out.heading(t.t('pdf.verdict.heading'));
  if (data.verdict === undefined) {
    out.paragraph(t.t('pdf.verdict.noneReviewed', { reviewed: midSentence(t, words(session.reviewed)) }), {
      color: GREY,
    });
  } else {
    out.field(t.t('pdf.verdict.verdict'), words(data.verdict.verdict));
    out.field(t.t('pdf.verdict.secondReview'), words(data.verdict.secondReview));
    out.field(
      t.t('pdf.verdict.reviewer'),
      reviewerText(t, data.verdict.reviewerName, data.verdict.reviewerId, '-'),
    );
    out.field(t.t('pdf.verdict.recorded'), when(data.verdict.at));
    out.field(t.t('pdf.verdict.comment'), data.verdict.comment ?? '-');
  }

  out.heading(t.t('pdf.history.heading', { count: String(data.history.length) }));
  if (data.history.length === 0) out.paragraph(t.t('pdf.history.none'), { color: GREY });
  for (const [index, entry] of data.history.entries()) {
    const line = verdictLine(t, entry, zone);
    out.field(`${index + 1}.`, entry.comment === null ? line : `${line}\n${entry.comment}`);
    out.space(3);
  }

  const { appeal } = data;
  if (appeal !== undefined) {
    out.heading(t.t('pdf.appeal.heading'));
    const status =
      appeal.status === 'upheld'
        ? t.t('pdf.appeal.upheld')
        : appeal.status === 'overturned'
          ? t.t('pdf.appeal.overturned')
          : t.t('pdf.appeal.open');
    out.field(t.t('pdf.appeal.status'), status);
    out.field(t.t('pdf.appeal.appealed'), words(appeal.appealedVerdict));
    out.field(t.t('pdf.appeal.submitted'), when(appeal.submittedAt));
    out.field(t.t('pdf.appeal.statement'), appeal.statement);
    out.field(t.t('pdf.appeal.files'), appeal.fileNames.length === 0 ? '-' : appeal.fileNames.join('\n'));
    if (appeal.decidedAt !== null) {
      out.field(t.t('pdf.appeal.decidedBy'), reviewerText(t, appeal.decidedByName, appeal.decidedById, '-'));
      out.field(t.t('pdf.appeal.decidedAt'), when(appeal.decidedAt));
      out.field(t.t('pdf.verdict.comment'), appeal.comment ?? '-');
    }
  }

  const pages = doc.getPages();
  const footerStart = out.text(
    t.t('pdf.footer.generated', { time: when(data.generatedAt), session: String(session.id) }),
  );
  const footer = { face: regular, size: 8, color: GREY, direction };
  pages.forEach((page, index) => {
    const number = out.text(t.t('pdf.footer.page', { page: String(index + 1), pages: String(pages.length) }));
    out.say(page, footerStart, MARGIN, MARGIN - 20, footer);
    out.say(page, number, PAGE_WIDTH - MARGIN - regular.width(number, 8), MARGIN - 20, footer);
  });

  return doc.save({ objectsPerTick: Infinity });
}
