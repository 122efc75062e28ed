import type { ExamEmailDeliveries } from '../../domain/student-sessions/email-deliveries.service.ts';
import { isoTime } from '../time.ts';

/** The V3 JSON of an exam's email deliveries (docs/mail.md, "Delivery of the exam emails"). */
export function presentEmailDeliveriesV3(deliveries: ExamEmailDeliveries) {
  return {
    mail_server_configured: deliveries.mailServerConfigured,
    counts: { ...deliveries.counts },
    students: deliveries.sessions.map((session) => ({
      student_session_id: session.studentSessionId,
      room_url: session.roomUrl,
      email:
        session.email === undefined
          ? null
          : {
              outbox_id: session.email.outboxId,
              delivery: session.email.state,
              status: session.email.status,
              last_error: session.email.lastError,
              created_at: isoTime(session.email.createdAt),
              sent_at: isoTime(session.email.sentAt),
            },
    })),
  };
}
