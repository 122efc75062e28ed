/** How the outbox pages name an email's kind and status (docs/mail.md). */
import { t } from '../../../shared/i18n.svelte.ts';

const KINDS: Record<string, string> = {
  exam_link: 'console.outboxWords.kindExamLink',
  exam_finished: 'console.outboxWords.kindExamFinished',
  staff_invitation: 'console.outboxWords.kindStaffInvitation',
  password_reset: 'console.outboxWords.kindPasswordReset',
};

const STATUSES: Record<string, string> = {
  pending: 'console.outboxWords.statusPending',
  sending: 'console.outboxWords.statusSending',
  sent: 'console.outboxWords.statusSent',
  held: 'console.outboxWords.statusHeld',
  failed: 'console.outboxWords.statusFailed',
};

/** "Exam link" for `exam_link`; the kind itself when unknown. */
export function kindLabel(kind: string): string {
  const key = KINDS[kind];
  return key === undefined ? kind.replaceAll('_', ' ') : t(key);
}

/** "Held (no mail server)" for `held`; the status itself when unknown. */
export function statusLabel(status: string): string {
  const key = STATUSES[status];
  return key === undefined ? status : t(key);
}

/** Whether an email in `status` may be queued again (held or failed). */
export function redeliverable(status: string): boolean {
  return status === 'held' || status === 'failed';
}

/** The kinds, for a filter. */
export const OUTBOX_KINDS = Object.keys(KINDS);
