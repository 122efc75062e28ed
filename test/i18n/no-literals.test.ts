// The web build's components (the candidate pages and the console) say nothing in words of their
// own: every word a reader sees comes from the message catalogues (t(), rich()). Each .svelte file
// under LITERAL_FOLDERS is parsed with Svelte's compiler, and its template text and its static
// reader-facing attributes (aria-label, title, alt, placeholder, label, data-label…) must hold no
// letters; punctuation, spaces and ALLOWED_WORDS pass.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'svelte/compiler';

/** The folders (or single .svelte files) checked, from the repository's root: every page of the web build. */
export const LITERAL_FOLDERS: readonly string[] = ['web'];

/** Words that are the same in every language: the product's name, and the LMS standard's (a column of tool providers). */
export const ALLOWED_WORDS: readonly string[] = ['Invigil', 'LTI'];

/**
 * The attributes a reader (or a screen reader) meets as words; a table cell's data-label is its
 * column's name on a narrow screen (app.css shows it before the value).
 */
const READER_ATTRIBUTES: ReadonlySet<string> = new Set([
  'aria-label',
  'aria-description',
  'aria-roledescription',
  'aria-valuetext',
  'title',
  'alt',
  'placeholder',
  'label',
  'data-label',
]);

/** AST keys that hold JavaScript or styles, never template text. */
const NOT_TEMPLATE: ReadonlySet<string> = new Set([
  'instance',
  'module',
  'css',
  'expression',
  'metadata',
  'parameters',
  'context',
  'key',
  'index',
]);

const ROOT = new URL('../../', import.meta.url);

/** The .svelte files of a folder (recursively), or the file itself. */
function svelteFiles(entry: string): string[] {
  const path = new URL(entry, ROOT);
  if (!statSync(path).isDirectory()) return [entry];
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.svelte'))
    .map((file) => `${entry}/${file}`);
}

/** True when the text holds a letter once the allowed words are taken out. */
function hasWords(text: string): boolean {
  let rest = text;
  for (const word of ALLOWED_WORDS) rest = rest.split(word).join(' ');
  return /\p{L}/u.test(rest);
}

interface Found {
  readonly line: number;
  readonly text: string;
}

/** The literal words of a component's template, with their lines. */
export function literalsOf(source: string): Found[] {
  const found: Found[] = [];
  const lineAt = (offset: number) => source.slice(0, offset).split('\n').length;
  const textOf = (node: { data?: unknown; start?: unknown }): void => {
    if (typeof node.data !== 'string' || !hasWords(node.data)) return;
    found.push({ line: typeof node.start === 'number' ? lineAt(node.start) : 0, text: node.data.trim() });
  };
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const node = value as Record<string, unknown>;
    if (node.type === 'Comment') return;
    if (node.type === 'Text') {
      textOf(node);
      return;
    }
    if (node.type === 'Attribute') {
      if (typeof node.name === 'string' && READER_ATTRIBUTES.has(node.name) && Array.isArray(node.value))
        for (const part of node.value as Record<string, unknown>[]) if (part.type === 'Text') textOf(part);
      return;
    }
    for (const [key, child] of Object.entries(node)) if (!NOT_TEMPLATE.has(key)) walk(child);
  };
  walk(parse(source, { modern: true }).fragment);
  return found;
}

describe('web components without literal words', () => {
  it('finds words in a template and a label, and lets markup, expressions and the product name pass', () => {
    const found = literalsOf(
      '<script>const a = "Words in code";</script>\n<p class="x" id="y">Hello {a}</p>\n' +
        '<img alt="A photo" src="x.png" />\n<b title={a}>: {a} — Invigil</b>\n<!-- a comment -->\n' +
        '<style>p { color: red; }</style>',
    );
    assert.deepEqual(found, [
      { line: 2, text: 'Hello' },
      { line: 3, text: 'A photo' },
    ]);
  });

  for (const entry of LITERAL_FOLDERS) {
    it(`has no literal words in ${entry}`, () => {
      const problems: string[] = [];
      const files = svelteFiles(entry);
      assert.ok(files.length > 0, `no .svelte file in ${entry}`);
      for (const file of files) {
        const source = readFileSync(new URL(file, ROOT), 'utf8');
        for (const { line, text } of literalsOf(source)) problems.push(`${file}:${line}: ${text}`);
      }
      assert.deepEqual(problems, []);
    });
  }
});
