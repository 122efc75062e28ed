import { Invalid, ParamMissing } from './errors.ts';

/**
 * Request parameters as the HTTP layer merged them (query, body, route). Values are strings (query,
 * form, multipart, route), or JSON values; a JSON integer too large for a double arrives as its digits.
 */
export type Params = Readonly<Record<string, unknown>>;

/** PostgreSQL text cannot hold a NUL character, so no stored text may carry one (on either database). */
function hasNul(text: string): boolean {
  return text.includes('\u0000');
}

function isBlank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/** True when the parameter was sent at all (even as null or empty). */
export function has(params: Params, name: string): boolean {
  return Object.hasOwn(params, name);
}

/**
 * The value the client sent for `name`, looked up among the parameters' own properties only (a
 * parameter object built elsewhere may still inherit `constructor` or `toString`). Returns it, or
 * undefined when it was not sent.
 */
export function param(params: Params, name: string): unknown {
  return Object.hasOwn(params, name) ? params[name] : undefined;
}

/**
 * How a value the client sent appears in a message (a not-found id, say): strings as sent, numbers
 * and booleans as text, anything else as JSON. Never throws, whatever the value (`String()` would
 * throw for an object whose `toString` member is not a function).
 */
export function shownValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

/** A required, non-blank string. Throws ParamMissing naming the parameter. */
export function requiredString(params: Params, name: string): string {
  const value = param(params, name);
  if (isBlank(value)) throw new ParamMissing(name);
  if (typeof value === 'string') {
    if (hasNul(value)) throw new Invalid(name, 'must not contain a NUL character');
    return value;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Invalid(name, 'must be a string');
}

/** An optional string: undefined when absent, null when sent as null or empty. Throws Invalid for objects. */
export function optionalString(params: Params, name: string): string | null | undefined {
  if (!has(params, name)) return undefined;
  const value = param(params, name);
  if (value === null || value === '') return null;
  if (typeof value === 'string') {
    if (hasNul(value)) throw new Invalid(name, 'must not contain a NUL character');
    return value;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Invalid(name, 'must be a string');
}

/**
 * A string that must be sent on create and may be left out on update, but is never null or blank
 * when sent. Returns it (undefined when an update leaves it out); throws ParamMissing naming it.
 */
export function requiredOnCreate(
  params: Params,
  name: string,
  mode: 'create' | 'update',
): string | undefined {
  const value = optionalString(params, name);
  if (
    value === null ||
    (value !== undefined && value.trim() === '') ||
    (mode === 'create' && value === undefined)
  ) {
    throw new ParamMissing(name);
  }
  return value;
}

/** Reads true/false/1/0 (as JSON or text); undefined when absent or empty. Throws Invalid otherwise. */
export function optionalBoolean(params: Params, name: string): boolean | undefined {
  const value = param(params, name);
  if (value === undefined || value === null || value === '') return undefined;
  if (value === true || value === 1 || value === 'true' || value === '1') return true;
  if (value === false || value === 0 || value === 'false' || value === '0') return false;
  throw new Invalid(name, 'must be one of true, false, 1, 0');
}

/** An optional whole number within [min, max]; null when sent empty. Throws Invalid otherwise. */
export function optionalInteger(
  params: Params,
  name: string,
  min = Number.MIN_SAFE_INTEGER,
  max = Number.MAX_SAFE_INTEGER,
): number | null | undefined {
  if (!has(params, name)) return undefined;
  const value = param(params, name);
  if (value === null || value === '') return null;
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^-?\d+$/.test(value.trim())
        ? Number(value)
        : Number.NaN;
  if (!Number.isSafeInteger(number)) throw new Invalid(name, 'is not a number');
  if (number < min) throw new Invalid(name, `must be greater than or equal to ${min}`);
  if (number > max) throw new Invalid(name, `must be less than or equal to ${max}`);
  return number;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** The instants an answer can write as `YYYY-MM-DDTHH:MM:SS.sssZ` (years 0000 to 9999). */
const EARLIEST_INSTANT = Date.parse('0000-01-01T00:00:00.000Z');
const LATEST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

function within(millis: number): number | undefined {
  return Number.isSafeInteger(millis) && millis >= EARLIEST_INSTANT && millis <= LATEST_INSTANT
    ? millis
    : undefined;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** True when the written date and time exist (Date.parse would turn 2026-02-30 into March 2). */
function onCalendar(match: RegExpExecArray): boolean {
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = match
    .slice(1, 7)
    .map((part) => Number(part ?? 0));
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return false;
  return hour <= 23 && minute <= 59 && second <= 59;
}

/**
 * Parses an instant: ISO 8601 (no zone means UTC), a date (midnight UTC), or epoch digits (13 or more
 * digits are milliseconds, fewer are seconds). Returns epoch milliseconds, or undefined if unreadable,
 * not on the calendar, or outside the years 0000-9999.
 */
export function parseInstant(value: unknown): number | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    return within(
      Math.abs(Math.trunc(value)).toString().length >= 13 ? Math.trunc(value) : Math.round(value * 1000),
    );
  }
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return within(text.length >= 13 ? Number(text) : Number(text) * 1000);
  if (/^\d+\.\d+$/.test(text)) return within(Math.round(Number(text) * 1000));
  const match = ISO.exec(text);
  if (match === null || !onCalendar(match)) return undefined;
  const withTime = match[4] === undefined ? `${text.slice(0, 10)}T00:00:00` : text.replace(' ', 'T');
  const zoned = match[8] === undefined ? `${withTime}Z` : withTime;
  const millis = Date.parse(zoned);
  return Number.isNaN(millis) ? undefined : within(millis);
}

/** An optional instant (see parseInstant); null when sent empty. Throws Invalid when unreadable. */
export function optionalTime(params: Params, name: string): number | null | undefined {
  if (!has(params, name)) return undefined;
  const value = param(params, name);
  if (value === null || value === '') return null;
  const millis = parseInstant(value);
  if (millis === undefined) throw new Invalid(name, 'is not a valid time');
  return millis;
}

/** The value when it is one of `allowed`; undefined when absent. Throws Invalid naming the list rule. */
export function optionalEnum<T extends string>(
  params: Params,
  name: string,
  allowed: readonly T[],
): T | undefined {
  const value = param(params, name);
  if (value === undefined) return undefined;
  const found = allowed.find((candidate) => candidate === value);
  if (found === undefined) throw new Invalid(name, 'is not included in the list');
  return found;
}
