import type { OutboxSummary } from '../../domain/mail/outbox.repository.ts';
import type { OutboxMessage } from '../../domain/mail/outbox.ts';
import { isoTime } from '../time.ts';

/** The V3 JSON of an outbox email without its body (the list). */
export function presentOutboxSummaryV3(message: OutboxSummary) {
  return {
    id: message.id,
    institute_id: message.instituteId,
    kind: message.kind,
    to: message.to,
    subject: message.subject,
    status: message.status,
    attempts: message.attempts,
    last_error: message.lastError,
    student_session_id: message.studentSessionId,
    created_at: isoTime(message.createdAt),
    sent_at: isoTime(message.sentAt),
    next_attempt_at: isoTime(message.nextAttemptAt),
  };
}

/** The V3 JSON of one outbox email with its text body (as the service shows it). */
export function presentOutboxMessageV3(message: OutboxMessage) {
  return { ...presentOutboxSummaryV3(message), text: message.text };
}
