import { createHash } from 'node:crypto';
import { looksLikeHtml } from '../../security/html-rules.ts';
import { escapeHtml, sanitizeInstructionsHtml, textToHtml } from '../../security/html.ts';
import type { ExamDocument } from '../documents/document.ts';
import { Invalid, ParamMissing } from '../errors.ts';
import type { Exam } from '../exams/exam.ts';
import type { RoomMobile } from '../mobile/mobile.ts';
import type { LanguageFacts, PageOverrides } from './language.ts';
import type { PrivacyNotice } from './privacy.ts';
import {
  has,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalString,
  type Params,
} from '../input.ts';
import {
  type Accommodations,
  exemptCheckFields,
  isExempt,
  NO_ACCOMMODATIONS,
} from '../student-sessions/accommodations.ts';
import { CHECK_VALUES, type CheckValue } from '../student-sessions/status.ts';
import { CHECK_FIELDS, type CheckField, type StudentSession } from '../student-sessions/student-session.ts';

import {
  MOBILE_RECORDING_KIND,
  RECORDING_KIND,
  SCREEN_RECORDING_KIND,
  type SessionFileKind,
} from '../student-sessions/session-file.ts';

export {
  MOBILE_RECORDING_KIND,
  RECORDING_KIND,
  SCREEN_RECORDING_KIND,
  SESSION_FILE_KINDS,
  type SessionFileKind,
  UPLOAD_KIND,
} from '../student-sessions/session-file.ts';

/** The `end_reason` of a session the student finished in the room. */
export const END_REASON_FINISHED = 'finished';
/** The `end_reason` of a session the room finished because its time ran out. */
export const END_REASON_TIME_UP = 'time_up';

/** What the first chunk of a recording may be; later chunks continue its stream and are not sniffed. */
export const RECORDING_TYPES: readonly string[] = ['video/webm', 'video/mp4'];

/** The largest recording chunk accepted (a MediaRecorder slice of a few seconds is far smaller). */
export const RECORDING_CHUNK_MAX_BYTES = 16 * 1024 * 1024;

/** The 404 message of a token that names no session (the token is the room's only credential). */
export const NO_ROOM = "Couldn't find the exam room";

/** The 409 message of any write to a finished session. */
export const SESSION_FINISHED = 'The exam is finished: this student session accepts no more changes';

/** The largest value an integer column holds on PostgreSQL (offsets, sequences). */
const MAX_INT = 2_147_483_647;

/** The longest browser or operating-system text kept. */
const MAX_CLIENT_TEXT = 255;

/**
 * What the room reports as incidents, each with the sentence the V3 student record shows as its
 * `comment`. The list is closed so a page cannot fill the record with arbitrary text.
 */
export const ROOM_EVENTS = {
  focus_lost: 'The exam window lost focus',
  focus_regained: 'The exam window regained focus',
  fullscreen_left: 'The student left full-screen mode',
  fullscreen_entered: 'The student returned to full-screen mode',
  connection_lost: 'The exam room lost its connection to the server',
  connection_restored: 'The exam room reconnected to the server',
  webcam_lost: 'The webcam stopped sending video',
  microphone_lost: 'The microphone stopped sending sound',
  screen_share_stopped: 'The screen share was stopped',
  multiple_screens: 'More than one screen was detected',
  page_reloaded: 'The exam room page was reloaded',
  copy_paste: 'The student copied or pasted text',
} as const;
export type RoomEventType = keyof typeof ROOM_EVENTS;
const ROOM_EVENT_TYPES = Object.keys(ROOM_EVENTS) as RoomEventType[];

/** A file a student handed in, as the room answers it. */
export interface SessionUpload {
  readonly fileName: string;
  readonly size: number;
  readonly contentType: string;
  readonly sequence: number;
  readonly createdAt: number;
}

/** An attachment of the exam's document with its expiring download address. */
export interface RoomAttachment {
  readonly placeholder: string;
  readonly fileName: string;
  readonly contentType: string;
  readonly fileSize: number;
  readonly url: string;
  readonly urlExpiresAt: number;
}

/** The exam's document as a candidate sees it, its placeholders resolved. */
export interface RoomDocument {
  readonly document: ExamDocument;
  readonly attachments: readonly RoomAttachment[];
  /** `exam_content` with each placeholder replaced by its attachment's address. */
  readonly contentWithLinks: string;
  /** The same as safe markup (instructionsHtml). */
  readonly contentHtml: string;
}

/**
 * A session as the room reads it: everything but its incidents, which the room never shows (and
 * which would cost a query on every poll, event and chunk).
 */
export type RoomSession = Omit<StudentSession, 'incidents'>;

/** Everything the room shows: the session, its exam, the document (while the exam runs), counts and time. */
export interface RoomView {
  readonly session: RoomSession;
  readonly exam: Exam;
  /** Null until the exam has started, and after it finished: the document may hold the questions. */
  readonly document: RoomDocument | null;
  readonly uploadsCount: number;
  /** Chunks stored of each recording source. */
  readonly recordingChunks: Readonly<Record<RecordingSource, number>>;
  readonly requiredChecks: readonly CheckField[];
  /** When the exam ends for this student (epoch ms), or null when it has no end yet or none at all. */
  readonly deadline: number | null;
  readonly now: number;
  /** The live proctoring of the session (docs/api-live.md). */
  readonly live: {
    /** The exam is `live_proctoring`: the room publishes its media and chats with the proctor. */
    readonly enabled: boolean;
    /** The candidate waits in the setup for a proctor's admission (awaitingAdmission). */
    readonly awaitingAdmission: boolean;
    /** The proctor holds the candidate's clock still. */
    readonly clockPaused: boolean;
  };
  /**
   * Launched with LTI Proctoring Services: once started, the candidate continues to the platform's
   * assessment (LtiStartAssessment, docs/lti.md) while the room keeps recording.
   */
  readonly ltiStartAssessment: boolean;
  /** The phone of a `mobile_cam` exam (docs/room.md "The phone"); null when the exam uses none. */
  readonly mobile: RoomMobile | null;
  /** What is stored that names the candidate's language (resolved with the request's by language.ts). */
  readonly languageFacts: LanguageFacts;
  /** The institute's own wording of the page messages, by locale (docs/languages.md). */
  readonly messageOverrides: PageOverrides;
  /** The privacy panel shown before the first check (privacy.ts, docs/room.md "Privacy panel"). */
  readonly privacy: PrivacyNotice;
}

/** What `PUT checks` changes. */
export interface CheckChanges {
  checks: Partial<Record<CheckField, CheckValue>>;
  bandwidthSpeed?: number | null;
  operatingSystem?: string | null;
  browser?: string | null;
  browserVersion?: string | null;
}

/**
 * The streams the room records for this student: the webcam stream (camera and microphone) when
 * the exam records the webcam and the student is not exempt from both, the screen when it records
 * the screen and the student is not exempt from sharing it, the phone's camera when it uses one and
 * the student is not exempt from the phone (docs/accommodations.md: an exempt stream is not
 * recorded). Returns them.
 */
export function recordedStreams(
  exam: Pick<Exam, 'webCam' | 'screenShare' | 'mobileCam'>,
  accommodations: Pick<Accommodations, 'exemptions'> = NO_ACCOMMODATIONS,
): RecordingSource[] {
  const streams: RecordingSource[] = [];
  if (exam.webCam && !(isExempt(accommodations, 'webcam') && isExempt(accommodations, 'microphone'))) {
    streams.push('webcam');
  }
  if (exam.screenShare && !isExempt(accommodations, 'screen_share')) streams.push('screen');
  if (exam.mobileCam && !isExempt(accommodations, 'mobile')) streams.push('mobile');
  return streams;
}

/**
 * The checks a student must pass before starting: webcam and microphone when the exam records the
 * webcam, screen share when it records the screen, the mobile camera when it uses one, and bandwidth
 * whenever something is recorded; minus the checks the student's accommodations exempt them from
 * (student-sessions/accommodations.ts). The connection is no longer required when every stream the
 * exam records is exempt (recordedStreams: nothing is sent). Speakers are checked for the student's
 * benefit and never required. Returns them in CHECK_FIELDS order.
 */
export function requiredChecks(
  exam: Exam,
  accommodations: Pick<Accommodations, 'exemptions'> = NO_ACCOMMODATIONS,
): CheckField[] {
  const required: CheckField[] = [];
  if (exam.screenShare) required.push('screenshareCheck');
  if (exam.webCam) required.push('microphoneCheck', 'webcamCheck');
  if (exam.mobileCam) required.push('mobileCheck');
  if (recordedStreams(exam, accommodations).length > 0) required.push('bandwidthCheck');
  const exempt: readonly CheckField[] = exemptCheckFields(accommodations);
  return required.filter((field) => !exempt.includes(field));
}

/**
 * The exempt requirement checks the session has not marked `skipped` yet, among those the exam
 * asks for: what the room sets to `skipped` so that staff read `skipped` in the record. Returns
 * the check changes (empty `checks` when there is nothing to set).
 */
export function exemptChecksToSkip(session: RoomSession, exam: Exam): CheckChanges {
  const asked = requiredChecks(exam);
  const checks: Partial<Record<CheckField, CheckValue>> = {};
  for (const field of exemptCheckFields(session.accommodations)) {
    if (asked.includes(field) && session[field] !== 'skipped') checks[field] = 'skipped';
  }
  return { checks };
}

/**
 * The room events an exemption makes informational (recorded for the record, never an alert): a
 * student exempt from full screen leaves and enters it freely, one exempt from the webcam,
 * microphone or screen share loses nothing by losing them. Returns true for such an event.
 */
export function isInformationalRoomEvent(
  type: RoomEventType,
  accommodations: Pick<Accommodations, 'exemptions'>,
): boolean {
  switch (type) {
    case 'fullscreen_left':
    case 'fullscreen_entered':
      return isExempt(accommodations, 'fullscreen');
    case 'webcam_lost':
      return isExempt(accommodations, 'webcam');
    case 'microphone_lost':
      return isExempt(accommodations, 'microphone');
    case 'screen_share_stopped':
      return isExempt(accommodations, 'screen_share');
    default:
      return false;
  }
}

/**
 * Whether a connection measured below the pass mark still lets the student start: recording chunks
 * wait on the student's computer and are sent as the line allows, so only a live-proctored exam
 * (type `live_proctoring`, whose proctor watches as it happens) insists on the speed. The connection
 * must have been measured (`failed` with a `bandwidth_speed`). Returns true when the slow line is
 * accepted.
 */
export function slowConnectionAccepted(session: RoomSession, exam: Exam): boolean {
  return (
    exam.type !== 'live_proctoring' && session.bandwidthCheck === 'failed' && session.bandwidthSpeed !== null
  );
}

/**
 * The required checks that have not succeeded (`skipped` does not count as passed), leaving out a
 * measured slow connection where slowConnectionAccepted allows it. Returns them.
 */
export function missingChecks(session: RoomSession, exam: Exam): CheckField[] {
  return requiredChecks(exam, session.accommodations).filter(
    (field) =>
      session[field] !== 'succeeded' &&
      !(field === 'bandwidthCheck' && slowConnectionAccepted(session, exam)),
  );
}

/** The one clock of a session (student-sessions/deadline.ts), which the room's callers import from here too. */
export { deadlineOf } from '../student-sessions/deadline.ts';

/** The 409 message of leaving the setup (or starting) before a proctor admitted the candidate. */
export const AWAITING_ADMISSION = 'Your proctor has to check your ID before you can continue';

/**
 * True when a proctor must admit each candidate of the exam after a live ID check: a
 * `live_proctoring` exam with `live_id_check`. Its candidates then reach `exam_not_started` only
 * through a proctor's admission (docs/api-live.md), never by leaving the setup themselves.
 */
export function admissionRequired(exam: Pick<Exam, 'type' | 'liveIdCheck'>): boolean {
  return exam.type === 'live_proctoring' && exam.liveIdCheck;
}

/** True while the candidate waits in the setup for a proctor to admit it (admissionRequired). */
export function awaitingAdmission(
  session: Pick<RoomSession, 'status'>,
  exam: Pick<Exam, 'type' | 'liveIdCheck'>,
): boolean {
  return admissionRequired(exam) && session.status === 'in_setup';
}

function clientText(params: Params, name: string): string | null | undefined {
  const value = optionalString(params, name);
  if (typeof value === 'string' && value.length > MAX_CLIENT_TEXT) {
    throw new Invalid(name, `is too long (maximum is ${MAX_CLIENT_TEXT} characters)`);
  }
  return value;
}

/**
 * Reads a `PUT checks` request: any of the six checks (each one of CHECK_VALUES), `bandwidth_speed`
 * (a number from 0; empty reads as null), `operating_system`, `browser`, `browser_version`. Returns
 * only what was sent; throws Invalid naming the first bad field.
 */
export function readCheckChanges(params: Params): CheckChanges {
  const changes: CheckChanges = { checks: {} };
  for (const [field, name] of Object.entries(CHECK_FIELDS) as [CheckField, string][]) {
    const value = optionalEnum(params, name, CHECK_VALUES);
    if (value !== undefined) changes.checks[field] = value;
  }
  if (has(params, 'bandwidth_speed')) {
    const raw = params.bandwidth_speed;
    const speed = raw === null || raw === '' ? null : Number(raw);
    if (speed !== null && (typeof raw === 'boolean' || !Number.isFinite(speed) || speed < 0)) {
      throw new Invalid('bandwidth_speed', 'must be a number from 0');
    }
    changes.bandwidthSpeed = speed;
  }
  const operatingSystem = clientText(params, 'operating_system');
  if (operatingSystem !== undefined) changes.operatingSystem = operatingSystem;
  const browser = clientText(params, 'browser');
  if (browser !== undefined) changes.browser = browser;
  const browserVersion = clientText(params, 'browser_version');
  if (browserVersion !== undefined) changes.browserVersion = browserVersion;
  return changes;
}

/**
 * Reads a `POST events` request: `type` (required, one of ROOM_EVENTS) and `offset_time` (seconds
 * since the start, a whole number from 0; absent: null, and the service fills it in from the
 * clock). Throws ParamMissing or Invalid naming the field.
 */
export function readRoomEvent(params: Params): { type: RoomEventType; offsetTime: number | null } {
  const raw = params.type;
  if (raw === undefined || raw === null || raw === '') throw new ParamMissing('type');
  const type = optionalEnum(params, 'type', ROOM_EVENT_TYPES);
  if (type === undefined) throw new ParamMissing('type');
  return { type, offsetTime: optionalInteger(params, 'offset_time', 0, MAX_INT) ?? null };
}

/**
 * What a recording chunk may record: the webcam (camera and microphone), the shared screen, or the
 * phone's camera (the second camera of a `mobile_cam` exam, sent by the phone page).
 */
export const RECORDING_SOURCES = ['webcam', 'screen', 'mobile'] as const;
export type RecordingSource = (typeof RECORDING_SOURCES)[number];

/** The `session_files.kind` each recording source is stored under, each numbered on its own. */
export const RECORDING_KINDS: Readonly<Record<RecordingSource, SessionFileKind>> = {
  webcam: RECORDING_KIND,
  screen: SCREEN_RECORDING_KIND,
  mobile: MOBILE_RECORDING_KIND,
};

/** The sources the room (the computer) records; the phone's `mobile` comes only from the phone's own path. */
export const ROOM_RECORDING_SOURCES: readonly RecordingSource[] = ['webcam', 'screen'];

/** The oldest a chunk's reported age is taken to be (a day): older ones are placed a day back. */
export const MAX_CHUNK_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * Reads a recording chunk's `sequence` (a whole number from 0, required), `source` (one of
 * `sources`, by default the room's; absent or empty: the first of them) and `age_ms` (optional: how
 * many milliseconds ago the page made the chunk, a whole number from 0, at most MAX_CHUNK_AGE_MS
 * counted; absent: 0, made as it arrives). Throws ParamMissing or Invalid naming the field.
 */
export function readRecordingChunk(
  params: Params,
  sources: readonly RecordingSource[] = ROOM_RECORDING_SOURCES,
): { sequence: number; source: RecordingSource; ageMs: number } {
  const sequence = optionalInteger(params, 'sequence', 0, MAX_INT);
  if (sequence === undefined || sequence === null) throw new ParamMissing('sequence');
  const source = params.source === '' ? undefined : optionalEnum(params, 'source', sources);
  const fallback = sources[0];
  if (fallback === undefined) throw new Error('a recording chunk needs at least one source');
  const age = params.age_ms === '' ? undefined : optionalInteger(params, 'age_ms', 0, MAX_INT);
  return { sequence, source: source ?? fallback, ageMs: Math.min(age ?? 0, MAX_CHUNK_AGE_MS) };
}

/**
 * The instruction document as markup the page can insert: HTML content sanitised
 * (sanitizeInstructionsHtml), plain text escaped with its line breaks kept, and each placeholder
 * turned into a download link named after its file. The links are put in before sanitising, so a
 * placeholder written inside an attribute cannot break out of it. Returns the HTML.
 */
export function instructionsHtml(content: string, attachments: readonly RoomAttachment[]): string {
  const markup = looksLikeHtml(content) ? content : textToHtml(content);
  const linked = attachments.reduce(
    (html, attachment) =>
      html
        .split(attachment.placeholder)
        .join(`<a href="${escapeHtml(attachment.url)}">${escapeHtml(attachment.fileName)}</a>`),
    markup,
  );
  return sanitizeInstructionsHtml(linked);
}

/** Replaces every placeholder in `content` by its attachment's address. Returns the new text. */
export function contentWithLinks(content: string, attachments: readonly RoomAttachment[]): string {
  return attachments.reduce(
    (text, attachment) => text.split(attachment.placeholder).join(attachment.url),
    content,
  );
}

/** The parameter of `POST start` that accepts the exam's terms. */
export const TERMS_ACCEPTED = 'terms_accepted';

/**
 * The exam's terms as the candidate reads and accepts them: plain text, as staff typed it (the room
 * shows it as text, never as markup). Returns null when the exam has none (null or blank).
 */
export function examTerms(exam: Pick<Exam, 'terms'>): string | null {
  return exam.terms === null || exam.terms.trim() === '' ? null : exam.terms;
}

/** Returns the SHA-256 of the terms' text (UTF-8), in lowercase hex: what an acceptance keeps. */
export function termsDigest(terms: string): string {
  return createHash('sha256').update(terms, 'utf8').digest('hex');
}

/**
 * Judges the candidate's acceptance of the terms sent with `POST start`: only `true` (JSON, or
 * `true`/`1` as text) accepts. Returns nothing. Throws ParamMissing (`terms_accepted`) when it is
 * absent, empty or false, Invalid when it is no boolean.
 */
export function assertTermsAccepted(params: Params): void {
  if (optionalBoolean(params, TERMS_ACCEPTED) !== true) throw new ParamMissing(TERMS_ACCEPTED);
}
