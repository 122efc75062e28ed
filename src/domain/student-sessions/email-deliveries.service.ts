import type { Db } from '../../db/database.ts';
import { DELIVERY_STATES, type DeliveryState, deliveryStateOf, type OutboxStatus } from '../mail/outbox.ts';
import { examLinkStatusCounts, latestExamLinkDeliveries } from '../mail/outbox.repository.ts';
import type { Actor } from '../access.ts';
import { Invalid } from '../errors.ts';
import { roomUrl } from '../exams/send-emails.service.ts';
import { findVisibleExam } from '../exams/exam-access.ts';
import { optionalString, type Params } from '../input.ts';
import { findSessionTokens } from './email-deliveries.repository.ts';

/** The most sessions one call may name (the console's largest page). */
export const MAX_DELIVERY_SESSIONS = 300;

/** One session's exam link and the delivery of the newest email that carried it. */
export interface SessionDelivery {
  readonly studentSessionId: number;
  /** `{PUBLIC_URL}/room/<token>`: what the exam-link email carries, for staff to pass on by hand. */
  readonly roomUrl: string;
  /** The newest exam-link email of the session; undefined when none was written. */
  readonly email:
    | {
        readonly outboxId: number;
        readonly state: DeliveryState;
        readonly status: OutboxStatus;
        readonly lastError: string | null;
        readonly createdAt: number;
        readonly sentAt: number | null;
      }
    | undefined;
}

/** The delivery of an exam's emails as its students screen shows it. */
export interface ExamEmailDeliveries {
  /** Whether this process has SMTP_URL (the worker that delivers decides; usually the same config). */
  readonly mailServerConfigured: boolean;
  /** How many unarchived sessions have their newest exam-link email in each delivery state. */
  readonly counts: Readonly<Record<DeliveryState, number>>;
  /** The sessions `student_session_ids` named that belong to the exam, by id ascending. */
  readonly sessions: readonly SessionDelivery[];
}

/** The exam-link emails of an exam's students, read from the outbox (docs/mail.md). */
export interface EmailDeliveriesService {
  /**
   * The counts by delivery state over the exam, and for each session of the exam that
   * `student_session_ids` (params: comma-separated ids, at most MAX_DELIVERY_SESSIONS) names, its
   * room link and its newest exam-link email. Anyone who may read the exam's student sessions (and
   * so their tokens) may read this. Returns it; throws NotFound (Exam) or Invalid
   * (`student_session_ids`).
   */
  read(actor: Actor, examId: string | number, params: Params): Promise<ExamEmailDeliveries>;
}

/** Reads `student_session_ids`: none (absent or empty), or distinct positive ids. Throws Invalid. */
function readSessionIds(params: Params): number[] {
  const sent = optionalString(params, 'student_session_ids');
  if (sent === undefined || sent === null || sent.trim() === '') return [];
  const parts = sent.split(',').map((part) => part.trim());
  if (parts.length > MAX_DELIVERY_SESSIONS) {
    throw new Invalid('student_session_ids', `names more than ${MAX_DELIVERY_SESSIONS} sessions`);
  }
  const ids = parts.map((part) => (/^[1-9][0-9]{0,14}$/.test(part) ? Number(part) : Number.NaN));
  if (ids.some((id) => !Number.isSafeInteger(id))) throw new Invalid('student_session_ids', 'is invalid');
  return [...new Set(ids)];
}

/** Builds the service over the database, the public address and whether SMTP is configured. */
export function createEmailDeliveriesService(deps: {
  db: Db;
  publicUrl: string;
  mailServerConfigured: boolean;
}): EmailDeliveriesService {
  const { db, publicUrl, mailServerConfigured } = deps;
  return {
    async read(actor, examId, params) {
      const exam = await findVisibleExam(db, actor, examId);
      const ids = readSessionIds(params);
      const scope = { examId: exam.id, instituteId: exam.instituteId };
      const [tokens, emails, statusCounts] = await Promise.all([
        findSessionTokens(db, exam.id, ids),
        latestExamLinkDeliveries(db, { ...scope, sessionIds: ids }),
        examLinkStatusCounts(db, scope),
      ]);
      const counts = Object.fromEntries(DELIVERY_STATES.map((state) => [state, 0])) as Record<
        DeliveryState,
        number
      >;
      for (const [status, count] of Object.entries(statusCounts) as [OutboxStatus, number][]) {
        counts[deliveryStateOf(status)] += count;
      }
      const byId = new Map(emails.map((email) => [email.studentSessionId, email]));
      const sessions = tokens.map(({ id, token }): SessionDelivery => {
        const email = byId.get(id);
        return {
          studentSessionId: id,
          roomUrl: roomUrl(publicUrl, token),
          email:
            email === undefined
              ? undefined
              : {
                  outboxId: email.outboxId,
                  state: deliveryStateOf(email.status),
                  status: email.status,
                  lastError: email.lastError,
                  createdAt: email.createdAt,
                  sentAt: email.sentAt,
                },
        };
      });
      return { mailServerConfigured, counts, sessions };
    },
  };
}
