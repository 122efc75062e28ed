import { escapeHtml } from '../../security/html.ts';

/**
 * V2 returns free text as HTML the way Rails' simple_format did: every other markup escaped, blank
 * lines separate paragraphs, single newlines become <br />. Null or empty text gives `<p></p>`.
 */
export function simpleFormat(text: string | null): string {
  const normalized = (text ?? '').replace(/\r\n?/g, '\n').trim();
  if (normalized === '') return '<p></p>';
  return normalized
    .split(/\n\s*\n/)
    .map((paragraph) => `<p>${escapeHtml(paragraph).replace(/\n/g, '\n<br />')}</p>`)
    .join('\n\n');
}
