import crypto from 'node:crypto';
import type { AccommodationsRecord } from '../student-sessions/accommodations.ts';

/**
 * Webhooks: the events an institute's `callback_url` receives, their bodies, and how they are
 * signed. Pure: no database, no network (docs/webhooks.md is the integrator's view of this file).
 */

/** Every event type, as sent in `type` and `X-Invigil-Event`. */
export const WEBHOOK_EVENT_TYPES = [
  'student_session.finished',
  'recording.ready',
  'student_session.reviewed',
  'exam_documents_zip.ready',
  'student_session.appealed',
  'student_session.appeal_decided',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** How a session ended, as its `end_reason` says. */
export type SessionEndReason = 'finished' | 'time_up' | 'api';

/**
 * The `data` of each event. Wire format (snake_case, ISO 8601 times), written once here: the body
 * goes out exactly as built when the event happened, on every attempt.
 */
export interface WebhookData {
  /** A session reached `exam_finished`: the student finished, its time ran out, or `end_exam`. */
  'student_session.finished': {
    readonly student_session_id: number;
    readonly exam_id: number;
    readonly token: string;
    /** `finished` (the student), `time_up` (the room), `api` (end_exam). */
    readonly end_reason: string | null;
    /** The session's `end_time`. */
    readonly ended_at: string | null;
    /** The student's accommodations as the V3 record shows them (docs/accommodations.md). */
    readonly accommodations: AccommodationsRecord;
    /** How many rest breaks the student took. */
    readonly breaks_taken: number;
  };
  /** One stream of a finished session was assembled and can be watched (`GET .../recordings`). */
  'recording.ready': {
    readonly student_session_id: number;
    readonly exam_id: number;
    readonly token: string;
    /** `webcam` or `screen`. */
    readonly source: string;
    readonly duration_seconds: number;
  };
  /** A reviewer recorded a verdict on a session (`GET .../review` has the full review). */
  'student_session.reviewed': {
    readonly student_session_id: number;
    readonly exam_id: number;
    readonly token: string;
    /** `passed`, `suspicious` or `violation` (a settled verdict). */
    readonly verdict: string;
    readonly reviewer_id: number | null;
    readonly reviewed_at: string;
  };
  /** The candidate appealed a final verdict (`GET .../appeal` has the statement; docs/appeals.md). */
  'student_session.appealed': {
    readonly student_session_id: number;
    readonly exam_id: number;
    readonly token: string;
    /** The verdict appealed: `suspicious` or `violation`. */
    readonly verdict: string;
    readonly appeal_status: string;
    readonly submitted_at: string;
    readonly files_count: number;
  };
  /** A second reviewer decided an appeal: `upheld` keeps the verdict, `overturned` sets `passed`. */
  'student_session.appeal_decided': {
    readonly student_session_id: number;
    readonly exam_id: number;
    readonly token: string;
    /** `upheld` or `overturned`. */
    readonly appeal_status: string;
    /** The verdict appealed. */
    readonly appealed_verdict: string;
    /** The session's verdict after the decision. */
    readonly verdict: string;
    readonly decided_by: number;
    readonly decided_at: string;
  };
  /** An exam's documents zip was built and can be downloaded. */
  'exam_documents_zip.ready': {
    readonly exam_id: number;
    readonly generated_at: string;
    /** The V3 path that downloads it (signed like any V3 request). */
    readonly download_path: string;
  };
}

/** The JSON body of every webhook POST. */
export interface WebhookEvent<T extends WebhookEventType = WebhookEventType> {
  /** Stable: the same on every attempt of one event; deduplicate on it. */
  readonly id: string;
  readonly type: T;
  readonly created_at: string;
  readonly institute_id: number;
  readonly data: WebhookData[T];
}

/** The job kind that delivers one event (src/jobs/webhook-delivery.job.ts). */
export const WEBHOOK_DELIVER_JOB = 'webhook.deliver';

/**
 * Attempts per event: with the queue's backoff (2^n s with jitter, at most an hour between two)
 * the last attempt comes roughly 4 to 7 hours after the first (docs/webhooks.md, "Retries").
 */
export const WEBHOOK_MAX_ATTEMPTS = 18;

/** The signature header, and how far a receiver should let its timestamp stray (seconds). */
export const SIGNATURE_HEADER = 'X-Invigil-Signature';
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** What a `webhook.deliver` job carries: the body is fixed at enqueue time, so retries send the same bytes. */
export interface WebhookDelivery {
  readonly eventId: string;
  readonly type: WebhookEventType;
  readonly instituteId: number;
  readonly body: string;
}

/** A new event id: `evt_` and 32 hex digits. */
export function newEventId(): string {
  return `evt_${crypto.randomBytes(16).toString('hex')}`;
}

/** A new webhook secret: `whsec_` and 64 hex digits (the whole string is the HMAC key). */
export function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('hex')}`;
}

/** Epoch milliseconds as the ISO 8601 text the bodies carry (null stays null). */
export function isoTime(millis: number): string;
export function isoTime(millis: number | null): string | null;
export function isoTime(millis: number | null): string | null {
  return millis === null ? null : new Date(millis).toISOString();
}

/** Builds an event's body. Returns the event; the caller serialises it once. */
export function buildWebhookEvent<T extends WebhookEventType>(input: {
  id: string;
  type: T;
  instituteId: number;
  now: number;
  data: WebhookData[T];
}): WebhookEvent<T> {
  return {
    id: input.id,
    type: input.type,
    created_at: isoTime(input.now),
    institute_id: input.instituteId,
    data: input.data,
  };
}

/** The exact text that is signed: the unix timestamp (seconds), a dot, the body. */
export function signedPayload(timestamp: number, body: string): string {
  return `${timestamp}.${body}`;
}

/**
 * The `X-Invigil-Signature` value for `body` sent at `timestamp` (unix seconds):
 * `t=<timestamp>,v1=<hex HMAC-SHA256 of "t.body" keyed with the secret's UTF-8 bytes>`.
 */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  const mac = crypto
    .createHmac('sha256', secret)
    .update(signedPayload(timestamp, body), 'utf8')
    .digest('hex');
  return `t=${timestamp},v1=${mac}`;
}

/**
 * Checks a signature header as a receiver does: a `t` within `toleranceSeconds` of `nowSeconds` and
 * a `v1` equal (in constant time) to the HMAC of "t.body". Returns true when it holds.
 */
export function verifyWebhookSignature(
  secret: string,
  header: string,
  body: string,
  nowSeconds: number,
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
): boolean {
  const parts = new Map<string, string[]>();
  for (const item of header.split(',')) {
    const [key = '', value = ''] = item.trim().split('=', 2);
    parts.set(key, [...(parts.get(key) ?? []), value]);
  }
  const timestamp = Number(parts.get('t')?.[0]);
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, timestamp, body).split('v1=')[1] ?? '', 'hex');
  return (parts.get('v1') ?? []).some((candidate) => {
    const given = Buffer.from(candidate, 'hex');
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}

/** Reads a `webhook.deliver` payload (plain JSON from the jobs table). Throws a TypeError when malformed. */
export function parseWebhookDelivery(payload: unknown): WebhookDelivery {
  const value = typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : {};
  const { eventId, type, instituteId, body } = value;
  const known = WEBHOOK_EVENT_TYPES.find((each) => each === type);
  if (
    typeof eventId !== 'string' ||
    known === undefined ||
    typeof instituteId !== 'number' ||
    !Number.isInteger(instituteId) ||
    typeof body !== 'string'
  ) {
    throw new TypeError(`a ${WEBHOOK_DELIVER_JOB} job needs {eventId, type, instituteId, body}`);
  }
  return { eventId, type: known, instituteId, body };
}
