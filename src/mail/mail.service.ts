import type { LiveEvents } from '../domain/ports/live-events.ts';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { Db } from '../db/database.ts';
import type { Clock } from '../domain/clock.ts';
import type { ExamStaffService } from '../domain/exams/exam-staff.service.ts';
import { createSendEmailsService, type SendEmailsService } from '../domain/exams/send-emails.service.ts';
import { createEndExamService, type EndExamService } from '../domain/student-sessions/end-exam.service.ts';
import type { JobQueue } from '../domain/ports/jobs.ts';
import { isPlaceholderEmail } from '../domain/lti/placeholder-email.ts';
import type { OutboxMessage } from '../domain/mail/outbox.ts';
import { createOutbox, enqueueDelivery } from '../domain/mail/outbox-writer.ts';
import {
  claimOutboxMessage,
  findOutboxMessage,
  holdOutboxMessage,
  markOutboxSent,
  releaseOutboxMessage,
  requeueOutboxMessages,
} from '../domain/mail/outbox.repository.ts';
import { createSmtpTransport, type MailTransport, smtpResponseCode } from './transport.ts';

/**
 * How long a delivery attempt holds its message (`sending`). Longer than any send can take with the
 * transport's timeouts, so another attempt takes a message over only when its holder is gone.
 */
export const SEND_CLAIM_MS = 2 * 60 * 1000;

/**
 * What one delivery attempt did: `sent` (the SMTP server accepted it), `held` (no SMTP_URL: kept in
 * the outbox), `already_sent` (an earlier attempt sent it: nothing done), `missing` (the message is
 * gone, e.g. with its institute), `rejected` (the server refused it for good, 5xx: marked failed,
 * not retried).
 */
export type DeliveryOutcome = 'sent' | 'held' | 'already_sent' | 'missing' | 'rejected';

/**
 * Mail: the actions whose side effect is an email (send_emails, end_exam), which write it to the
 * outbox in their own transaction, and the delivery of outbox messages by the `mail.deliver` job.
 */
export interface MailService extends SendEmailsService, EndExamService {
  /**
   * Delivers outbox message `outboxId` once: claims it, sends it over SMTP and marks it `sent`; without
   * SMTP_URL marks it `held` and logs it. A message already sent is not sent again. `last` says this
   * is the job's last attempt: a failure then marks the message `failed`. Returns what happened;
   * throws when the send failed and a later attempt should retry (the message is `pending` again,
   * `last_error` says why), or when another attempt holds the message right now.
   */
  deliver(outboxId: number, attempt: { readonly last: boolean }): Promise<DeliveryOutcome>;
  /**
   * Puts every `held` or `failed` message back to `pending` and enqueues its delivery, in one
   * transaction (for an operator, once SMTP works). Returns how many.
   */
  redeliver(): Promise<number>;
}

/** Why a message to an LTI learner's placeholder address was not sent (its `last_error`). */
const PLACEHOLDER_NOT_SENT = 'not sent: placeholder address of an LTI learner whose platform sent no email';

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message === '' ? error.name : error.message;
  return String(error);
}

/** The host Message-IDs are made under: PUBLIC_URL's, which the operator controls. */
function messageIdHost(publicUrl: string): string {
  try {
    return new URL(publicUrl).hostname.replace(/^\[|\]$/g, '') || 'localhost';
  } catch {
    return 'localhost';
  }
}

/**
 * Builds the mail service: the send_emails and end_exam use cases over the outbox, and delivery
 * through nodemailer over `config.smtpUrl` (none when unset: messages are held). `examStaff` decides
 * who may end a session; `liveEvents` tells the live sockets a session was ended. Returns the service; building it opens no connection and throws nothing.
 */
export function createMailService(deps: {
  db: Db;
  clock: Clock;
  config: Config;
  logger: Logger;
  jobs: JobQueue;
  examStaff: Pick<ExamStaffService, 'assertCanEnd'>;
  liveEvents: LiveEvents;
}): MailService {
  const { db, clock, config, jobs, examStaff, liveEvents } = deps;
  const log = deps.logger.child({ component: 'mail' });
  const outbox = createOutbox({ clock, jobs });
  const transport: MailTransport | undefined =
    config.smtpUrl === undefined ? undefined : createSmtpTransport(config.smtpUrl);
  const host = messageIdHost(config.publicUrl);
  const sendEmails = createSendEmailsService({ db, clock, outbox, publicUrl: config.publicUrl });
  const endExam = createEndExamService({ db, clock, outbox, jobs, examStaff, liveEvents });

  /** What the log may say about a message: never its body (the exam link is the room's credential). */
  const about = (message: OutboxMessage) => ({
    outboxId: message.id,
    kind: message.kind,
    to: message.to,
    subject: message.subject,
  });

  /** Why a message could not be claimed; throws when another attempt holds it. */
  async function unclaimed(outboxId: number): Promise<DeliveryOutcome> {
    const current = await findOutboxMessage(db, outboxId);
    if (current === undefined) {
      log.info({ outboxId }, 'mail not delivered: the outbox message is gone');
      return 'missing';
    }
    if (current.status === 'sent') return 'already_sent';
    if (current.status === 'held') return 'held';
    throw new Error(`outbox message ${outboxId} is being sent by another attempt; will look again`);
  }

  async function hold(outboxId: number): Promise<DeliveryOutcome> {
    const held = await holdOutboxMessage(db, outboxId, clock.now());
    if (held === undefined) return unclaimed(outboxId);
    log.info(about(held), 'mail held in the outbox: SMTP_URL is not set');
    return 'held';
  }

  async function send(message: OutboxMessage, smtp: MailTransport, last: boolean): Promise<DeliveryOutcome> {
    // A learner launched from an LMS that sent no email has a made-up address (docs/lti.md): never sent.
    if (isPlaceholderEmail(message.to)) {
      await releaseOutboxMessage(db, message, {
        status: 'failed',
        error: PLACEHOLDER_NOT_SENT,
        now: clock.now(),
      });
      log.info(about(message), 'mail not sent: placeholder address of an LTI learner');
      return 'rejected';
    }
    try {
      await smtp.send({
        from: config.mailFrom,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        messageId: `<invigil-outbox-${message.id}@${host}>`,
      });
    } catch (error) {
      const reason = errorText(error);
      const code = smtpResponseCode(error);
      // A 5xx reply is the server's final word (unknown mailbox, policy); retrying changes nothing.
      const permanent = code !== undefined && code >= 500;
      const status = permanent || last ? 'failed' : 'pending';
      await releaseOutboxMessage(db, message, { status, error: reason, now: clock.now() });
      if (permanent) {
        log.warn({ ...about(message), responseCode: code, err: reason }, 'mail refused by the SMTP server');
        return 'rejected';
      }
      throw new Error(`could not deliver outbox message ${message.id}: ${reason}`, { cause: error });
    }
    // If marking fails (the database is unreachable), the claim runs out and a later attempt sends
    // again: at-least-once delivery, with a stable Message-ID for the recipient's side.
    if (!(await markOutboxSent(db, message, clock.now()))) {
      log.warn(about(message), 'mail sent, but another attempt had taken the message over meanwhile');
    }
    log.info(about(message), 'mail sent');
    return 'sent';
  }

  return {
    sendExamEmails: (actor, examId) => sendEmails.sendExamEmails(actor, examId),
    endExam: (actor, sessionId) => endExam.endExam(actor, sessionId),

    async deliver(outboxId, attempt) {
      if (transport === undefined) return hold(outboxId);
      const now = clock.now();
      const message = await claimOutboxMessage(db, outboxId, { now, until: now + SEND_CLAIM_MS });
      if (message === undefined) return unclaimed(outboxId);
      return send(message, transport, attempt.last);
    },

    redeliver() {
      return db.transaction().execute(async (trx) => {
        const ids = await requeueOutboxMessages(trx, ['held', 'failed'], clock.now());
        for (const id of ids) await enqueueDelivery(jobs, trx, id);
        if (ids.length > 0) log.info({ count: ids.length }, 'held and failed mail queued for delivery again');
        return ids.length;
      });
    },
  };
}
