import { createHash } from 'node:crypto';
import type { Accommodations } from '../student-sessions/accommodations.ts';
import type { Exam } from '../exams/exam.ts';
import type { Institute } from '../institutes/institute.ts';
import type { KindRetention, RetentionKind as StoredKind } from '../retention/retention.ts';

/**
 * The room's privacy panel (docs/room.md "Privacy panel"): what the exam records, what runs on the
 * candidate's device, who sees it, how long it is kept, whom to ask and how to contest a decision,
 * all generated from the exam's and the institute's settings. The page words each fact from its
 * catalogue; the server only states them, so every language says the same.
 */

/** What the room may record and send to the server, in the order the panel lists them. */
export const RECORDED_KINDS = [
  'camera',
  'microphone',
  'screen',
  'phone_camera',
  'id_photo',
  'face_photo',
  'uploads',
  'flags',
  'events',
] as const;
export type RecordedKind = (typeof RECORDED_KINDS)[number];

/** What runs on the candidate's device and never leaves it. */
export const ON_DEVICE_KINDS = ['flag_detectors', 'equipment_checks'] as const;
export type OnDeviceKind = (typeof ON_DEVICE_KINDS)[number];

/** Who at the institute may see the candidate's recordings, photos and reviews (src/domain/access.ts). */
export const VIEWER_ROLES = ['teacher', 'proctor', 'reviewer', 'administrator', 'auditor'] as const;

/** The kinds of data whose keeping the panel states. */
export const PRIVACY_RETENTION_KINDS = [
  'id_photo',
  'face_photo',
  'recordings',
  'uploads',
  'incidents',
] as const;
export type PrivacyRetentionKind = (typeof PRIVACY_RETENTION_KINDS)[number];

/**
 * How a kind's keeping ends: `after_session_end` (`days` after the session ended),
 * `after_verdict_or_session_end` (the ID photo: 24 hours after the final verdict, or `days` after
 * the session ended when that comes first; `days` null: only the verdict), `kept` (no period: until
 * the institute deletes it).
 */
export const RETENTION_RULES = ['after_session_end', 'after_verdict_or_session_end', 'kept'] as const;

/** How long one kind is kept (RETENTION_RULES says how `days` counts). */
export interface RetentionFact {
  readonly kind: PrivacyRetentionKind;
  readonly days: number | null;
  readonly rule: (typeof RETENTION_RULES)[number];
}

/** The facts the panel shows; `version` changes whenever any other fact (or the terms) changes. */
export interface PrivacyNotice {
  readonly version: string;
  readonly recorded: readonly RecordedKind[];
  readonly onDevice: readonly OnDeviceKind[];
  readonly viewers: readonly (typeof VIEWER_ROLES)[number][];
  readonly retention: readonly RetentionFact[];
  readonly institute: {
    readonly name: string;
    readonly privacyContact: string | null;
    readonly dpoName: string | null;
    readonly dpoEmail: string | null;
  };
  readonly appealPeriodDays: number;
}

/** The institute settings the panel reads. */
export type PrivacyInstitute = Pick<
  Institute,
  'name' | 'privacyContact' | 'dpoName' | 'dpoEmail' | 'appealPeriodDays'
>;

function isExempt(accommodations: Pick<Accommodations, 'exemptions'>, check: string): boolean {
  return accommodations.exemptions.some((exemption) => exemption.check === check);
}

/** What this candidate's exam records, less what their accommodations exempt them from. */
function recordedKinds(
  exam: Pick<Exam, 'webCam' | 'screenShare' | 'mobileCam' | 'uploadAnswers' | 'automatedFlags'>,
  accommodations: Pick<Accommodations, 'exemptions'>,
): RecordedKind[] {
  const kinds: RecordedKind[] = [];
  const camera = exam.webCam && !isExempt(accommodations, 'webcam');
  if (camera) kinds.push('camera');
  if (exam.webCam && !isExempt(accommodations, 'microphone')) kinds.push('microphone');
  if (exam.screenShare && !isExempt(accommodations, 'screen_share')) kinds.push('screen');
  if (exam.mobileCam && !isExempt(accommodations, 'mobile')) kinds.push('phone_camera');
  // The photos are taken from the camera's picture (web/room/setup/exemptions.ts photosNeeded).
  if (camera && !isExempt(accommodations, 'id_photo')) kinds.push('id_photo');
  if (camera && !isExempt(accommodations, 'face_photo')) kinds.push('face_photo');
  if (exam.uploadAnswers) kinds.push('uploads');
  if (exam.automatedFlags) kinds.push('flags');
  // Start, finish and the room's events (a lost connection, a left full screen) are always kept.
  kinds.push('events');
  return kinds;
}

/** Which kept kind each recorded kind is stored as (the events and flags are kept as incidents). */
const KEPT_AS: Readonly<Record<RecordedKind, PrivacyRetentionKind>> = {
  camera: 'recordings',
  microphone: 'recordings',
  screen: 'recordings',
  phone_camera: 'recordings',
  id_photo: 'id_photo',
  face_photo: 'face_photo',
  uploads: 'uploads',
  flags: 'incidents',
  events: 'incidents',
};

/** The retention domain's name of each kind the panel states (src/domain/retention/retention.ts). */
const STORED_AS: Readonly<Record<PrivacyRetentionKind, StoredKind>> = {
  id_photo: 'id_photo',
  face_photo: 'face_photo',
  recordings: 'recording',
  uploads: 'upload',
  incidents: 'incident',
};

/**
 * How long each kind this candidate's exam keeps is kept (PRIVACY_RETENTION_KINDS order), from the
 * institute's retention per kind as the sweep applies it (`retention`, effectiveRetention in
 * src/domain/retention/retention.ts). Returns the facts.
 */
export function retentionFacts(
  retention: readonly Pick<KindRetention, 'kind' | 'days' | 'afterFinalVerdictHours'>[],
  recorded: readonly RecordedKind[],
): RetentionFact[] {
  const kept = new Set(recorded.map((kind) => KEPT_AS[kind]));
  return PRIVACY_RETENTION_KINDS.filter((kind) => kept.has(kind)).map((kind): RetentionFact => {
    const policy = retention.find((entry) => entry.kind === STORED_AS[kind]);
    const days = policy?.days ?? null;
    if (policy?.afterFinalVerdictHours != null) return { kind, days, rule: 'after_verdict_or_session_end' };
    return days === null ? { kind, days, rule: 'kept' } : { kind, days, rule: 'after_session_end' };
  });
}

/** Returns the first 16 hex digits of the SHA-256 of `value`'s JSON: the version of what was shown. */
function versionOf(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value), 'utf8').digest('hex').slice(0, 16);
}

/**
 * Builds the panel for one candidate of `exam` at `institute`, with the institute's retention per
 * kind (`retention`, as effectiveRetention gives it). `terms` (the exam's terms, or null)
 * enters the version so that the terms and the panel are accepted, and versioned, together.
 * Returns the notice.
 */
export function privacyNotice(
  exam: Pick<Exam, 'webCam' | 'screenShare' | 'mobileCam' | 'uploadAnswers' | 'automatedFlags'>,
  accommodations: Pick<Accommodations, 'exemptions'>,
  institute: PrivacyInstitute,
  retention: readonly Pick<KindRetention, 'kind' | 'days' | 'afterFinalVerdictHours'>[],
  terms: string | null,
): PrivacyNotice {
  const recorded = recordedKinds(exam, accommodations);
  const facts = {
    recorded,
    onDevice: [...(exam.automatedFlags ? (['flag_detectors'] as const) : []), 'equipment_checks' as const],
    viewers: [...VIEWER_ROLES],
    retention: retentionFacts(retention, recorded),
    institute: {
      name: institute.name,
      privacyContact: institute.privacyContact,
      dpoName: institute.dpoName,
      dpoEmail: institute.dpoEmail,
    },
    appealPeriodDays: institute.appealPeriodDays,
  };
  return { version: versionOf({ facts, terms }), ...facts };
}

/** The parameter of `POST start` naming the version of the privacy panel the candidate accepted. */
export const PRIVACY_VERSION = 'privacy_version';

/**
 * What an acceptance keeps in `student_sessions.terms_sha256`: the terms' SHA-256 (when the exam
 * has terms) and the panel's version, as `terms:<sha256>;privacy:<version>` (or `privacy:<version>`),
 * so a change of either is a new acceptance and each part can be checked on its own.
 */
export function acceptanceRecord(termsSha256: string | null, privacyVersion: string): string {
  return termsSha256 === null
    ? `privacy:${privacyVersion}`
    : `terms:${termsSha256};privacy:${privacyVersion}`;
}
