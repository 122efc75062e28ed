import { Invalid } from './errors.ts';
import { type Params, parseInstant } from './input.ts';

export type FieldType = 'integer' | 'string' | 'time' | 'boolean';

/**
 * What a resource lets clients filter and sort on: API field name → column and value type.
 * `notNull` marks a column that never holds null, so sorting on it needs no null placement and an
 * index can serve the order (SQLite cannot walk an index for `NULLS LAST`).
 */
export type ListFields = Readonly<
  Record<string, { readonly column: string; readonly type: FieldType; readonly notNull?: boolean }>
>;

export type Operator = 'eq' | 'not_eq' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'not_in' | 'like' | 'null';
const OPERATORS: readonly Operator[] = [
  'eq',
  'not_eq',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'not_in',
  'like',
  'null',
];

export type FilterValue = string | number | boolean;

export type Condition =
  | {
      readonly column: string;
      readonly op: 'eq' | 'not_eq' | 'gt' | 'gte' | 'lt' | 'lte';
      readonly value: FilterValue;
    }
  | { readonly column: string; readonly op: 'in' | 'not_in'; readonly values: readonly FilterValue[] }
  | { readonly column: string; readonly op: 'like'; readonly value: string }
  | { readonly column: string; readonly op: 'null'; readonly isNull: boolean };

export interface SortKey {
  readonly column: string;
  readonly direction: 'asc' | 'desc';
  readonly notNull: boolean;
}

/** A parsed `filter`/`sort`/`page`/`limit` request, ready for a repository to apply. */
export interface ListQuery {
  readonly conditions: readonly Condition[];
  readonly sort: readonly SortKey[];
  readonly page: number;
  readonly limit: number;
  /** API field names the client filtered on (a `status` filter brings deleted exams back, say). */
  readonly filtered: ReadonlySet<string>;
}

export interface Page<T> {
  readonly items: readonly T[];
  readonly total: number;
  readonly page: number;
  readonly limit: number;
}

export const MAX_LIMIT = 300;

/**
 * The spec of a field the client named, looked up among the resource's own fields only: a name such
 * as `constructor` or `toString` is an unknown field, never something inherited from Object.prototype.
 */
function fieldSpec(fields: ListFields, name: string): ListFields[string] | undefined {
  return Object.hasOwn(fields, name) ? fields[name] : undefined;
}

function parseJson(params: Params, name: 'filter' | 'sort'): unknown {
  const raw = Object.hasOwn(params, name) ? params[name] : undefined;
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    throw new Invalid(name, 'is not valid JSON');
  }
}

function operand(field: string, type: FieldType, value: unknown): FilterValue {
  switch (type) {
    case 'integer': {
      const number = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
      if (typeof number === 'number' && Number.isSafeInteger(number)) return number;
      break;
    }
    case 'time': {
      const millis = parseInstant(value);
      if (millis !== undefined) return millis;
      break;
    }
    case 'boolean':
      if (value === true || value === 'true' || value === 1 || value === '1') return true;
      if (value === false || value === 'false' || value === 0 || value === '0') return false;
      break;
    case 'string':
      if (typeof value === 'string' && !value.includes('\u0000')) return value;
      if (typeof value === 'number') return String(value);
      break;
  }
  throw new Invalid('filter', `has an invalid value for ${field}`);
}

function parseConditions(
  params: Params,
  fields: ListFields,
): { conditions: Condition[]; filtered: Set<string> } {
  const filter = parseJson(params, 'filter');
  const conditions: Condition[] = [];
  const filtered = new Set<string>();
  if (filter === undefined) return { conditions, filtered };
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) {
    throw new Invalid('filter', 'must be a JSON object');
  }
  for (const [field, ops] of Object.entries(filter)) {
    const spec = fieldSpec(fields, field);
    if (spec === undefined) throw new Invalid('filter', `has an unknown field: ${field}`);
    if (typeof ops !== 'object' || ops === null || Array.isArray(ops)) {
      throw new Invalid('filter', `needs an operator object for ${field}`);
    }
    filtered.add(field);
    for (const [op, value] of Object.entries(ops as Record<string, unknown>)) {
      const operator = OPERATORS.find((known) => known === op);
      if (operator === undefined) throw new Invalid('filter', `has an unknown operator: ${op}`);
      conditions.push(condition(field, spec.column, spec.type, operator, value));
    }
  }
  return { conditions, filtered };
}

function condition(field: string, column: string, type: FieldType, op: Operator, value: unknown): Condition {
  switch (op) {
    case 'in':
    case 'not_in':
      if (!Array.isArray(value)) throw new Invalid('filter', `needs an array for ${op} on ${field}`);
      return { column, op, values: value.map((item) => operand(field, type, item)) };
    case 'like':
      // A substring of a number or an instant's stored digits means nothing to a client (and
      // PostgreSQL cannot lower() them): like is for text fields only.
      if (type !== 'string') throw new Invalid('filter', `cannot apply like to ${field}, which is not text`);
      if (typeof value !== 'string' || value.includes('\u0000')) {
        throw new Invalid('filter', `needs a string for like on ${field}`);
      }
      return { column, op, value };
    case 'null': {
      const isNull = operand(field, 'boolean', value);
      return { column, op, isNull: isNull === true };
    }
    default:
      return { column, op, value: operand(field, type, value) };
  }
}

function parseSort(params: Params, fields: ListFields): SortKey[] {
  const sort = parseJson(params, 'sort');
  if (sort === undefined) return [];
  const entries = Array.isArray(sort) ? sort : [sort];
  const keys: SortKey[] = [];
  for (const entry of entries) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new Invalid('sort', 'must be an array of {"field": "asc|desc"} objects');
    }
    for (const [field, direction] of Object.entries(entry as Record<string, unknown>)) {
      const spec = fieldSpec(fields, field);
      if (spec === undefined) throw new Invalid('sort', `has an unknown field: ${field}`);
      const dir = typeof direction === 'string' ? direction.toLowerCase() : direction;
      if (dir !== 'asc' && dir !== 'desc') throw new Invalid('sort', `has an unknown direction for ${field}`);
      keys.push({ column: spec.column, direction: dir, notNull: spec.notNull === true });
    }
  }
  return keys;
}

function positive(params: Params, name: 'page' | 'limit', fallback: number): number {
  const raw = Object.hasOwn(params, name) ? params[name] : undefined;
  if (raw === undefined || raw === null || raw === '') return fallback;
  const number =
    typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < 1) throw new Invalid(name, 'must be a whole number from 1');
  return number;
}

/**
 * Reads `filter`, `sort`, `page` and `limit` against a resource's fields. Returns the parsed query
 * (sort ends with `id` so pages are stable; limit capped at 300); throws Invalid naming the bad part.
 */
export function parseListQuery(params: Params, fields: ListFields): ListQuery {
  const { conditions, filtered } = parseConditions(params, fields);
  const sort = parseSort(params, fields);
  if (!sort.some((key) => key.column === 'id')) sort.push({ column: 'id', direction: 'asc', notNull: true });
  return {
    conditions,
    sort,
    filtered,
    page: positive(params, 'page', 1),
    limit: Math.min(positive(params, 'limit', MAX_LIMIT), MAX_LIMIT),
  };
}
