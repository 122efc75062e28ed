import type { EmailPreview } from '../../domain/student-sessions/email-preview.ts';

/** The V3 preview answer: `{kind, to, subject, text, html, sample}`. */
export function presentEmailPreviewV3(preview: EmailPreview): Record<string, unknown> {
  return {
    kind: preview.kind,
    to: preview.to,
    subject: preview.subject,
    text: preview.text,
    html: preview.html,
    sample: preview.sample,
  };
}
