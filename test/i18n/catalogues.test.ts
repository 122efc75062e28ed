// The message catalogues (messages/<locale>.json) are complete and consistent: every language has
// every English key and no other, each message parses and uses the English message's placeholders
// and tags, every key is used by the code, and every key the code asks for exists.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { allCatalogues, catalogue } from '../../src/i18n/catalogues.ts';
import { LOCALES, PSEUDO_LOCALE } from '../../src/i18n/locales.ts';
import { messageMismatch, pseudoLocalize, Translator } from '../../src/i18n/translate.ts';

const ROOT = new URL('../../', import.meta.url);

/** Every source file of the service and its pages (what may use a message key). */
function sourceFiles(folder: string): string[] {
  return readdirSync(new URL(folder, ROOT), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|svelte|js)$/.test(file) && !file.endsWith('.d.ts'))
    .map((file) => readFileSync(new URL(`${folder}/${file}`, ROOT), 'utf8'));
}

const sources = [...sourceFiles('src'), ...sourceFiles('web')];
/** Every quoted string of the sources that looks like a message key (`room.setup.heading`). */
const quoted = new Set<string>();
/** The keys the code passes to t(), rich() or a translator's t() as literals. */
const asked = new Set<string>();
for (const text of sources) {
  for (const match of text.matchAll(/['"`]([a-z][A-Za-z0-9]*(?:\.[A-Za-z0-9_-]+)+)['"`]/g))
    quoted.add(match[1] ?? '');
  for (const match of text.matchAll(/\b(?:t|rich)\(\s*['"]([a-z][A-Za-z0-9]*(?:\.[A-Za-z0-9_-]+)+)['"]/g))
    asked.add(match[1] ?? '');
}

describe('message catalogues', () => {
  const english = catalogue('en');

  it('has a catalogue for every language, with exactly the English keys', () => {
    for (const [locale, messages] of allCatalogues()) {
      const missing = Object.keys(english).filter((key) => !Object.hasOwn(messages, key));
      const extra = Object.keys(messages).filter((key) => !Object.hasOwn(english, key));
      assert.deepEqual(missing, [], `${locale} lacks these keys`);
      assert.deepEqual(extra, [], `${locale} has keys English does not`);
    }
  });

  it('has messages that parse and use the same placeholders and tags as the English', () => {
    const problems: string[] = [];
    for (const [locale, messages] of allCatalogues())
      for (const [key, message] of Object.entries(messages)) {
        if (message.trim() === '') problems.push(`${locale} ${key}: empty`);
        const mismatch = messageMismatch(message, english[key] ?? message);
        if (mismatch !== undefined) problems.push(`${locale} ${key}: ${mismatch}`);
      }
    assert.deepEqual(problems, []);
  });

  it('formats every message in every language', () => {
    for (const locale of LOCALES) {
      const translator = new Translator(locale, catalogue(locale));
      for (const key of Object.keys(english))
        assert.equal(typeof translator.t(key, sampleValues(key)), 'string');
    }
  });

  it('has no key the code does not use', () => {
    const unused = Object.keys(english).filter((key) => !quoted.has(key));
    assert.deepEqual(unused, []);
  });

  it('has every key the code asks for', () => {
    const unknown = [...asked].filter((key) => !Object.hasOwn(english, key));
    assert.deepEqual(unknown, []);
  });

  it('makes a pseudo-locale of every English message that formats with the same values', () => {
    const pseudo = new Translator(PSEUDO_LOCALE, catalogue(PSEUDO_LOCALE));
    for (const [key, message] of Object.entries(english)) {
      assert.equal(messageMismatch(pseudoLocalize(message), message), undefined, key);
      const text = pseudo.t(key, sampleValues(key));
      assert.ok(text.startsWith('['), `${key}: ${text}`);
    }
  });

  it('keeps each catalogue sorted by key (node scripts/messages.ts sort)', () => {
    for (const locale of LOCALES) {
      const keys = Object.keys(catalogue(locale));
      assert.deepEqual(
        keys,
        [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
        locale,
      );
    }
  });
});

/** Values for every placeholder of a key's English message (numbers for plurals, text otherwise). */
function sampleValues(key: string): Record<string, string | number | Date> {
  const message = catalogue('en')[key] ?? '';
  const values: Record<string, string | number | Date> = {};
  for (const match of message.matchAll(/\{\s*([A-Za-z0-9_]+)\s*(?:,\s*(\w+))?/g)) {
    const [, name = '', type] = match;
    values[name] =
      type === 'plural' || type === 'selectordinal' || type === 'number'
        ? 2
        : type === 'date' || type === 'time'
          ? new Date(0)
          : 'x';
  }
  return values;
}
