import {
  RUBY_NIL,
  type RubyText,
  rubyArray,
  rubyBoolean,
  rubyHash,
  rubyNumber,
  rubyString,
} from './auth/ruby-format.ts';

/**
 * Parameters read from one source (query, body, route), each in two forms: `values` for the
 * services, and `signing`, the text the signature covers for that parameter.
 */
export interface ParsedParams {
  readonly values: Record<string, unknown>;
  readonly signing: Record<string, string>;
}

export const EMPTY_PARAMS: ParsedParams = Object.freeze({
  values: record<unknown>(),
  signing: record<string>(),
});

/** Thrown for a body that cannot be read as JSON; the HTTP layer answers 400. */
export class MalformedJson extends Error {
  override name = 'MalformedJson';
}

/**
 * Thrown for a body or query with more parameters than any route reads (MAX_PARAMETERS); the HTTP
 * layer answers 413, as for a body over the size limit.
 */
export class TooManyParameters extends Error {
  override name = 'TooManyParameters';
  /** Read by the HTTP error map (domainErrorFromFramework), which answers 413 for it. */
  readonly statusCode = 413;
}

/**
 * How deep a JSON body may nest. The deepest shape a route reads is a filter operand inside a field
 * inside the filter object (4 levels); the bound keeps the bottom-up signing text (each level copies
 * its children's text) and the engine's recursive reviver far from trouble.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * How many values (JSON members and array items, or form and query pairs) one request may carry.
 * The widest real request (an exam with every setting, or a list of a few hundred ids) stays well
 * below; far more is a hostile body, refused before any object is built from it.
 */
export const MAX_PARAMETERS = 10_000;

/**
 * A name never stored as a parameter: assigned to a plain object it would replace the prototype.
 * Dropped by every reader (a client that signed it gets a 403, as for any parameter the server does
 * not see).
 */
const PROTO = '__proto__';

/**
 * An object without a prototype, so a parameter named `constructor` or `toString` is only ever
 * an own property the client sent, never something inherited from Object.prototype.
 */
function record<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * Checks a JSON text's shape in one pass before it is parsed: nesting within MAX_JSON_DEPTH and
 * at most MAX_PARAMETERS values. Returns nothing; throws MalformedJson (too deep) or
 * TooManyParameters.
 */
function checkJsonShape(text: string): void {
  let depth = 0;
  let values = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c)
        i += 1; // a backslash: the next character is escaped, whatever it is
      else if (code === 0x22) inString = false;
      continue;
    }
    if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      depth += 1;
      values += 1;
      if (depth > MAX_JSON_DEPTH) throw new MalformedJson(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    } else if (code === 0x7d || code === 0x5d) depth -= 1;
    else if (code === 0x2c || code === 0x3a) {
      values += 1;
      if (values > MAX_PARAMETERS) throw new TooManyParameters(`more than ${MAX_PARAMETERS} values`);
    }
  }
}

/** One JSON value with its Ruby text, built bottom-up by the JSON.parse reviver. */
interface Node {
  readonly [NODE]: true;
  readonly value: unknown;
  readonly ruby: RubyText;
  /** For an object: its entries, so the top level can sign each parameter on its own. */
  readonly entries?: readonly (readonly [string, Node])[];
}
const NODE = Symbol('node');

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && NODE in value;
}

function node(value: unknown, ruby: RubyText, entries?: readonly (readonly [string, Node])[]): Node {
  return entries === undefined ? { [NODE]: true, value, ruby } : { [NODE]: true, value, ruby, entries };
}

function revive(_key: string, value: unknown, context?: { source?: string }): Node {
  if (value === null) return node(null, RUBY_NIL);
  if (typeof value === 'boolean') return node(value, rubyBoolean(value));
  if (typeof value === 'string') return node(value, rubyString(value));
  if (typeof value === 'number') {
    const source = context?.source ?? String(value);
    if (/^-?\d+$/.test(source)) {
      // A JSON integer's text is already how Ruby writes it (JSON allows no leading zeros), except
      // -0. An integer beyond a double's exact range reaches the services as its digits, not a
      // rounded number. No BigInt round trip: a megabyte of digits would take the event loop for
      // a second.
      const digits = source === '-0' ? '0' : source;
      return node(Number.isSafeInteger(value) ? value : digits, { top: digits, nested: digits });
    }
    return node(value, rubyNumber(source));
  }
  if (Array.isArray(value)) {
    const items = value.filter(isNode);
    return node(
      items.map((item) => item.value),
      rubyArray(items.map((item) => item.ruby)),
    );
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(
    (entry): entry is [string, Node] => entry[0] !== PROTO && isNode(entry[1]),
  );
  return node(
    Object.fromEntries(entries.map(([key, item]) => [key, item.value])),
    rubyHash(entries.map(([key, item]) => [key, item.ruby] as const)),
    entries,
  );
}

/**
 * Reads a JSON request body. An empty body is no parameters; the top level must be an object.
 * Numbers keep the digits they were written with; `__proto__` members are dropped. Throws
 * MalformedJson (unreadable, not an object, nested deeper than MAX_JSON_DEPTH) or TooManyParameters.
 */
export function parseJsonParams(text: string): ParsedParams {
  if (text.trim() === '') return EMPTY_PARAMS;
  checkJsonShape(text);
  let root: unknown;
  try {
    root = JSON.parse(text, revive as (key: string, value: unknown) => unknown);
  } catch (error) {
    throw new MalformedJson(error instanceof Error ? error.message : 'invalid JSON');
  }
  if (!isNode(root) || root.entries === undefined) throw new MalformedJson('the JSON body must be an object');
  const values = record<unknown>();
  const signing = record<string>();
  for (const [key, item] of root.entries) {
    values[key] = item.value;
    signing[key] = item.ruby.top;
  }
  return { values, signing };
}

/**
 * Decodes one form or query component the way Rack does (`+` is a space, `%XX` a byte), keeping any
 * `%` sequence that does not decode as it is: unencoded bodies from older clients are read as sent.
 */
export function decodeComponent(text: string): string {
  const spaced = text.replace(/\+/g, ' ');
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}

/**
 * Reads `a=1&b=2` (a query string or a form body, percent-encoded or not). `name[]=x` collects an
 * array and `name[key]=x` a hash, as Rails does; a repeated plain name keeps its last value. Names
 * (and hash keys) `__proto__` are dropped. Linear in the text. Throws TooManyParameters above
 * MAX_PARAMETERS pairs.
 */
export function parseFormParams(text: string): ParsedParams {
  const values = record<string | string[] | Map<string, string>>();
  let pairs = 0;
  for (const part of text.split('&')) {
    if (part === '') continue;
    pairs += 1;
    if (pairs > MAX_PARAMETERS) throw new TooManyParameters(`more than ${MAX_PARAMETERS} parameters`);
    const eq = part.indexOf('=');
    const rawKey = decodeComponent(eq === -1 ? part : part.slice(0, eq));
    const value = eq === -1 ? '' : decodeComponent(part.slice(eq + 1));
    const bracket = /^([^[\]]+)\[([^[\]]*)\]$/.exec(rawKey);
    if (bracket === null) {
      if (rawKey !== PROTO) values[rawKey] = value;
      continue;
    }
    const [, name = '', key = ''] = bracket;
    if (name === PROTO) continue;
    const current = values[name];
    if (key === '') {
      // A plain value or a hash under the same name is replaced, as Rack's last assignment wins.
      if (Array.isArray(current)) current.push(value);
      else values[name] = [value];
    } else if (key !== PROTO) {
      if (current instanceof Map) current.set(key, value);
      else values[name] = new Map([[key, value]]);
    }
  }
  // Hashes become objects once, at the end: rebuilding one per pair would be quadratic in its keys.
  const result = record<unknown>();
  const signing = record<string>();
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === 'string') {
      result[name] = value;
      signing[name] = value;
    } else if (Array.isArray(value)) {
      result[name] = value;
      signing[name] = rubyArray(value.map((item) => rubyString(item))).top;
    } else {
      // A plain object (as JSON's nested objects are): services may print it (`String(value)`),
      // which an object without a prototype cannot do. Its keys are own properties, never __proto__.
      result[name] = Object.fromEntries(value);
      signing[name] = rubyHash([...value].map(([key, item]) => [key, rubyString(item)] as const)).top;
    }
  }
  return { values: result, signing };
}

/** Plain string parameters (route parameters, multipart fields); a `__proto__` name is dropped. */
export function stringParams(source: Readonly<Record<string, string>>): ParsedParams {
  const values = record<unknown>();
  const signing = record<string>();
  for (const [name, value] of Object.entries(source)) {
    if (name === PROTO) continue;
    values[name] = value;
    signing[name] = value;
  }
  return { values, signing };
}

/** The character PostgreSQL cannot store in text, and no parameter has a use for. */
const NUL = '\u0000';

/** Whether a parameter value (a text, or texts nested in arrays and objects, keys included) holds NUL. */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes(NUL);
  if (Array.isArray(value)) return value.some(holdsNul);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(([key, item]) => key.includes(NUL) || holdsNul(item));
  }
  return false;
}

/**
 * The name of the first parameter whose name or value (at any depth) contains a NUL character, a
 * NUL in the name itself written `\0`; undefined when there is none. Every text a request carries
 * passes through here before anything reads it, so no NUL reaches either database (PostgreSQL
 * refuses one in text; SQLite would store it) nor a file name.
 */
export function nulParam(params: ParsedParams): string | undefined {
  for (const [name, value] of Object.entries(params.values)) {
    if (name.includes(NUL) || holdsNul(value)) return name.replaceAll(NUL, '\\0');
  }
  return undefined;
}

/**
 * Merges sources; a later source wins a name both carry (query, then body, then route). Returns
 * objects without a prototype, holding only the names the sources carry as their own.
 */
export function mergeParams(...sources: readonly ParsedParams[]): ParsedParams {
  const values = record<unknown>();
  const signing = record<string>();
  for (const source of sources) {
    for (const name of Object.keys(source.values)) {
      if (name !== PROTO) values[name] = source.values[name];
    }
    for (const name of Object.keys(source.signing)) {
      if (name !== PROTO) signing[name] = source.signing[name] as string;
    }
  }
  return { values, signing };
}
