/**
 * The delivery of the exam-link emails as the students screen and the send confirmation show it,
 * read from GET /api/v3/exams/{id}/email_deliveries (docs/mail.md, "Delivery of the exam emails").
 */
import { api, problem } from './api';
import type { paths } from '../../../shared/api-schema';

type Answer =
  paths['/api/v3/exams/{id}/email_deliveries']['get']['responses'][200]['content']['application/json'];

/** One student's room link and newest exam-link email (null: none written). */
export type StudentDelivery = Answer['students'][number];
export type DeliveryCounts = Answer['counts'];
export type DeliveryState = keyof DeliveryCounts;

/** What the screen knows of an exam's email delivery. */
export interface ExamDeliveries {
  readonly mailServerConfigured: boolean;
  readonly counts: DeliveryCounts;
  /** By student session id. */
  readonly students: ReadonlyMap<number, StudentDelivery>;
}

/** The most ids one call may name (the service's limit). */
const MAX_IDS = 300;

/** The delivery state in words, for a badge beside a student. */
export const DELIVERY_WORDS: Readonly<Record<DeliveryState, string>> = {
  queued: 'Email queued',
  delivered: 'Email delivered',
  held: 'Email held',
  failed: 'Email failed',
};

/**
 * Reads the counts over the exam and the deliveries of the sessions `ids` names (the first 300).
 * Returns them, or a sentence saying what went wrong.
 */
export async function loadDeliveries(
  examId: number,
  ids: readonly number[],
): Promise<ExamDeliveries | string> {
  const wanted = ids.slice(0, MAX_IDS);
  const { data, error, response } = await api.GET('/api/v3/exams/{id}/email_deliveries', {
    params: {
      path: { id: examId },
      query: wanted.length === 0 ? {} : { student_session_ids: wanted.join(',') },
    },
  });
  if (data === undefined) return `The email deliveries could not be read. ${problem(error, response)}`;
  return {
    mailServerConfigured: data.mail_server_configured,
    counts: data.counts,
    students: new Map(data.students.map((student) => [student.student_session_id, student])),
  };
}

/** One warning about emails that did not go out, with what to do. */
export interface DeliveryWarning {
  readonly title: string;
  readonly text: string;
}

/**
 * What the banner says when emails are held or failing, or when the service has no mail server and
 * emails are still queued (they will be held). Undefined when nothing needs saying.
 */
export function deliveryWarning(deliveries: ExamDeliveries): DeliveryWarning | undefined {
  const { held, failed, queued } = deliveries.counts;
  const copy =
    "Until then, copy each student's room link (Copy link on their row) and send it to them yourself.";
  if (held > 0 || (queued > 0 && !deliveries.mailServerConfigured)) {
    const count = held > 0 ? held : queued;
    return {
      title: `${count} exam ${count === 1 ? 'email is' : 'emails are'} held, not sent`,
      text:
        'This service has no mail server configured (SMTP_URL is not set), so exam emails are kept in the ' +
        'outbox instead of being sent. Ask your administrator to set SMTP_URL and then redeliver the held ' +
        `emails (Outbox, or invigil mail redeliver). ${copy}`,
    };
  }
  if (failed > 0) {
    return {
      title: `${failed} exam ${failed === 1 ? 'email' : 'emails'} could not be delivered`,
      text:
        'The mail server refused them or could not be reached (the Outbox shows the reason). Ask your ' +
        `administrator to check the mail server and redeliver them from the Outbox. ${copy}`,
    };
  }
  return undefined;
}
