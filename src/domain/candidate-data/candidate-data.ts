import crypto from 'node:crypto';
import type { ReviewEntry, Verdict } from '../reviews/review.ts';
import type { Appeal } from '../appeals/appeal.ts';
import type { KindPurge } from '../retention/retention.ts';

/**
 * A candidate's access to their own data (docs/candidate-data.md): the rules, all pure. The
 * candidate asks for a one-time code (sent to the session's address), enters it, and gets an
 * expiring address of a zip of what Invigil holds about the session. Staff views of a session's
 * media are audit events, listed to the candidate and in the console ("Who looked").
 */

/** How long an emailed code works. */
export const CODE_TTL_MS = 15 * 60 * 1000;
/** Wrong codes tried against one code before it stops working. */
export const CODE_MAX_ATTEMPTS = 5;
/** Codes one session may be sent per CODE_WINDOW_MS (the mail is the cost, and the guessing). */
export const CODES_PER_WINDOW = 5;
export const CODE_WINDOW_MS = 60 * 60 * 1000;
/** How long the zip's address works once the code was entered. */
export const DOWNLOAD_TTL_MS = 15 * 60 * 1000;
/** Sessions of one address a public request sends codes for (the newest ones). */
export const MAX_SESSIONS_PER_REQUEST = 10;
/**
 * Public requests (by address) per address and per client address, per minute, counted by the
 * room's shared limiter (whose table keeps one-minute windows). What caps the emails themselves is
 * CODES_PER_WINDOW, counted in the database per session.
 */
export const REQUESTS_PER_ADDRESS = 3;
export const REQUESTS_PER_IP = 10;
export const REQUEST_WINDOW_MS = 60 * 1000;

/** The answer once the session's media were purged: the zip is no longer offered. */
export const DATA_PURGED =
  'The data of this exam session was deleted under the retention rules, so it can no longer be downloaded.';
/** The answer for an unknown, used or expired download address. */
export const DOWNLOAD_EXPIRED =
  'This download address has expired or is not valid. Ask for a new code on your exam page.';
/** The answer before the session has ended. */
export const NOT_FINISHED = 'Your data can be downloaded once your exam session has ended.';

/** A new one-time code: 8 decimal digits from the system's secure random source. */
export function newCode(): string {
  return String(crypto.randomInt(0, 100_000_000)).padStart(8, '0');
}

/** A new download key: 32 random bytes, base64url. */
export function newDownloadKey(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** The stored form of a code or key: its SHA-256, hex (bound to the session for codes). */
export function hashSecret(secret: string, sessionId?: number): string {
  return crypto
    .createHash('sha256')
    .update(sessionId === undefined ? secret : `${sessionId}:${secret}`)
    .digest('hex');
}

/** A typed code as it is compared: digits only (spaces and dashes a reader adds are dropped). */
export function normaliseCode(typed: string): string {
  return typed.replace(/[\s-]/g, '');
}

/** The address shown back to the candidate: `a•••@example.org`. Returns it. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '•••';
  return `${email.slice(0, 1)}•••${email.slice(at)}`;
}

// ---------------------------------------------------------------------------------------------
// Who looked (part 6)

/** What a staff member looked at. */
export const STAFF_VIEW_KINDS = ['recordings', 'photos', 'uploads', 'report', 'exam_zip'] as const;
export type StaffViewKind = (typeof STAFF_VIEW_KINDS)[number];

/** The audit action of each kind of staff view (docs/audit-log.md). */
export const STAFF_VIEW_ACTIONS: Readonly<Record<StaffViewKind, string>> = {
  recordings: 'staff_viewed_recordings',
  photos: 'staff_viewed_photos',
  uploads: 'staff_viewed_uploads',
  report: 'staff_downloaded_report',
  exam_zip: 'staff_downloaded_exam_zip',
};

/** The candidate's own requests and downloads. */
export const CANDIDATE_DATA_REQUESTED = 'candidate_data_requested';
export const CANDIDATE_DATA_DOWNLOADED = 'candidate_data_downloaded';

/**
 * One event per staff member, session (or exam) and kind within this window: a player asking for
 * ranges of a recording, or a page polling the near-live chunks, is one look, not hundreds.
 */
export const VIEW_EVENT_WINDOW_MS = 10 * 60 * 1000;

/** The kind an audit action names, or undefined when it is not a staff view. */
export function staffViewKindOf(action: string): StaffViewKind | undefined {
  return STAFF_VIEW_KINDS.find((kind) => STAFF_VIEW_ACTIONS[kind] === action);
}

/** One staff look at a session's data, as the candidate and the console read it. */
export interface StaffView {
  readonly userId: number | null;
  /** The user's name as it is now; null once the account is gone. */
  readonly name: string | null;
  readonly role: string | null;
  readonly kind: StaffViewKind;
  readonly at: number;
}

// ---------------------------------------------------------------------------------------------
// The archive's contents

/** A verdict the candidate may read: the newest entry, once final. */
export interface FinalVerdict {
  readonly verdict: Verdict;
  readonly comment: string | null;
  readonly decidedAt: number;
}

/**
 * The verdict the candidate is shown: the newest entry, only when it is settled (`passed`,
 * `suspicious`, or a `violation` no longer waiting for its second reviewer). Earlier entries, a
 * verdict in review and one still pending are staff's working state, never shown. Returns it, or
 * undefined.
 */
export function finalVerdictOf(history: readonly ReviewEntry[]): FinalVerdict | undefined {
  const latest = history.at(-1);
  if (latest === undefined) return undefined;
  if (latest.verdict !== 'passed' && latest.verdict !== 'suspicious' && latest.verdict !== 'violation')
    return undefined;
  if (latest.secondReview === 'pending') return undefined;
  return { verdict: latest.verdict, comment: latest.comment, decidedAt: latest.createdAt };
}

/** An incident, flag or room event of the session as the archive lists it. */
export interface CandidateIncident {
  readonly comment: string;
  readonly kind: string | null;
  readonly type: string | null;
  readonly source: string | null;
  readonly offsetSeconds: number | null;
  readonly endOffsetSeconds: number | null;
  readonly confidence: number | null;
  readonly dismissed: boolean;
  readonly informational: boolean;
  readonly createdAt: number;
}

/** A stored file the archive carries. */
export interface CandidateFile {
  readonly fileId: number;
  readonly storageKey: string;
  /** `recording`, `recording_chunk`, `id_card`, `face_photo`, `exam_document`, `upload` or `appeal_file`. */
  readonly kind: string;
  readonly folder: 'recordings' | 'photos' | 'uploads';
  readonly originalName: string;
  readonly contentType: string;
  readonly size: number;
  readonly sha256: string;
  readonly createdAt: number;
}

/** The session facts the manifest opens with. */
export interface CandidateSessionFacts {
  readonly id: number;
  readonly examId: number;
  readonly examName: string;
  readonly name: string;
  readonly email: string;
  readonly status: string;
  readonly startTime: number | null;
  readonly endTime: number | null;
  readonly endReason: string | null;
  readonly language: string | null;
  readonly mediaPurgedAt: number | null;
}

/** Everything the manifest is made of. */
export interface CandidateDataContent {
  readonly session: CandidateSessionFacts;
  readonly files: readonly (CandidateFile & { readonly path: string })[];
  readonly incidents: readonly CandidateIncident[];
  readonly verdict: FinalVerdict | undefined;
  /** The candidate's own appeal and its outcome (the deciding reviewer's comment included). */
  readonly appeal: Appeal | undefined;
  /** What retention deleted of the session already, kind by kind (docs/retention.md). */
  readonly purged: readonly KindPurge[];
  readonly views: readonly StaffView[];
  readonly generatedAt: number;
}

const iso = (millis: number | null): string | null =>
  millis === null ? null : new Date(millis).toISOString();

/**
 * What was left out on purpose, stated in the manifest so the candidate knows it exists: staff's
 * working notes are not the candidate's data in the sense of this download (docs/candidate-data.md).
 */
export const LEFT_OUT = [
  'review history before the final verdict, and a verdict still in review',
  'reasons staff recorded for accommodations and exemptions',
  'reviewer names',
] as const;

/** The manifest (`manifest.json`): every fact of the archive, machine-readable. Returns it. */
export function buildCandidateManifest(content: CandidateDataContent): Record<string, unknown> {
  const { session } = content;
  return {
    generated_at: iso(content.generatedAt),
    student_session: {
      id: session.id,
      exam_id: session.examId,
      exam_name: session.examName,
      name: session.name,
      email: session.email,
      status: session.status,
      start_time: iso(session.startTime),
      end_time: iso(session.endTime),
      end_reason: session.endReason,
    },
    files: content.files.map((file) => ({
      path: file.path,
      kind: file.kind,
      original_name: file.originalName,
      content_type: file.contentType,
      size: file.size,
      sha256: file.sha256,
      stored_at: iso(file.createdAt),
    })),
    incidents: content.incidents.map((incident) => ({
      time:
        session.startTime === null || incident.offsetSeconds === null
          ? iso(incident.createdAt)
          : iso(session.startTime + incident.offsetSeconds * 1000),
      offset_seconds: incident.offsetSeconds,
      end_offset_seconds: incident.endOffsetSeconds,
      kind: incident.kind,
      type: incident.type,
      source: incident.source,
      confidence: incident.confidence,
      comment: incident.comment,
      dismissed: incident.dismissed,
      informational: incident.informational,
      recorded_at: iso(incident.createdAt),
    })),
    verdict:
      content.verdict === undefined
        ? null
        : {
            verdict: content.verdict.verdict,
            comment: content.verdict.comment,
            decided_at: iso(content.verdict.decidedAt),
          },
    appeal:
      content.appeal === undefined
        ? null
        : {
            status: content.appeal.status,
            statement: content.appeal.statement,
            submitted_at: iso(content.appeal.submittedAt),
            decided_at: iso(content.appeal.decidedAt),
            comment: content.appeal.comment,
          },
    deleted_under_retention: content.purged.map((purge) => ({
      kind: purge.kind,
      rule: purge.rule,
      deleted_at: iso(purge.purgedAt),
    })),
    viewed_by: content.views.map((view) => ({
      name: view.name,
      role: view.role,
      what: view.kind,
      at: iso(view.at),
    })),
    left_out: LEFT_OUT,
  };
}

/** The words of the readable summary, from the catalogue (`server.candidateData.summary.*`). */
export type SummaryWords = (key: string, values?: Readonly<Record<string, string | number>>) => string;

/**
 * The readable summary (`summary.txt`) in the candidate's language: the session, the files, the
 * incidents with their times, the verdict once final and who looked. Returns it.
 */
export function candidateSummary(content: CandidateDataContent, words: SummaryWords): string {
  const { session } = content;
  const lines: string[] = [
    words('server.candidateData.summary.title', { exam: session.examName }),
    '',
    words('server.candidateData.summary.session', {
      name: session.name,
      email: session.email,
      start: iso(session.startTime) ?? '-',
      end: iso(session.endTime) ?? '-',
    }),
    '',
    words('server.candidateData.summary.files', { count: content.files.length }),
    ...content.files.map((file) => `  ${file.path} (${file.size} B, SHA-256 ${file.sha256})`),
    '',
    words('server.candidateData.summary.incidents', { count: content.incidents.length }),
    ...content.incidents.map((incident) => {
      const at =
        session.startTime === null || incident.offsetSeconds === null
          ? iso(incident.createdAt)
          : iso(session.startTime + incident.offsetSeconds * 1000);
      return `  ${at ?? '-'}  ${incident.comment.replace(/[\r\n]+/g, ' ')}`;
    }),
    '',
    content.verdict === undefined
      ? words('server.candidateData.summary.noVerdict')
      : words('server.candidateData.summary.verdict', {
          verdict: content.verdict.verdict,
          time: iso(content.verdict.decidedAt) ?? '-',
        }),
    ...(content.verdict?.comment ? [`  ${content.verdict.comment.replace(/[\r\n]+/g, ' ')}`] : []),
    '',
    words('server.candidateData.summary.views', { count: content.views.length }),
    ...content.views.map(
      (view) =>
        `  ${iso(view.at) ?? '-'}  ${view.name ?? words('server.candidateData.summary.formerStaff')} (${view.role ?? '-'}): ${view.kind}`,
    ),
    '',
    words('server.candidateData.summary.leftOut'),
    '',
  ];
  return lines.join('\r\n');
}
