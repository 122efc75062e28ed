/**
 * The delivery of the exam-link emails as the students screen and the send confirmation show it,
 * read from GET /api/v3/exams/{id}/email_deliveries (docs/mail.md, "Delivery of the exam emails").
 */
import { api, problem } from './api';
import type { paths } from '../../../shared/api-schema';
import { t } from '../../../shared/i18n.svelte.ts';
import { wordsRecord } from './words';

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
export const DELIVERY_WORDS: Readonly<Record<DeliveryState, string>> = wordsRecord({
  queued: 'console.emailDelivery.queued',
  delivered: 'console.emailDelivery.delivered',
  held: 'console.emailDelivery.held',
  failed: 'console.emailDelivery.failed',
});

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
  if (data === undefined) return t('console.emailDelivery.notRead', { reason: problem(error, response) });
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
  if (held > 0 || (queued > 0 && !deliveries.mailServerConfigured)) {
    return {
      title: t('console.emailDelivery.heldTitle', { count: held > 0 ? held : queued }),
      text: t('console.emailDelivery.heldText'),
    };
  }
  if (failed > 0) {
    return {
      title: t('console.emailDelivery.failedTitle', { count: failed }),
      text: t('console.emailDelivery.failedText'),
    };
  }
  return undefined;
}
