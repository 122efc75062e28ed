/**
 * The rules for showing what users typed as HTML, without dependencies so the server's sanitiser
 * (src/security/html.ts, sanitize-html) and the console's preview of the candidate room
 * (web/console/src/lib/candidate-preview.ts, DOMPurify) read the same ones: escaping, and the tags and
 * attributes each kind of text may keep.
 */

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Returns `text` with the five HTML-significant characters escaped (safe in text and attributes). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character] ?? character);
}

/** Returns plain text as HTML: escaped, line breaks kept as `<br>`. */
export function textToHtml(text: string): string {
  return escapeHtml(text).replace(/\r?\n/g, '<br>\n');
}

/**
 * True when `content` holds markup (a tag), so an instruction document is shown as HTML rather than
 * as plain text (the room's rule).
 */
export function looksLikeHtml(content: string): boolean {
  return /<\/?[a-z][^>]*>/i.test(content);
}

/** The tags a student's individual information flagged as HTML may keep; everything else is dropped. */
export const INFO_ALLOWED_TAGS: readonly string[] = [
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
];

/** The tags an instruction document may keep: the individual information's, and richer formatting. */
export const INSTRUCTIONS_ALLOWED_TAGS: readonly string[] = [
  ...INFO_ALLOWED_TAGS,
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

/** The attributes an instruction document keeps, per tag; every other attribute is dropped. */
export const INSTRUCTIONS_ALLOWED_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  a: ['href', 'title', 'target', 'rel'],
  img: ['src', 'alt', 'title', 'width', 'height'],
  th: ['colspan', 'rowspan', 'scope'],
  td: ['colspan', 'rowspan'],
  ol: ['start'],
};
