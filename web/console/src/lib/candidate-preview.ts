/**
 * The instruction document as the exam room shows it to a candidate, built in the browser for the
 * console's preview. It follows the room's own rule step by step (src/domain/room/room.ts
 * `instructionsHtml`): plain text is escaped with its line breaks kept, each `[attachment:ID]`
 * placeholder becomes a link named after its file, and the result is reduced to the room's
 * allow-list (src/security/html-rules.ts, read by both). The room sanitises with sanitize-html on
 * the server; this uses DOMPurify configured with the same tags, attributes and address schemes, so
 * the two can differ only where the two parsers repair broken markup differently
 * (docs/console/exams.md).
 */
import DOMPurify from 'dompurify';
import {
  escapeHtml,
  INSTRUCTIONS_ALLOWED_ATTRIBUTES as ALLOWED_ATTRIBUTES,
  INSTRUCTIONS_ALLOWED_TAGS,
  looksLikeHtml,
  textToHtml,
} from '../../../../src/security/html-rules.ts';

export { looksLikeHtml, textToHtml };

/** An attachment as the preview needs it. */
export interface PreviewAttachment {
  readonly placeholder: string;
  readonly file_name: string;
  readonly url: string;
}

/** http, https and mailto addresses, and addresses without a scheme (as sanitize-html allows them). */
const ALLOWED_URI = /^(?:(?:https?|mailto):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i;

const purifier = DOMPurify(window);
purifier.addHook('uponSanitizeAttribute', (node, data) => {
  const allowed = ALLOWED_ATTRIBUTES[node.nodeName.toLowerCase()] ?? [];
  if (!allowed.includes(data.attrName)) data.keepAttr = false;
  // sanitize-html refuses protocol-relative addresses (allowProtocolRelative: false).
  if ((data.attrName === 'href' || data.attrName === 'src') && /^\s*\/\//.test(data.attrValue)) {
    data.keepAttr = false;
  }
});
purifier.addHook('afterSanitizeAttributes', (node) => {
  // The room opens every instruction link in a new tab without access to the exam room.
  if (node.nodeName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/** Returns the HTML a candidate's exam room would show for `content` with `attachments`. */
export function candidatePreviewHtml(content: string, attachments: readonly PreviewAttachment[]): string {
  const markup = looksLikeHtml(content) ? content : textToHtml(content);
  const linked = attachments.reduce(
    (html, attachment) =>
      html
        .split(attachment.placeholder)
        .join(`<a href="${escapeHtml(attachment.url)}">${escapeHtml(attachment.file_name)}</a>`),
    markup,
  );
  return purifier.sanitize(linked, {
    ALLOWED_TAGS: [...INSTRUCTIONS_ALLOWED_TAGS],
    ALLOWED_ATTR: [...new Set(Object.values(ALLOWED_ATTRIBUTES).flat())],
    ALLOWED_URI_REGEXP: ALLOWED_URI,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
  });
}
