/**
 * Turns catalogue messages (ICU MessageFormat, formatted by formatjs' intl-messageformat) into the
 * text a reader sees. Pure: the server (emails, the PDF report, its own pages) and the browser pages
 * import it alike; where the messages come from is the caller's business (src/i18n/catalogues.ts
 * reads messages/ on the server, the web build splits them per page and language).
 */
import {
  isArgumentElement,
  isDateElement,
  isLiteralElement,
  isNumberElement,
  isPluralElement,
  isPoundElement,
  isSelectElement,
  isTagElement,
  isTimeElement,
  parse,
  type MessageFormatElement,
} from '@formatjs/icu-messageformat-parser';
import { printAST } from '@formatjs/icu-messageformat-parser/printer.js';
import { IntlMessageFormat, type PrimitiveType } from 'intl-messageformat';
import { PSEUDO_LOCALE } from './locales.ts';

/** A catalogue: message keys (`room.setup.heading`) to ICU messages. */
export type Messages = Readonly<Record<string, string>>;

/** The values a message's placeholders take. */
export type MessageValues = Readonly<Record<string, PrimitiveType>>;

/** A piece of a message with tags (`Read <link>the rules</link>`): text, or a tag around text. */
export type RichPart = string | { readonly tag: string; readonly text: string };

/** A message that could not be parsed, with the parser's reason. */
export class BrokenMessage extends Error {
  override readonly name = 'BrokenMessage';
}

/** The parser's error kinds (ErrorKind of @formatjs/icu-messageformat-parser) in plain words. */
const PARSE_PROBLEMS: Readonly<Record<string, string>> = {
  EXPECT_ARGUMENT_CLOSING_BRACE: 'a `{` is not closed by a `}`',
  EMPTY_ARGUMENT: 'a placeholder `{}` has no name',
  MALFORMED_ARGUMENT: 'a placeholder’s name is not a plain word',
  EXPECT_ARGUMENT_TYPE: 'a comma after a placeholder’s name is not followed by a type',
  INVALID_ARGUMENT_TYPE:
    'a placeholder’s type is not one of number, date, time, select, plural, selectordinal',
  EXPECT_ARGUMENT_STYLE: 'a placeholder’s style is missing after its comma',
  INVALID_NUMBER_SKELETON: 'a number format is not valid',
  INVALID_DATE_TIME_SKELETON: 'a date or time format is not valid',
  EXPECT_NUMBER_SKELETON: 'a number format is missing after `::`',
  EXPECT_DATE_TIME_SKELETON: 'a date or time format is missing after `::`',
  UNCLOSED_QUOTE_IN_ARGUMENT_STYLE: 'an apostrophe in a placeholder’s style is not closed',
  EXPECT_SELECT_ARGUMENT_OPTIONS: 'a select has no options',
  EXPECT_PLURAL_ARGUMENT_OFFSET_VALUE: 'a plural’s offset has no value',
  INVALID_PLURAL_ARGUMENT_OFFSET_VALUE: 'a plural’s offset is not a number',
  EXPECT_SELECT_ARGUMENT_SELECTOR: 'a select has no choices',
  EXPECT_PLURAL_ARGUMENT_SELECTOR: 'a plural has no choices',
  EXPECT_SELECT_ARGUMENT_SELECTOR_FRAGMENT: 'a select’s choice has no `{text}` after it',
  EXPECT_PLURAL_ARGUMENT_SELECTOR_FRAGMENT: 'a plural’s choice has no `{text}` after it',
  INVALID_PLURAL_ARGUMENT_SELECTOR: 'a plural’s choice is not one of zero, one, two, few, many, other or =N',
  DUPLICATE_PLURAL_ARGUMENT_SELECTOR: 'a plural names the same choice twice',
  DUPLICATE_SELECT_ARGUMENT_SELECTOR: 'a select names the same choice twice',
  MISSING_OTHER_CLAUSE: 'a plural or select has no `other` choice',
  INVALID_TAG: 'a tag is not written as `<name>…</name>`',
  INVALID_TAG_NAME: 'a tag’s name is not valid',
  UNMATCHED_CLOSING_TAG: 'a closing tag does not match the tag it closes',
  UNCLOSED_TAG: 'a tag is not closed',
};

/** The parsed form of a message (throws BrokenMessage with the reason in plain words and where). */
function parseMessage(message: string): MessageFormatElement[] {
  try {
    return parse(message);
  } catch (error) {
    const kind = error instanceof Error ? error.message : String(error);
    const offset = (error as { location?: { start?: { offset?: number } } }).location?.start?.offset;
    const where = typeof offset === 'number' ? ` (at character ${offset + 1})` : '';
    throw new BrokenMessage(`${PARSE_PROBLEMS[kind] ?? kind}${where}`);
  }
}

/** What a message needs from its caller: its placeholders' names and its tags' names. */
export interface MessageShape {
  readonly placeholders: ReadonlySet<string>;
  readonly tags: ReadonlySet<string>;
}

/** The placeholders and tags a message uses (throws BrokenMessage when it does not parse). */
export function messageShape(message: string): MessageShape {
  return shapeOf(parseMessage(message));
}

function shapeOf(elements: readonly MessageFormatElement[]): MessageShape {
  const placeholders = new Set<string>();
  const tags = new Set<string>();
  const walk = (elements: readonly MessageFormatElement[]): void => {
    for (const element of elements) {
      if (isLiteralElement(element) || isPoundElement(element)) continue;
      if (isTagElement(element)) {
        tags.add(element.value);
        walk(element.children);
        continue;
      }
      placeholders.add(element.value);
      if (isSelectElement(element) || isPluralElement(element))
        for (const option of Object.values(element.options)) walk(option.value);
    }
  };
  walk(elements);
  return { placeholders, tags };
}

/**
 * Why `message` may not stand in for `reference` (a translation for the English, an institute's
 * override for the catalogue's), or undefined when it may: it must parse and use the same
 * placeholders and tags.
 */
export function messageMismatch(message: string, reference: string): string | undefined {
  let shape: MessageShape;
  try {
    shape = messageShape(message);
  } catch (error) {
    return error instanceof BrokenMessage ? `The message cannot be read: ${error.message}.` : String(error);
  }
  const wanted = messageShape(reference);
  const differences: string[] = [];
  const compare = (
    kind: string,
    have: ReadonlySet<string>,
    want: ReadonlySet<string>,
    wrap: (name: string) => string,
  ) => {
    const missing = [...want].filter((name) => !have.has(name));
    const extra = [...have].filter((name) => !want.has(name));
    if (missing.length > 0) differences.push(`missing ${kind} ${missing.map(wrap).join(', ')}`);
    if (extra.length > 0) differences.push(`unknown ${kind} ${extra.map(wrap).join(', ')}`);
  };
  compare('placeholder', shape.placeholders, wanted.placeholders, (name) => `{${name}}`);
  compare('tag', shape.tags, wanted.tags, (name) => `<${name}>`);
  return differences.length === 0 ? undefined : `The message has ${differences.join('; ')}.`;
}

/**
 * A catalogue in one language, with an institute's overrides on top. Messages are parsed on first
 * use and kept. A key the catalogue lacks shows as the key itself (the catalogue tests keep every
 * locale complete, so a reader meets none).
 */
export class Translator {
  readonly #formats = new Map<string, IntlMessageFormat>();
  readonly #messages: Messages;
  readonly #overrides: Messages;
  /** The Intl locale for numbers, dates and plural rules (English rules for the pseudo-locale). */
  readonly #intlLocale: string;

  readonly locale: string;

  constructor(locale: string, messages: Messages, overrides: Messages = {}) {
    this.locale = locale;
    this.#messages = messages;
    this.#overrides = overrides;
    this.#intlLocale = locale === PSEUDO_LOCALE ? 'en' : locale;
  }

  /** Whether the catalogue has the key. */
  has(key: string): boolean {
    return Object.hasOwn(this.#messages, key);
  }

  #format(key: string): IntlMessageFormat | undefined {
    const known = this.#formats.get(key);
    if (known !== undefined) return known;
    const override = Object.hasOwn(this.#overrides, key) ? this.#overrides[key] : undefined;
    const message = override ?? (this.has(key) ? this.#messages[key] : undefined);
    if (message === undefined) return undefined;
    let format: IntlMessageFormat;
    try {
      format = new IntlMessageFormat(message, this.#intlLocale);
    } catch {
      // An override is checked when saved; should one still not parse, the catalogue's stands.
      const original = this.#messages[key];
      if (original === undefined || original === message) return undefined;
      format = new IntlMessageFormat(original, this.#intlLocale);
    }
    this.#formats.set(key, format);
    return format;
  }

  /**
   * The message as text, its placeholders filled in; a tag keeps its text. A value the caller did not
   * give shows the key rather than failing the page (the catalogue tests format every message).
   */
  t(key: string, values?: MessageValues): string {
    const format = this.#format(key);
    if (format === undefined) return key;
    const plain: Record<string, PrimitiveType | ((parts: unknown[]) => string)> = { ...values };
    for (const tag of this.#shape(key).tags) plain[tag] ??= (parts: unknown[]) => parts.map(String).join('');
    try {
      const text = format.format<string>(plain);
      return Array.isArray(text) ? text.join('') : String(text);
    } catch {
      return key;
    }
  }

  /**
   * The message as parts, for messages with tags: each `<name>…</name>` becomes `{ tag, text }`,
   * for the page to wrap (a link, emphasis); the rest is text.
   */
  rich(key: string, values?: MessageValues): RichPart[] {
    const format = this.#format(key);
    if (format === undefined) return [key];
    const tagged: Record<string, PrimitiveType | ((parts: unknown[]) => RichPart)> = { ...values };
    for (const tag of this.#shape(key).tags)
      tagged[tag] = (parts: unknown[]) => ({ tag, text: parts.map(String).join('') });
    let result: RichPart | RichPart[];
    try {
      result = format.format<RichPart>(tagged);
    } catch {
      return [key];
    }
    const parts = Array.isArray(result) ? result : [result];
    // Adjacent text pieces are joined, so a page gets one text run between two tags.
    const joined: RichPart[] = [];
    for (const part of parts) {
      const last = joined.at(-1);
      if (typeof part === 'string' && typeof last === 'string') joined[joined.length - 1] = last + part;
      else joined.push(part);
    }
    return joined;
  }

  readonly #shapes = new Map<string, MessageShape>();

  /** The shape of the message the key formats with (its tags, for t() and rich()). */
  #shape(key: string): MessageShape {
    const known = this.#shapes.get(key);
    if (known !== undefined) return known;
    const format = this.#format(key);
    const shape =
      format === undefined
        ? { placeholders: new Set<string>(), tags: new Set<string>() }
        : shapeOf(format.getAst());
    this.#shapes.set(key, shape);
    return shape;
  }
}

const ACCENTED: Readonly<Record<string, string>> = {
  a: 'á',
  b: 'ƀ',
  c: 'ç',
  d: 'ð',
  e: 'é',
  f: 'ƒ',
  g: 'ĝ',
  h: 'ĥ',
  i: 'í',
  j: 'ĵ',
  k: 'ķ',
  l: 'ļ',
  m: 'ɱ',
  n: 'ñ',
  o: 'ö',
  p: 'þ',
  q: 'ǫ',
  r: 'ŕ',
  s: 'š',
  t: 'ţ',
  u: 'û',
  v: 'ṽ',
  w: 'ŵ',
  x: 'ẋ',
  y: 'ý',
  z: 'ž',
  A: 'Å',
  B: 'Ɓ',
  C: 'Ç',
  D: 'Ð',
  E: 'É',
  F: 'Ƒ',
  G: 'Ĝ',
  H: 'Ĥ',
  I: 'Î',
  J: 'Ĵ',
  K: 'Ķ',
  L: 'Ļ',
  M: 'Ṁ',
  N: 'Ñ',
  O: 'Ö',
  P: 'Þ',
  Q: 'Ǫ',
  R: 'Ŕ',
  S: 'Š',
  T: 'Ţ',
  U: 'Û',
  V: 'Ṽ',
  W: 'Ŵ',
  X: 'Ẋ',
  Y: 'Ý',
  Z: 'Ž',
};

/** Accents a piece of text and pads it by 40% of its letters ("~" marks, after the text). */
function pseudoText(text: string): string {
  const accented = [...text].map((letter) => ACCENTED[letter] ?? letter).join('');
  const letters = text.replace(/[^A-Za-z]/g, '').length;
  if (letters === 0) return accented;
  const [, body = '', trailing = ''] = /^([\s\S]*?)(\s*)$/.exec(accented) ?? [];
  return `${body}${'~'.repeat(Math.ceil(letters * 0.4))}${trailing}`;
}

/**
 * The pseudo-locale's form of an English message: every literal piece accented and 40% longer, the
 * whole in brackets; placeholders, plural and select keywords and tags stay as they are, so the
 * message formats with the same values.
 */
export function pseudoLocalize(message: string): string {
  const transform = (elements: readonly MessageFormatElement[]): MessageFormatElement[] =>
    elements.map((element) => {
      if (isLiteralElement(element)) return { ...element, value: pseudoText(element.value) };
      if (isTagElement(element)) return { ...element, children: transform(element.children) };
      if (isSelectElement(element) || isPluralElement(element)) {
        const options = Object.fromEntries(
          Object.entries(element.options).map(([name, option]) => [
            name,
            { ...option, value: transform(option.value) },
          ]),
        );
        return { ...element, options };
      }
      if (
        isArgumentElement(element) ||
        isNumberElement(element) ||
        isDateElement(element) ||
        isTimeElement(element)
      )
        return element;
      return element;
    });
  return `[${printAST(transform(parseMessage(message)))}]`;
}

/** The pseudo-locale's catalogue, made from the English one. */
export function pseudoMessages(english: Messages): Messages {
  return Object.fromEntries(Object.entries(english).map(([key, message]) => [key, pseudoLocalize(message)]));
}
