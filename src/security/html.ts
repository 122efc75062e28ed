/**
 * Turning what users typed into HTML that is safe to show: escaping plain text, and reducing HTML
 * to an allow-list with sanitize-html (a maintained parser-based sanitiser, not a regex). Used by
 * the emails, the V2 formatting and the candidate room.
 */

import sanitizeHtml from 'sanitize-html';
import {
  escapeHtml,
  INFO_ALLOWED_TAGS,
  INSTRUCTIONS_ALLOWED_ATTRIBUTES,
  INSTRUCTIONS_ALLOWED_TAGS,
  textToHtml,
} from './html-rules.ts';

export { escapeHtml, textToHtml };

const INFO_SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [...INFO_ALLOWED_TAGS],
  allowedAttributes: { a: ['href'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowProtocolRelative: false,
};

/**
 * The instruction document may be richer (headings, tables, images, an exam office's formatting),
 * but keeps no script, style, frame, form or event handler; links open in a new tab without the
 * room as opener, so an instruction link cannot navigate the exam room away.
 */
const INSTRUCTIONS_SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [...INSTRUCTIONS_ALLOWED_TAGS],
  allowedAttributes: Object.fromEntries(
    Object.entries(INSTRUCTIONS_ALLOWED_ATTRIBUTES).map(([tag, names]) => [tag, [...names]]),
  ),
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https', 'data'] },
  allowProtocolRelative: false,
  transformTags: {
    a: sanitizeHtml.simpleTransform('a', { target: '_blank', rel: 'noopener noreferrer' }),
  },
};

/**
 * Returns HTML a student's `individual_info` may carry, reduced to the allow-list (paragraphs, line
 * breaks, emphasis, lists, quotes, code, and links to http, https and mailto addresses only). Scripts,
 * styles, images, event handlers and every other attribute are removed.
 */
export function sanitizeInfoHtml(html: string): string {
  return sanitizeHtml(html, INFO_SANITIZE);
}

/**
 * A student's individual information as markup: sanitised (sanitizeInfoHtml) when flagged as HTML,
 * escaped otherwise. Returns null when there is none (null or blank).
 */
export function individualInfoHtml(info: string | null, isHtml: boolean): string | null {
  if (info === null || info.trim() === '') return null;
  return isHtml ? sanitizeInfoHtml(info) : textToHtml(info);
}

/**
 * Returns an instruction document's HTML reduced to INSTRUCTIONS_SANITIZE: formatting, tables,
 * images and links survive; scripts, styles, frames, forms, event handlers and `javascript:`
 * addresses do not. Links get `target="_blank" rel="noopener noreferrer"`.
 */
export function sanitizeInstructionsHtml(html: string): string {
  return sanitizeHtml(html, INSTRUCTIONS_SANITIZE);
}

/** Returns the readable text of an HTML fragment, for a plain-text part: tags gone, entities decoded. */
export function htmlToText(html: string): string {
  const marked = html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<li\b[^>]*>/gi, '- ')
    .replace(/<\/(p|div|li|ul|ol|blockquote|pre|h[1-6])\s*>/gi, '\n');
  const text = sanitizeHtml(marked, { allowedTags: [], allowedAttributes: {} });
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\u00a0/g, ' ')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
