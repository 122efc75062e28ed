// The language core (src/i18n): choosing a reader's language, formatting messages with formatjs
// (plurals, tags, overrides, a broken override), the pseudo-locale, and times with their zone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatClockTime, formatDateTime, formatSize } from '../../src/i18n/dates.ts';
import {
  acceptedLanguages,
  allowedLocales,
  chooseLocale,
  localeOfTag,
  PSEUDO_LOCALE,
  textDirection,
} from '../../src/i18n/locales.ts';
import { messageMismatch, messageShape, pseudoLocalize, Translator } from '../../src/i18n/translate.ts';

describe('choosing a language', () => {
  it('reads Accept-Language best first, ties in order, q=0 dropped, at most 32 ranges', () => {
    assert.deepEqual(acceptedLanguages('fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5'), [
      'fr-CH',
      'fr',
      'en',
      'de',
      '*',
    ]);
    assert.deepEqual(acceptedLanguages('de;q=0, nl;q=0.5, es'), ['es', 'nl']);
    assert.deepEqual(acceptedLanguages('xx;q=abc, it'), ['it']);
    assert.deepEqual(acceptedLanguages(undefined), []);
    assert.equal(acceptedLanguages(Array.from({ length: 500 }, () => 'nl').join(',')).length, 32);
  });

  it('takes the first source naming an allowed language: pick, student, exam, institute, browser, English', () => {
    const all = { choice: 'it', student: 'de', exam: 'fr', institute: 'es', acceptLanguage: 'nl' };
    assert.equal(chooseLocale(all), 'it');
    assert.equal(chooseLocale({ ...all, choice: null }), 'de');
    assert.equal(chooseLocale({ ...all, choice: null, student: null }), 'fr');
    assert.equal(chooseLocale({ institute: 'es', acceptLanguage: 'nl' }), 'es');
    assert.equal(chooseLocale({ acceptLanguage: 'pt-BR, nl-BE;q=0.8' }), 'nl');
    assert.equal(chooseLocale({ acceptLanguage: 'pt' }), 'en');
    // An exam's list restricts every rung; without English in it, its first language is the last resort.
    assert.equal(chooseLocale({ ...all, allowed: ['es', 'ar'] }), 'es');
    assert.equal(chooseLocale({ acceptLanguage: 'de', allowed: ['ar', 'fr'] }), 'fr');
    assert.equal(chooseLocale({ acceptLanguage: 'de', allowed: ['fr', 'ar'] }), 'fr');
  });

  it('offers the pseudo-locale only when asked to', () => {
    assert.equal(chooseLocale({ choice: 'en-XA' }), 'en');
    assert.equal(chooseLocale({ choice: 'en-xa', pseudo: true }), PSEUDO_LOCALE);
  });

  it('reads stored tags by their primary language, and lists allowed languages in the service order', () => {
    assert.equal(localeOfTag('de_CH'), 'de');
    assert.equal(localeOfTag('pt-BR'), undefined);
    assert.deepEqual(allowedLocales(['ar', 'nl-BE']), ['nl', 'ar']);
    assert.deepEqual(allowedLocales([]), ['en', 'nl', 'de', 'fr', 'es', 'it', 'ar']);
    assert.equal(textDirection('ar'), 'rtl');
    assert.equal(textDirection('nl'), 'ltr');
  });
});

describe('formatting messages', () => {
  const messages = {
    parts: '{count, plural, one {# part is} other {# parts are}} waiting for {name}.',
    rules: 'Read <rules>the rules</rules> first.',
  };

  it('fills placeholders and plurals, and keeps a tag’s text in t()', () => {
    const english = new Translator('en', messages);
    assert.equal(english.t('parts', { count: 1, name: 'Ada' }), '1 part is waiting for Ada.');
    assert.equal(english.t('parts', { count: 3, name: 'Ada' }), '3 parts are waiting for Ada.');
    assert.equal(english.t('rules'), 'Read the rules first.');
    assert.deepEqual(english.rich('rules'), ['Read ', { tag: 'rules', text: 'the rules' }, ' first.']);
  });

  it('shows the key for a missing message or value, never throws', () => {
    const english = new Translator('en', messages);
    assert.equal(english.t('absent'), 'absent');
    assert.equal(english.t('parts'), 'parts');
  });

  it('lays an override over the catalogue, and falls back when the override does not parse', () => {
    const overridden = new Translator('en', messages, { rules: 'Please read <rules>our rules</rules>.' });
    assert.equal(overridden.t('rules'), 'Please read our rules.');
    const broken = new Translator('en', messages, { rules: 'Read {oops' });
    assert.equal(broken.t('rules'), 'Read the rules first.');
  });

  it('names what a message needs and what a replacement gets wrong, in plain words', () => {
    assert.deepEqual([...messageShape(messages.parts).placeholders].sort(), ['count', 'name']);
    assert.deepEqual([...messageShape(messages.rules).tags], ['rules']);
    assert.equal(messageMismatch('{count, plural, other {# x}} {name}', messages.parts), undefined);
    assert.equal(
      messageMismatch('{total} waiting', messages.parts),
      'The message has missing placeholder {count}, {name}; unknown placeholder {total}.',
    );
    assert.equal(
      messageMismatch('Read the {oops', messages.rules),
      'The message cannot be read: a `{` is not closed by a `}` (at character 10).',
    );
    assert.equal(messageMismatch('Read the rules', messages.rules), 'The message has missing tag <rules>.');
  });

  it('makes a pseudo-locale that is accented, longer, bracketed, and formats with the same values', () => {
    const pseudo = pseudoLocalize(messages.parts);
    assert.equal(messageMismatch(pseudo, messages.parts), undefined);
    const text = new Translator(PSEUDO_LOCALE, { parts: pseudo }).t('parts', { count: 2, name: 'Ada' });
    assert.match(text, /^\[.*Ada.*\]$/);
    assert.match(text, /þáŕţš/);
    assert.ok(text.length > '2 parts are waiting for Ada.'.length * 1.3, text);
  });
});

describe('times and sizes', () => {
  const at = Date.UTC(2026, 10, 30, 8, 0);

  it('writes a time in the reader’s language and the exam’s zone, with the zone named', () => {
    assert.equal(formatDateTime(at, 'de', 'Europe/Berlin'), '30. November 2026 um 09:00 MEZ');
    assert.equal(formatDateTime(at, 'nl', 'UTC'), '30 november 2026 om 08:00 UTC');
    // An offset-only zone name gets the place beside it.
    assert.equal(formatClockTime(at, 'en', 'Asia/Kolkata'), '1:30 PM GMT+5:30 (Asia/Kolkata)');
    // An unknown zone falls back to the runtime's own zone rather than failing.
    assert.ok(formatDateTime(at, 'en', 'Mars/Olympus').length > 0);
  });

  it('writes sizes in the reader’s language', () => {
    assert.equal(formatSize(512, 'en'), '512 byte');
    assert.equal(formatSize(2_600_000, 'de'), '2,5 MB');
    assert.match(formatSize(2_600_000, 'fr'), /^2,5\sMo$/u);
  });
});
