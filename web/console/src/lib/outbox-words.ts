/** How the outbox pages name an email's kind and status (docs/mail.md). */

const KINDS: Record<string, string> = {
  exam_link: 'Exam link',
  exam_finished: 'Exam finished',
  staff_invitation: 'Staff invitation',
  password_reset: 'Password reset',
};

const STATUSES: Record<string, string> = {
  pending: 'Waiting to be sent',
  sending: 'Being sent',
  sent: 'Sent',
  held: 'Held (no mail server)',
  failed: 'Failed',
};

/** "Exam link" for `exam_link`; the kind itself when unknown. */
export function kindLabel(kind: string): string {
  return KINDS[kind] ?? kind.replaceAll('_', ' ');
}

/** "Held (no mail server)" for `held`; the status itself when unknown. */
export function statusLabel(status: string): string {
  return STATUSES[status] ?? status;
}

/** Whether an email in `status` may be queued again (held or failed). */
export function redeliverable(status: string): boolean {
  return status === 'held' || status === 'failed';
}

/** The kinds, for a filter. */
export const OUTBOX_KINDS = Object.keys(KINDS);
