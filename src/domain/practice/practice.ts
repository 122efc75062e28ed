import { Invalid, ParamMissing } from '../errors.ts';
import type { Exam } from '../exams/exam.ts';
import { optionalEnum, optionalInteger, type Params } from '../input.ts';
import { requiredChecks } from '../room/room.ts';
import { type Accommodations, isExempt } from '../student-sessions/accommodations.ts';
import type { CheckField } from '../student-sessions/student-session.ts';

/**
 * The practice run (docs/practice.md): a candidate runs the exam's whole technical setup days
 * before the exam, without starting it. The checks, photos and a short recording of each stream are
 * tried; nothing of them is kept, only the outcome (`passed`, or `failed` naming the check).
 */

/**
 * What a practice run can try, in the order the page runs them: the device checks of the room
 * (named as accommodations' exemptions name them), the two photos (taken and discarded), and a
 * recording of each stream (uploaded, finalised, discarded).
 */
export const PRACTICE_CHECKS = [
  'webcam',
  'microphone',
  'screen_share',
  'mobile',
  'bandwidth',
  'id_photo',
  'face_photo',
  'webcam_recording',
  'screen_recording',
] as const;
export type PracticeCheck = (typeof PRACTICE_CHECKS)[number];

/** What the page reports of one check. */
export const PRACTICE_OUTCOMES = ['succeeded', 'failed', 'skipped'] as const;
export type PracticeOutcome = (typeof PRACTICE_OUTCOMES)[number];

/** The streams a practice run records, and the check each recording stands for. */
export const PRACTICE_SOURCES = ['webcam', 'screen'] as const;
export type PracticeSource = (typeof PRACTICE_SOURCES)[number];
export const RECORDING_CHECK: Readonly<Record<PracticeSource, PracticeCheck>> = {
  webcam: 'webcam_recording',
  screen: 'screen_recording',
};

/** How long the page records each stream. */
export const PRACTICE_RECORDING_SECONDS = 30;
/**
 * The least playable media a stream's practice recording must finalise to: a slow line may cut the
 * last chunk of the page's 30 seconds, and any playable stream proves the path.
 */
export const PRACTICE_MIN_SECONDS = 5;
/** The most chunks one stream of a run may send (30 s in slices of one second, with room to spare). */
export const PRACTICE_MAX_CHUNKS = 60;
/** The most bytes one run may store in all (both streams), well above 30 s of webcam and screen. */
export const PRACTICE_MAX_BYTES = 96 * 1024 * 1024;
/**
 * A run still `running` this long after it began was abandoned (the tab closed, the process died):
 * the sweep deletes its chunks and records it as failed (`unfinished`).
 */
export const PRACTICE_STALE_MS = 2 * 60 * 60 * 1000;
/** The failed check of a run that was abandoned before its end. */
export const UNFINISHED = 'unfinished';

/** The 409 message of a practice run the session may no longer start (the exam began or ended). */
export const PRACTICE_CLOSED = 'The exam has started or ended: a practice run is no longer possible';
/** The 404 message of a run id that names no run of the session. */
export const NO_RUN = "Couldn't find the practice run";
/** The 409 message of a write to a run that has ended. */
export const RUN_ENDED = 'This practice run has ended: begin a new one';

/** The API name of each room check field a practice run covers. */
const CHECK_OF_FIELD: Readonly<Partial<Record<CheckField, PracticeCheck>>> = {
  webcamCheck: 'webcam',
  microphoneCheck: 'microphone',
  screenshareCheck: 'screen_share',
  bandwidthCheck: 'bandwidth',
};

/** The streams an exam records for this student: the webcam's and the screen's, minus exemptions. */
export function practiceSources(
  exam: Pick<Exam, 'webCam' | 'screenShare'>,
  accommodations: Pick<Accommodations, 'exemptions'>,
): PracticeSource[] {
  const sources: PracticeSource[] = [];
  if (exam.webCam && !isExempt(accommodations, 'webcam')) sources.push('webcam');
  if (exam.screenShare && !isExempt(accommodations, 'screen_share')) sources.push('screen');
  return sources;
}

/**
 * The checks a practice run must pass for this student: every check the exam requires before its
 * start (room.ts requiredChecks, exemptions applied) but the phone's (paired on exam day, from the
 * room: a practice may report `mobile` and it is kept, never required), the ID and face photos when the exam records
 * the webcam (unless exempt), and a recording of each stream it records. Returns them in
 * PRACTICE_CHECKS order.
 */
export function practiceChecksOf(exam: Exam, accommodations: Accommodations): PracticeCheck[] {
  const wanted = new Set<PracticeCheck>();
  for (const field of requiredChecks(exam, accommodations)) {
    const check = CHECK_OF_FIELD[field];
    if (check !== undefined) wanted.add(check);
  }
  if (exam.webCam && !isExempt(accommodations, 'id_photo')) wanted.add('id_photo');
  if (exam.webCam && !isExempt(accommodations, 'face_photo')) wanted.add('face_photo');
  for (const source of practiceSources(exam, accommodations)) wanted.add(RECORDING_CHECK[source]);
  return PRACTICE_CHECKS.filter((check) => wanted.has(check));
}

/**
 * Reads a `PUT checks` request of a run: any of the page's checks (PRACTICE_CHECKS without the two
 * recordings, which only the server judges), each one of PRACTICE_OUTCOMES. Returns what was sent;
 * throws Invalid naming the first bad field.
 */
export function readPracticeOutcomes(params: Params): Partial<Record<PracticeCheck, PracticeOutcome>> {
  const outcomes: Partial<Record<PracticeCheck, PracticeOutcome>> = {};
  for (const check of PRACTICE_CHECKS) {
    if (check === 'webcam_recording' || check === 'screen_recording') continue;
    const value = optionalEnum(params, check, PRACTICE_OUTCOMES);
    if (value !== undefined) outcomes[check] = value;
  }
  return outcomes;
}

/** The largest sequence a practice chunk may carry. */
const MAX_SEQUENCE = PRACTICE_MAX_CHUNKS - 1;

/**
 * Reads a practice chunk's `sequence` (0 to PRACTICE_MAX_CHUNKS - 1, required) and `source`
 * (`webcam`, the default, or `screen`). Throws ParamMissing or Invalid naming the field.
 */
export function readPracticeChunk(params: Params): { sequence: number; source: PracticeSource } {
  const sequence = optionalInteger(params, 'sequence', 0, MAX_SEQUENCE);
  if (sequence === undefined || sequence === null) throw new ParamMissing('sequence');
  const source = params.source === '' ? undefined : optionalEnum(params, 'source', PRACTICE_SOURCES);
  return { sequence, source: source ?? 'webcam' };
}

/** A run id from the path: a whole number from 1. Throws Invalid (`run`) for anything else. */
export function readRunId(raw: string): number {
  if (!/^[1-9]\d{0,14}$/.test(raw)) throw new Invalid('run', 'must be a practice run id');
  return Number(raw);
}

/** One stored chunk of a run's recording, until the run ends. */
export interface PracticeChunk {
  readonly source: PracticeSource;
  readonly sequence: number;
  readonly key: string;
  readonly size: number;
  readonly createdAt: number;
}

/**
 * What `practice_runs.checks` holds: each check's outcome by name, and while the run lasts the
 * storage keys of its chunks under `chunks` (so an abandoned run's files can be found and removed),
 * plus the seconds each stream's recording finalised to under `recorded`.
 */
export interface PracticeRecord {
  readonly outcomes: Partial<Record<PracticeCheck, PracticeOutcome>>;
  readonly chunks: readonly PracticeChunk[];
  readonly recorded: Partial<Record<PracticeSource, number>>;
}

export const EMPTY_RECORD: PracticeRecord = Object.freeze({ outcomes: {}, chunks: [], recorded: {} });

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses a stored `checks` column, keeping only what has the expected shape (an older or damaged
 * value reads as far as it goes). Returns the record.
 */
export function parsePracticeRecord(text: string): PracticeRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return EMPTY_RECORD;
  }
  if (!isObject(raw)) return EMPTY_RECORD;
  const outcomes: Partial<Record<PracticeCheck, PracticeOutcome>> = {};
  const storedOutcomes = isObject(raw.outcomes) ? raw.outcomes : {};
  for (const check of PRACTICE_CHECKS) {
    const value = storedOutcomes[check];
    if (typeof value === 'string' && (PRACTICE_OUTCOMES as readonly string[]).includes(value)) {
      outcomes[check] = value as PracticeOutcome;
    }
  }
  const chunks: PracticeChunk[] = [];
  for (const item of Array.isArray(raw.chunks) ? (raw.chunks as unknown[]) : []) {
    if (!isObject(item)) continue;
    const { source, sequence, key, size, createdAt } = item;
    if (
      (source === 'webcam' || source === 'screen') &&
      typeof sequence === 'number' &&
      typeof key === 'string' &&
      typeof size === 'number' &&
      typeof createdAt === 'number'
    ) {
      chunks.push({ source, sequence, key, size, createdAt });
    }
  }
  const recorded: Partial<Record<PracticeSource, number>> = {};
  const storedRecorded = isObject(raw.recorded) ? raw.recorded : {};
  for (const source of PRACTICE_SOURCES) {
    const seconds = storedRecorded[source];
    if (typeof seconds === 'number') recorded[source] = seconds;
  }
  return { outcomes, chunks, recorded };
}

/** The next sequence a run expects of `source`: one past the highest stored (0 for none). */
export function nextPracticeSequence(record: PracticeRecord, source: PracticeSource): number {
  let next = 0;
  for (const chunk of record.chunks) {
    if (chunk.source === source && chunk.sequence >= next) next = chunk.sequence + 1;
  }
  return next;
}

/**
 * Judges a run at its end: `passed` when every check of `required` succeeded, else `failed` naming
 * the first that did not (in PRACTICE_CHECKS order). Returns the verdict.
 */
export function judgeRun(
  required: readonly PracticeCheck[],
  outcomes: Partial<Record<PracticeCheck, PracticeOutcome>>,
): { status: 'passed' | 'failed'; failedCheck: PracticeCheck | null } {
  const failed = required.find((check) => outcomes[check] !== 'succeeded');
  return failed === undefined
    ? { status: 'passed', failedCheck: null }
    : { status: 'failed', failedCheck: failed };
}
