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

export const EMPTY_PARAMS: ParsedParams = Object.freeze({ values: {}, signing: {} });

/** Thrown for a body that cannot be read as JSON; the HTTP layer answers 400. */
export class MalformedJson extends Error {
  override name = 'MalformedJson';
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
    // An integer beyond a double's exact range reaches the services as its digits, not a rounded number.
    const exact = /^-?\d+$/.test(source) && !Number.isSafeInteger(value) ? BigInt(source).toString() : value;
    return node(exact, rubyNumber(source));
  }
  if (Array.isArray(value)) {
    const items = value.filter(isNode);
    return node(
      items.map((item) => item.value),
      rubyArray(items.map((item) => item.ruby)),
    );
  }
  const entries = Object.entries(value as Record<string, unknown>).filter((entry): entry is [string, Node] =>
    isNode(entry[1]),
  );
  return node(
    Object.fromEntries(entries.map(([key, item]) => [key, item.value])),
    rubyHash(entries.map(([key, item]) => [key, item.ruby] as const)),
    entries,
  );
}

/**
 * Reads a JSON request body. An empty body is no parameters; the top level must be an object.
 * Numbers keep the digits they were written with. Throws MalformedJson.
 */
export function parseJsonParams(text: string): ParsedParams {
  if (text.trim() === '') return EMPTY_PARAMS;
  let root: unknown;
  try {
    root = JSON.parse(text, revive as (key: string, value: unknown) => unknown);
  } catch (error) {
    throw new MalformedJson(error instanceof Error ? error.message : 'invalid JSON');
  }
  if (!isNode(root) || root.entries === undefined) throw new MalformedJson('the JSON body must be an object');
  const values: Record<string, unknown> = {};
  const signing: Record<string, string> = {};
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
 * array and `name[key]=x` a hash, as Rails does; a repeated plain name keeps its last value.
 */
export function parseFormParams(text: string): ParsedParams {
  const values: Record<string, unknown> = {};
  const lists = new Map<string, string[]>();
  const hashes = new Map<string, Map<string, string>>();
  for (const part of text.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawKey = decodeComponent(eq === -1 ? part : part.slice(0, eq));
    const value = eq === -1 ? '' : decodeComponent(part.slice(eq + 1));
    const bracket = /^([^[\]]+)\[([^[\]]*)\]$/.exec(rawKey);
    if (bracket === null) {
      values[rawKey] = value;
      continue;
    }
    const [, name = '', key = ''] = bracket;
    if (key === '') {
      const list = lists.get(name) ?? [];
      list.push(value);
      lists.set(name, list);
      values[name] = list;
    } else {
      const hash = hashes.get(name) ?? new Map<string, string>();
      hash.set(key, value);
      hashes.set(name, hash);
      values[name] = Object.fromEntries(hash);
    }
  }
  const signing: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === 'string') signing[name] = value;
    else if (Array.isArray(value))
      signing[name] = rubyArray(value.map((item: string) => rubyString(item))).top;
    else {
      const entries = Object.entries(value as Record<string, string>).map(
        ([k, v]) => [k, rubyString(v)] as const,
      );
      signing[name] = rubyHash(entries).top;
    }
  }
  return { values, signing };
}

/** Plain string parameters (route parameters, multipart fields). */
export function stringParams(source: Readonly<Record<string, string>>): ParsedParams {
  return { values: { ...source }, signing: { ...source } };
}

/** Merges sources; a later source wins a name both carry (query, then body, then route). */
export function mergeParams(...sources: readonly ParsedParams[]): ParsedParams {
  const values: Record<string, unknown> = {};
  const signing: Record<string, string> = {};
  for (const source of sources) {
    Object.assign(values, source.values);
    Object.assign(signing, source.signing);
  }
  return { values, signing };
}
