/**
 * The instruction document as the exam room shows it to a candidate, built in the browser for the
 * console's preview. It follows the room's own rule step by step (src/domain/room/room.ts
 * `instructionsHtml`): plain text is escaped with its line breaks kept, each `[attachment:ID]`
 * placeholder becomes a link named after its file, and the result is reduced to the room's
 * allow-list (src/security/html.ts INSTRUCTIONS_SANITIZE). The room sanitises with sanitize-html on
 * the server; this uses DOMPurify configured with the same tags, attributes and address schemes, so
 * the two can differ only where the two parsers repair broken markup differently
 * (docs/console/exams.md).
 */
import DOMPurify from 'dompurify';

/** An attachment as the preview needs it. */
export interface PreviewAttachment {
  readonly placeholder: string;
  readonly file_name: string;
  readonly url: string;
}

/** The tags the room keeps (INFO_ALLOWED_TAGS + the instruction extras). */
const ALLOWED_TAGS = [
  'p',
  'br',
  'strong',
  'b',
  'em',
  'i',
  'u',
  'ul',
  'ol',
  'li',
  'a',
  'blockquote',
  'code',
  'pre',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'div',
  'span',
  'sub',
  'sup',
  's',
  'small',
  'dl',
  'dt',
  'dd',
  'table',
  'caption',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'th',
  'td',
  'img',
  'figure',
  'figcaption',
];

/** The attributes the room keeps, per tag. */
const ALLOWED_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  a: ['href', 'title', 'target', 'rel'],
  img: ['src', 'alt', 'title', 'width', 'height'],
  th: ['colspan', 'rowspan', 'scope'],
  td: ['colspan', 'rowspan'],
  ol: ['start'],
};

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

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Returns `text` with the five HTML-significant characters escaped. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character] ?? character);
}

/** True when `content` holds a tag, so the room shows it as HTML rather than as plain text. */
export function looksLikeHtml(content: string): boolean {
  return /<\/?[a-z][^>]*>/i.test(content);
}

/** Plain text as the room shows it: escaped, each line break a `<br>`. */
export function textToHtml(text: string): string {
  return escapeHtml(text).replace(/\r?\n/g, '<br>\n');
}

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
    ALLOWED_TAGS,
    ALLOWED_ATTR: [...new Set(Object.values(ALLOWED_ATTRIBUTES).flat())],
    ALLOWED_URI_REGEXP: ALLOWED_URI,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
  });
}
