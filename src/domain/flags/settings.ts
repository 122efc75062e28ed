import { Invalid } from '../errors.ts';
import { has, param, type Params } from '../input.ts';

/**
 * The thresholds of the automated flags, per exam (exam field `flag_settings`). The keys are the
 * API's: this object is stored as JSON, answered in the exam record and read by the room from its
 * view in this one shape, so it has no second, camel-cased spelling.
 */
export interface FlagSettings {
  /** Seconds without a face in view before a `no_face` episode opens. */
  readonly no_face_seconds: number;
  /** Seconds with the face turned away before a `looking_away` episode opens. */
  readonly looking_away_seconds: number;
  /** Seconds with more than one face before a `multiple_faces` episode opens. */
  readonly multiple_faces_seconds: number;
  /** Whether the exam forbids talking: only then does the room listen for speech. */
  readonly speech_forbidden: boolean;
  /** Seconds of speech before a `speech` episode opens. */
  readonly speech_seconds: number;
  /** Whether the room compares the face in view with the face photo (`face_mismatch`, advisory). */
  readonly face_match: boolean;
  /** Similarity (0 to 1) below which the face in view counts as not matching the face photo. */
  readonly face_match_threshold: number;
  /** Detections per second the room aims for; a slow device lowers it and reports so. */
  readonly detection_hz: number;
}

/** What an exam stores: only the keys a client set; the others follow FLAG_SETTINGS_DEFAULTS. */
export type StoredFlagSettings = Partial<FlagSettings>;

/** The defaults, the one place they are written (the room reads the effective values from its view). */
export const FLAG_SETTINGS_DEFAULTS: FlagSettings = Object.freeze({
  no_face_seconds: 5,
  looking_away_seconds: 5,
  multiple_faces_seconds: 2,
  speech_forbidden: false,
  speech_seconds: 3,
  face_match: true,
  face_match_threshold: 0.5,
  detection_hz: 2,
});

type Rule =
  | { readonly kind: 'seconds' }
  | { readonly kind: 'boolean' }
  | { readonly kind: 'number'; readonly min: number; readonly max: number };

const SECONDS_MAX = 600;

/** How each key is checked: whole seconds from 1 to 600, booleans, or a number in a range. */
const RULES: Readonly<Record<keyof FlagSettings, Rule>> = {
  no_face_seconds: { kind: 'seconds' },
  looking_away_seconds: { kind: 'seconds' },
  multiple_faces_seconds: { kind: 'seconds' },
  speech_forbidden: { kind: 'boolean' },
  speech_seconds: { kind: 'seconds' },
  face_match: { kind: 'boolean' },
  face_match_threshold: { kind: 'number', min: 0, max: 1 },
  detection_hz: { kind: 'number', min: 0.5, max: 10 },
};

/** Every key of FlagSettings, in the defaults' order. */
export const FLAG_SETTING_KEYS = Object.keys(RULES) as (keyof FlagSettings)[];

function isSettingKey(key: string): key is keyof FlagSettings {
  return Object.hasOwn(RULES, key);
}

/** A number sent as JSON or as decimal text (a form); undefined for anything else. */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

/** One key's value, checked. Returns it; throws Invalid naming `flag_settings.KEY`. */
function readSetting(key: keyof FlagSettings, value: unknown): number | boolean {
  const field = `flag_settings.${key}`;
  const rule = RULES[key];
  if (rule.kind === 'boolean') {
    if (value === true || value === 'true' || value === 1 || value === '1') return true;
    if (value === false || value === 'false' || value === 0 || value === '0') return false;
    throw new Invalid(field, 'must be one of true, false, 1, 0');
  }
  const number = numberOf(value);
  if (number === undefined) throw new Invalid(field, 'is not a number');
  if (rule.kind === 'seconds') {
    if (!Number.isInteger(number)) throw new Invalid(field, 'must be a whole number of seconds');
    if (number < 1 || number > SECONDS_MAX) throw new Invalid(field, `must be from 1 to ${SECONDS_MAX}`);
    return number;
  }
  if (number < rule.min || number > rule.max)
    throw new Invalid(field, `must be from ${rule.min} to ${rule.max}`);
  return number;
}

/**
 * Checks an object of settings as a client sent it: every key known, every value in its range.
 * Returns the settings sent (numbers and booleans, as typed); throws Invalid naming
 * `flag_settings` (not an object, an unknown key) or `flag_settings.KEY` (a bad value).
 */
export function checkFlagSettings(value: unknown): StoredFlagSettings {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Invalid('flag_settings', 'must be an object');
  }
  const settings: Record<string, number | boolean> = {};
  for (const [key, sent] of Object.entries(value)) {
    if (!isSettingKey(key)) throw new Invalid('flag_settings', `has an unknown key: ${key.slice(0, 64)}`);
    settings[key] = readSetting(key, sent);
  }
  return settings;
}

/**
 * Reads the exam parameter `flag_settings`: an object (JSON), or the same object as JSON text (a
 * form). Returns undefined when not sent, null when sent as null or empty (back to the defaults),
 * or the settings sent, which replace the stored ones as a whole. Throws Invalid naming the field.
 */
export function readFlagSettings(params: Params): StoredFlagSettings | null | undefined {
  if (!has(params, 'flag_settings')) return undefined;
  const value = param(params, 'flag_settings');
  if (value === null || value === '') return null;
  if (typeof value !== 'string') return checkFlagSettings(value);
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Invalid('flag_settings', 'must be an object');
  }
  return parsed === null ? null : checkFlagSettings(parsed);
}

/**
 * Reads the stored column back. Written only through checkFlagSettings, but a value this version
 * cannot read (a key a later version dropped, a hand edit) is skipped rather than failing a read.
 * Returns the settings, or null for none.
 */
export function parseStoredFlagSettings(text: string | null): StoredFlagSettings | null {
  if (text === null || text === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const settings: Record<string, number | boolean> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!isSettingKey(key)) continue;
    try {
      settings[key] = readSetting(key, value);
    } catch {
      // An unreadable value falls back to its default.
    }
  }
  return settings;
}

/** The column's text for stored settings (null for none). */
export function storedFlagSettingsText(settings: StoredFlagSettings | null): string | null {
  return settings === null ? null : JSON.stringify(settings);
}

/** The settings in force: the stored ones over FLAG_SETTINGS_DEFAULTS. Returns a new object. */
export function effectiveFlagSettings(stored: StoredFlagSettings | null): FlagSettings {
  return { ...FLAG_SETTINGS_DEFAULTS, ...(stored ?? {}) };
}
