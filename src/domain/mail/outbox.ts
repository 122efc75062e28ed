import type { RenderedMail } from './templates.ts';

/**
 * The outbox's vocabulary. Every email is a row of `outbox`, written in the transaction of the change
 * that causes it together with the `mail.deliver` job that sends it (docs/mail.md).
 *
 * - `pending`: written, waiting for its job.
 * - `sending`: an attempt has claimed it until `next_attempt_at`; past that, a later attempt may
 *   claim it again (the earlier one crashed, or its worker lost the job).
 * - `sent`: the SMTP server accepted it (`sent_at`). Final.
 * - `held`: no SMTP_URL was configured where the job ran; kept, not sent, until redelivered.
 * - `failed`: the SMTP server refused it for good (5xx), or every attempt of its job failed.
 */
export const OUTBOX_STATUSES = ['pending', 'sending', 'sent', 'held', 'failed'] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

/**
 * The status filter of an outbox listing, the one definition for `GET /api/v3/outbox?status=` and
 * `invigil mail list --status`: each status names itself, and `queued` the two on their way
 * (`pending`, `sending`), the word an operator looks for. The order is the one documented.
 */
export const OUTBOX_STATUS_FILTERS = {
  held: ['held'],
  failed: ['failed'],
  sent: ['sent'],
  queued: ['pending', 'sending'],
  pending: ['pending'],
  sending: ['sending'],
} as const satisfies Readonly<Record<string, readonly OutboxStatus[]>>;
export type OutboxStatusFilter = keyof typeof OUTBOX_STATUS_FILTERS;

/** The names OUTBOX_STATUS_FILTERS accepts, in its order. */
export const OUTBOX_STATUS_FILTER_NAMES = Object.keys(OUTBOX_STATUS_FILTERS) as readonly OutboxStatusFilter[];

/** The statuses a filter name stands for, or undefined for a name that is not one. Returns them. */
export function outboxStatusesOf(name: string): readonly OutboxStatus[] | undefined {
  return Object.hasOwn(OUTBOX_STATUS_FILTERS, name)
    ? OUTBOX_STATUS_FILTERS[name as OutboxStatusFilter]
    : undefined;
}

/**
 * An email's delivery as staff read it beside a student (docs/mail.md, "Delivery of the exam
 * emails"): `queued` (pending or sending), `delivered` (sent), `held` (no mail server) or `failed`.
 */
export const DELIVERY_STATES = ['queued', 'delivered', 'held', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** The delivery state of an outbox status. Returns it; throws nothing. */
export function deliveryStateOf(status: OutboxStatus): DeliveryState {
  if (status === 'sent') return 'delivered';
  if (status === 'held' || status === 'failed') return status;
  return 'queued';
}

/** The kinds of email, one per template. */
export const MAIL_KINDS = [
  'exam_link',
  'exam_finished',
  'staff_invitation',
  'password_reset',
  'practice_reminder',
  'verdict_notice',
  'appeal_decision',
  'candidate_data_code',
] as const;
export type MailKind = (typeof MAIL_KINDS)[number];

/** The job kind that delivers one outbox message. */
export const MAIL_DELIVER_JOB = 'mail.deliver';

/**
 * Attempts a delivery job gets. With the queue's backoff (2^attempt s, at most an hour, jittered into
 * the upper half of each interval) 15 attempts span roughly two to four hours of SMTP outage.
 */
export const MAIL_MAX_ATTEMPTS = 15;

/** A row of the outbox, as the delivery reads it. Times are epoch milliseconds. */
export interface OutboxMessage {
  readonly id: number;
  readonly kind: string;
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  readonly status: OutboxStatus;
  /** Delivery attempts that claimed it. */
  readonly attempts: number;
  /** Pending: when it was written or last released; sending: when the claim runs out. */
  readonly nextAttemptAt: number;
  readonly lastError: string | null;
  readonly studentSessionId: number | null;
  readonly createdAt: number;
  readonly sentAt: number | null;
  /** The institute the email belongs to: whose administrators read it (null: superusers only). */
  readonly instituteId: number | null;
}

/** An email to write. */
export interface NewMail {
  readonly kind: MailKind;
  readonly to: string;
  readonly message: RenderedMail;
  /** The session the email is about, if any (kept for support; set null when the session goes). */
  readonly studentSessionId: number | null;
  /**
   * The institute the email belongs to. Left out, it is the institute of the student session's exam
   * (none without a session); a staff email names its user's.
   */
  readonly instituteId?: number | null;
}

/** The payload of a `mail.deliver` job. */
export interface DeliveryPayload {
  readonly outboxId: number;
}

/** Reads a `mail.deliver` payload. Returns it; throws a TypeError naming what is wrong. */
export function parseDeliveryPayload(payload: unknown): DeliveryPayload {
  if (typeof payload !== 'object' || payload === null)
    throw new TypeError('mail.deliver payload is not an object');
  const { outboxId } = payload as { outboxId?: unknown };
  if (typeof outboxId !== 'number' || !Number.isSafeInteger(outboxId) || outboxId < 1) {
    throw new TypeError('mail.deliver payload has no valid outboxId');
  }
  return { outboxId };
}
