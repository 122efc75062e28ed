/**
 * How the original Rails service wrote parameter values into the signed message: Ruby's string
 * interpolation (`"#{value}"`) of the decoded parameter. Strings stay as they are at the top level;
 * inside arrays and hashes values appear as Ruby's `inspect` writes them.
 */

const NAMED_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\t': '\\t',
  '\r': '\\r',
  '\f': '\\f',
  '\v': '\\v',
  '\b': '\\b',
  '\x07': '\\a',
  '\x1b': '\\e',
};

/** Unassigned code points, as far as this runtime's Unicode tables know them. */
const UNASSIGNED = /^\p{Cn}$/u;

/**
 * Onigmo's [[:print:]] for Unicode, which String#inspect asks of every character of a UTF-8 string:
 * everything except controls (C0, DEL, C1), the line and paragraph separators (white space that is
 * no space separator) and unassigned code points. Ruby 3.1 knows Unicode 13, this runtime a later
 * version; the few characters assigned since then differ.
 */
function rubyPrintable(char: string, code: number): boolean {
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return false;
  if (code === 0x2028 || code === 0x2029) return false;
  return !UNASSIGNED.test(char);
}

/** Printable ASCII other than `"`, `#` and `\`: a string of only these is inspected as it is. */
const PLAIN = /^[\x20\x21\x24-\x5b\x5d-\x7e]*$/;

/**
 * The characters String#inspect writes otherwise than as they are: controls (C0, DEL, C1), the line
 * and paragraph separators, unassigned code points (see rubyPrintable), the quote and backslash, and
 * `#` ahead of `{`, `$` or `@`. Matched by whole code points, so an astral character is one match.
 */
// eslint-disable-next-line no-control-regex -- the controls are what it looks for
const SPECIAL = /[\x00-\x1f\x7f-\x9f\u2028\u2029"\\]|#(?=[{$@])|\p{Cn}/gu;

/** How String#inspect writes one character SPECIAL matched. */
function escapeSpecial(char: string): string {
  const named = NAMED_ESCAPES[char];
  if (named !== undefined) return named;
  if (char === '#') return '\\#';
  const code = char.codePointAt(0) ?? 0;
  if (rubyPrintable(char, code)) return char;
  const hex = code.toString(16).toUpperCase();
  return code < 0x10000 ? `\\u${hex.padStart(4, '0')}` : `\\u{${hex}}`;
}

/**
 * Ruby's String#inspect for a UTF-8 string: quotes, the named backslash escapes, `\#{` guarded,
 * any other unprintable character as `\uXXXX` (`\u{XXXXX}` beyond the BMP), everything else as is.
 * One regular-expression pass (a plain string is only tested): a megabyte of text takes
 * milliseconds, where a loop over its characters took a quarter of a second of the event loop.
 */
export function rubyInspectString(text: string): string {
  if (PLAIN.test(text)) return `"${text}"`;
  return `"${text.replace(SPECIAL, escapeSpecial)}"`;
}

/**
 * Ruby's Float#to_s: the shortest digits that read back as the same double, in fixed notation for
 * decimal exponents from -4 to 16 (always with a fractional part, `1000.0`), else `1.0e+20` style.
 */
export function rubyFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const sign = value < 0 ? '-' : '';
  const [mantissa = '', exponentText = '0'] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const decpt = Number(exponentText) + 1; // position of the decimal point relative to the digits
  if (decpt < -3 || decpt > 16) {
    const exponent = decpt - 1;
    const rest = digits.length > 1 ? digits.slice(1) : '0';
    const expSign = exponent < 0 ? '-' : '+';
    return `${sign}${digits[0]}.${rest}e${expSign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
  if (decpt >= digits.length) return `${sign}${digits}${'0'.repeat(decpt - digits.length)}.0`;
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}

/**
 * A parameter value in both forms the signature needs: `top`, as interpolation writes it when the
 * value is a parameter itself, and `nested`, as `inspect` writes it inside an array or a hash.
 */
export interface RubyText {
  readonly top: string;
  readonly nested: string;
}

/** A string's texts; `nested` is written only when asked for (a parameter at the top never is). */
export function rubyString(text: string): RubyText {
  return {
    top: text,
    get nested() {
      return rubyInspectString(text);
    },
  };
}

export const RUBY_NIL: RubyText = { top: '', nested: 'nil' };

export function rubyBoolean(value: boolean): RubyText {
  const text = value ? 'true' : 'false';
  return { top: text, nested: text };
}

/** A JSON number as Ruby parses it: an Integer keeps every digit, anything else becomes a Float. */
export function rubyNumber(source: string): RubyText {
  const text = /^-?\d+$/.test(source) ? BigInt(source).toString() : rubyFloat(Number(source));
  return { top: text, nested: text };
}

export function rubyArray(items: readonly RubyText[]): RubyText {
  const text = `[${items.map((item) => item.nested).join(', ')}]`;
  return { top: text, nested: text };
}

/** Ruby 3.1's Hash#inspect: `{"k"=>1, "n"=>nil}`. */
export function rubyHash(entries: readonly (readonly [string, RubyText])[]): RubyText {
  const text = `{${entries.map(([key, value]) => `${rubyInspectString(key)}=>${value.nested}`).join(', ')}}`;
  return { top: text, nested: text };
}
