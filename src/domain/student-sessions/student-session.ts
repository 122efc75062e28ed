import crypto from 'node:crypto';
import { Invalid, ParamMissing, Taken } from '../errors.ts';
import {
  has,
  optionalBoolean,
  optionalInteger,
  optionalString,
  optionalTime,
  type Params,
  requiredString,
} from '../input.ts';
import { readNullableLanguage } from '../languages.ts';
import type { Condition, FilterValue, ListFields, ListQuery } from '../listing.ts';
import type { LiveStatus } from '../live/live.ts';
import type { MobileStatus } from '../mobile/mobile.ts';
import { type Accommodations, NO_ACCOMMODATIONS, readAccommodations } from './accommodations.ts';
import type { CheckValue, SessionStatus, TranscodingStatus } from './status.ts';

/** The outcome of a student's newest practice run; `not_tried` before the first. */
export const PRACTICE_STATUSES = ['not_tried', 'running', 'passed', 'failed'] as const;
export type PracticeStatus = (typeof PRACTICE_STATUSES)[number];

/** The requirement checks of a session: domain name → API and column name. */
export const CHECK_FIELDS = {
  screenshareCheck: 'screenshare_check',
  microphoneCheck: 'microphone_check',
  speakersCheck: 'speakers_check',
  webcamCheck: 'webcam_check',
  mobileCheck: 'mobile_check',
  bandwidthCheck: 'bandwidth_check',
} as const;
export type CheckField = keyof typeof CHECK_FIELDS;

/** One remark a proctor, reviewer or manager recorded about a session. */
export interface Incident {
  readonly id: number;
  readonly studentSessionId: number;
  readonly comment: string;
  /** Where in the recording the incident lies, as the client sent it (a whole number from 0). */
  readonly offsetTime: number | null;
  /** An automated flag's type (flags/flag-types.ts); null for every other incident. */
  readonly type: string | null;
  /** `automatic` for an automated flag; null for staff's incidents and the room's events. */
  readonly source: string | null;
  /** A flag's confidence, 0 to 1; null for other incidents. */
  readonly confidence: number | null;
  /** Where a flag's episode ended (seconds since the start); null while it lasts, and for others. */
  readonly endOffsetTime: number | null;
  /** When a reviewer dismissed the flag (kept, marked), and who; null when not dismissed. */
  readonly dismissedAt: number | null;
  readonly dismissedBy: number | null;
  /**
   * An automated flag recorded for the record only and never raised: one that assistive technology
   * sets off for a student with that accommodation (docs/accommodations.md). False for the rest.
   */
  readonly informational: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** One student's participation in one exam, as stored. Times are epoch milliseconds. */
export type StudentSession = {
  readonly id: number;
  readonly examId: number;
  readonly name: string;
  readonly email: string;
  readonly attempt: number;
  readonly status: SessionStatus;
  readonly token: string;
  readonly pinCode: number;
  readonly sessionId: string | null;
  readonly studentId: string | null;
  readonly timeSlot: number;
  readonly operatingSystem: string | null;
  readonly browser: string | null;
  readonly browserVersion: string | null;
  readonly bandwidthSpeed: number | null;
  readonly dummyExamSurvey: string | null;
  readonly skipRequirements: boolean;
  readonly sendConfirmation: boolean;
  readonly useDuration: boolean;
  readonly startTime: number | null;
  readonly endTime: number | null;
  readonly openTime: number | null;
  readonly reservationTime: number | null;
  readonly expiresAt: number | null;
  readonly recordingStartedAt: number | null;
  readonly recordingEndedAt: number | null;
  readonly enteredRoom: boolean;
  readonly examDocumentFileId: number | null;
  readonly examDocumentContentType: string | null;
  readonly examDocumentFileSize: number | null;
  readonly examDocumentUpdatedAt: number | null;
  readonly reviewed: string;
  readonly idCardFileId: number | null;
  readonly idCardFileName: string | null;
  readonly idCardContentType: string | null;
  readonly idCardFileSize: number | null;
  readonly facePhotoFileId: number | null;
  readonly facePhotoFileName: string | null;
  readonly facePhotoContentType: string | null;
  readonly facePhotoFileSize: number | null;
  readonly individualInfo: string | null;
  readonly isIndividualInfoHtml: boolean;
  readonly rtcSessionId: number | null;
  readonly rtcSessionIds: readonly unknown[];
  readonly inSetup: boolean;
  readonly inCheckRequirements: boolean;
  readonly archived: boolean;
  readonly currentExamMode: string | null;
  readonly transcodingStatus: TranscodingStatus;
  readonly priority: string | null;
  readonly isEmailSent: boolean;
  readonly proctorId: number | null;
  readonly externalId: string | null;
  readonly endReason: string | null;
  readonly ltiResourceId: number | null;
  readonly lmsUserId: string | null;
  readonly resourceLinkId: string | null;
  readonly contextId: string | null;
  /** The candidate's live connection as the signalling hub last saw it (live-proctored exams). */
  readonly liveStatus: LiveStatus;
  /** When the running pause of the candidate's clock began (epoch ms); null while the clock runs. */
  readonly clockPausedAt: number | null;
  /** The total of the clock's pauses that ended, in milliseconds. */
  readonly clockPausedMs: number;
  /** The phone's pairing token (mobile_cam exams; docs/room.md "The phone"); null until first shown. */
  readonly mobileToken: string | null;
  /** The phone's status as stored (mobile.ts settledStatus gives it at a moment). */
  readonly mobileStatus: MobileStatus;
  /** When the phone was last heard from (epoch ms), or null. */
  readonly mobileSeenAt: number | null;
  /** The phone's browser and system as it reported them, or null. */
  readonly mobileDevice: string | null;
  /** When the candidate accepted the exam's terms in the room (epoch ms); null before, or without terms. */
  readonly termsAcceptedAt: number | null;
  /**
   * What the candidate accepted at the start: `terms:<SHA-256 of the terms>;privacy:<panel version>`,
   * `privacy:<version>` for an exam without terms, or the bare SHA-256 (hex) for sessions started
   * before the privacy panel; null before the start.
   */
  readonly termsSha256: string | null;
  /** The student's language as the exam office or the LMS set it (a supported BCP 47 tag), or null. */
  readonly language: string | null;
  /** The candidate's own pick in the room's or the phone's language menu, or null before one. */
  readonly chosenLanguage: string | null;
  /** Extra time, rest breaks, exemptions and the rest (accommodations.ts); NO_ACCOMMODATIONS for none. */
  readonly accommodations: Accommodations;
  /** When the running rest break began (epoch ms); null while the candidate works. */
  readonly breakStartedAt: number | null;
  /** The total of the rest breaks that ended, in milliseconds. */
  readonly breakMs: number;
  /** How many rest breaks the candidate started. */
  readonly breaksTaken: number;
  /** The newest practice run's outcome (docs/accommodations.md "Practice run"). */
  readonly practiceStatus: PracticeStatus;
  /** The check the newest practice run failed; null unless it failed. */
  readonly practiceFailedCheck: string | null;
  /** When the newest practice run began or ended (epoch ms); null before the first. */
  readonly practiceAt: number | null;
  /** When the office last emailed the student a practice reminder (epoch ms), or null. */
  readonly practiceRemindedAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Oldest first. */
  readonly incidents: readonly Incident[];
} & { readonly [K in CheckField]: CheckValue };

/** What a client may change on a session (create and update). */
export interface StudentSessionChanges {
  name?: string;
  email?: string;
  individualInfo?: string | null;
  isIndividualInfoHtml?: boolean;
  skipRequirements?: boolean;
  openTime?: number | null;
  priority?: string | null;
  externalId?: string | null;
  useDuration?: boolean;
  /** A supported BCP 47 tag in canonical case (src/domain/languages.ts), or null. */
  language?: string | null;
  /** The LMS's id of the student (API `student_lms_id`), and the resource link and context it came from. */
  lmsUserId?: string | null;
  resourceLinkId?: string | null;
  contextId?: string | null;
  /** The LTI resource it came through (API `lti_resource_id`; resolved by lti-resources/session-link.ts). */
  ltiResourceId?: number | null;
  /** The whole accommodations object as it will be stored (the request's keys over the current ones). */
  accommodations?: Accommodations;
}

/** What a new session is made of, before the generated token and pin code. */
export type NewStudentSession = Required<StudentSessionChanges> & { readonly attempt: number };

/** The fields of a new session the server fills in itself. */
export interface GeneratedFields {
  readonly token: string;
  readonly pinCode: number;
}

/** The largest value an integer column holds on PostgreSQL. */
const MAX_INT = 2_147_483_647;

/** Filterable and sortable student-session fields. */
export const STUDENT_SESSION_LIST_FIELDS: ListFields = {
  id: { column: 'id', type: 'integer', notNull: true },
  exam_id: { column: 'exam_id', type: 'integer', notNull: true },
  name: { column: 'name', type: 'string', notNull: true },
  email: { column: 'email', type: 'string', notNull: true },
  status: { column: 'status', type: 'string', notNull: true },
  attempt: { column: 'attempt', type: 'integer', notNull: true },
  archived: { column: 'archived', type: 'boolean', notNull: true },
  is_email_sent: { column: 'is_email_sent', type: 'boolean', notNull: true },
  created_at: { column: 'created_at', type: 'time', notNull: true },
  updated_at: { column: 'updated_at', type: 'time', notNull: true },
  start_time: { column: 'start_time', type: 'time' },
  end_time: { column: 'end_time', type: 'time' },
  open_time: { column: 'open_time', type: 'time' },
  external_id: { column: 'external_id', type: 'string' },
  proctor_id: { column: 'proctor_id', type: 'integer' },
  priority: { column: 'priority', type: 'string' },
  student_lms_id: { column: 'lms_user_id', type: 'string' },
  resource_link_id: { column: 'resource_link_id', type: 'string' },
  context_id: { column: 'context_id', type: 'string' },
  lti_resource_id: { column: 'lti_resource_id', type: 'integer' },
  language: { column: 'language', type: 'string' },
  practice_status: { column: 'practice_status', type: 'string', notNull: true },
};

/**
 * Returns an email in its stored form, trimmed and in lower case. Emails compare case-insensitively
 * this way, and the (exam, email, attempt) unique index enforces the rule on both databases, even
 * under concurrency.
 */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The longest student name and incident comment accepted (in UTF-16 code units, as `length` counts):
 * what is accepted is printed in reports and lists, so it is bounded (docs/security.md, "H1").
 */
export const SESSION_NAME_MAX = 200;
export const INCIDENT_COMMENT_MAX = 2000;

/** A required text that was sent blank counts as missing; returns undefined when not sent at all. */
function requiredText(params: Params, name: string, mode: 'create' | 'update'): string | undefined {
  const value = optionalString(params, name);
  if (value === undefined && mode === 'update') return undefined;
  if (value === undefined || value === null || value.trim() === '') throw new ParamMissing(name);
  return value;
}

function readEmail(params: Params, mode: 'create' | 'update'): string | undefined {
  const raw = requiredText(params, 'email', mode);
  if (raw === undefined) return undefined;
  const email = normalizeEmail(raw);
  // A light check: one @ with text on both sides and no white space. Deliverability is the mailer's job.
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new Invalid('email', 'is invalid');
  return email;
}

/**
 * Reads what a create or update request carries: `name` and `email` (required on create), then
 * `individual_info`, `is_individual_info_html`, `skip_requirements`, `open_time`, `priority`,
 * `external_id`, `use_duration`, `language` (a supported BCP 47 tag; empty reads as null), and the
 * LMS fields `student_lms_id`, `resource_link_id`, `context_id` (empty reads as null), and
 * `accommodations` (accommodations.ts readAccommodations, over `currentAccommodations` on update).
 * Returns only what was sent; throws ParamMissing or Invalid
 * naming the first bad field. `attempt` is read by `readAttempt` (create only), `lti_resource_id`
 * by lti-resources/session-link.ts (it must name a resource).
 */
export function readSessionChanges(
  params: Params,
  mode: 'create' | 'update',
  currentAccommodations: Accommodations = NO_ACCOMMODATIONS,
): StudentSessionChanges {
  const changes: StudentSessionChanges = {};
  const name = requiredText(params, 'name', mode);
  if (name !== undefined && name.length > SESSION_NAME_MAX) {
    throw new Invalid('name', `is too long (maximum is ${SESSION_NAME_MAX} characters)`);
  }
  if (name !== undefined) changes.name = name;
  const email = readEmail(params, mode);
  if (email !== undefined) changes.email = email;
  const individualInfo = optionalString(params, 'individual_info');
  if (individualInfo !== undefined) changes.individualInfo = individualInfo;
  const isHtml = optionalBoolean(params, 'is_individual_info_html');
  if (isHtml !== undefined) changes.isIndividualInfoHtml = isHtml;
  const skip = optionalBoolean(params, 'skip_requirements');
  if (skip !== undefined) changes.skipRequirements = skip;
  const openTime = optionalTime(params, 'open_time');
  if (openTime !== undefined) changes.openTime = openTime;
  const priority = optionalString(params, 'priority');
  if (priority !== undefined) changes.priority = priority;
  const externalId = optionalString(params, 'external_id');
  if (externalId !== undefined) changes.externalId = externalId;
  const useDuration = optionalBoolean(params, 'use_duration');
  if (useDuration !== undefined) changes.useDuration = useDuration;
  const language = readNullableLanguage(params, 'language');
  if (language !== undefined) changes.language = language;
  const lmsUserId = optionalString(params, 'student_lms_id');
  if (lmsUserId !== undefined) changes.lmsUserId = lmsUserId;
  const resourceLinkId = optionalString(params, 'resource_link_id');
  if (resourceLinkId !== undefined) changes.resourceLinkId = resourceLinkId;
  const contextId = optionalString(params, 'context_id');
  if (contextId !== undefined) changes.contextId = contextId;
  const accommodations = readAccommodations(params, currentAccommodations);
  if (accommodations !== undefined) changes.accommodations = accommodations;
  return changes;
}

/** The `attempt` of a create request: a whole number from 0, 0 when absent or empty. Throws Invalid. */
export function readAttempt(params: Params): number {
  if (!has(params, 'attempt')) return 0;
  return optionalInteger(params, 'attempt', 0, MAX_INT) ?? 0;
}

/** The defaults of a new session, before the request's own values. */
export function newSessionDefaults(): Omit<NewStudentSession, 'name' | 'email' | 'attempt'> {
  return {
    individualInfo: null,
    isIndividualInfoHtml: false,
    skipRequirements: false,
    openTime: null,
    priority: null,
    externalId: null,
    useDuration: true,
    language: null,
    lmsUserId: null,
    resourceLinkId: null,
    contextId: null,
    ltiResourceId: null,
    accommodations: NO_ACCOMMODATIONS,
  };
}

/** A fresh room token (32 hex characters, 128 random bits) and a 6-digit pin code. */
export function generateFields(): GeneratedFields {
  return { token: crypto.randomBytes(16).toString('hex'), pinCode: crypto.randomInt(100_000, 1_000_000) };
}

/**
 * Checks that `openTime` lies within the exam's window, each bound applying only when the exam has
 * it. Throws Invalid on `open_time`.
 */
export function checkOpenTime(
  openTime: number | null | undefined,
  exam: { readonly startTime: number | null; readonly endTime: number | null },
): void {
  if (openTime === null || openTime === undefined) return;
  if (exam.startTime !== null && openTime < exam.startTime) {
    throw new Invalid('open_time', 'must be on or after the exam start_time');
  }
  if (exam.endTime !== null && openTime > exam.endTime) {
    throw new Invalid('open_time', 'must be on or before the exam end_time');
  }
}

/**
 * The attempt rule of a new session: (exam, email, attempt) is unique, and a new attempt is exactly
 * one above the highest existing one for that email (0 for the first). `existing` are the attempt
 * numbers the email already has in the exam. Throws Taken on `email` when the attempt exists, Invalid
 * on `attempt` otherwise.
 */
export function checkNewAttempt(attempt: number, existing: readonly number[]): void {
  if (existing.includes(attempt)) throw new Taken('email');
  const expected = existing.length === 0 ? 0 : Math.max(...existing) + 1;
  if (attempt === expected) return;
  throw new Invalid(
    'attempt',
    existing.length === 0
      ? 'must be 0 for the first attempt of this email'
      : `must be ${expected}, one above the highest attempt of this email`,
  );
}

function emailOperand(value: FilterValue): FilterValue {
  return typeof value === 'string' ? normalizeEmail(value) : value;
}

/**
 * The list query with its `email` operands normalized as stored emails are, so filters compare
 * emails case-insensitively too (`like` already does). Returns a new query.
 */
export function withEmailFiltersNormalized(list: ListQuery): ListQuery {
  const conditions = list.conditions.map((condition): Condition => {
    if (condition.column !== 'email') return condition;
    switch (condition.op) {
      case 'in':
      case 'not_in':
        return { ...condition, values: condition.values.map(emailOperand) };
      case 'like':
      case 'null':
        return condition;
      default:
        return { ...condition, value: emailOperand(condition.value) };
    }
  });
  return { ...list, conditions };
}

/**
 * Reads what an incident request carries: `comment` (required, at most INCIDENT_COMMENT_MAX
 * characters) and `offset_time` (a whole number from 0, null when absent). Throws ParamMissing on
 * `comment`, or Invalid on a too long `comment` or on `offset_time`.
 */
export function readIncident(params: Params): { comment: string; offsetTime: number | null } {
  const comment = optionalString(params, 'comment');
  if (comment === undefined || comment === null || comment.trim() === '') throw new ParamMissing('comment');
  if (comment.length > INCIDENT_COMMENT_MAX) {
    throw new Invalid('comment', `is too long (maximum is ${INCIDENT_COMMENT_MAX} characters)`);
  }
  return { comment, offsetTime: optionalInteger(params, 'offset_time', 0, MAX_INT) ?? null };
}

/** Returns the `student_session_id` parameter of the exam-scoped (deprecated and V2) calls. Throws ParamMissing. */
export function readStudentSessionId(params: Params): string {
  return requiredString(params, 'student_session_id');
}
