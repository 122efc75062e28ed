import { Invalid, ParamMissing } from '../errors.ts';
import { has, optionalEnum, optionalInteger, param, type Params } from '../input.ts';
import { FLAG_TYPES, type FlagType } from './flag-types.ts';

/** The largest offset the integer columns hold. */
const MAX_INT = 2_147_483_647;

/** An episode key: what the room may choose as its id of an episode (no free text reaches staff). */
const EPISODE_KEY = /^[A-Za-z0-9_.:-]{1,64}$/;

/** The fastest detection rate a room may report, per second (detection_hz's own ceiling). */
export const FLAGS_RATE_MAX_HZ = 10;

/** One report of an episode, as `POST /api/room/:token/flags` carries it. */
export interface FlagReport {
  readonly key: string;
  readonly type: FlagType;
  readonly confidence: number;
  /** Null when not sent: the service takes it from the clock. */
  readonly offsetTime: number | null;
  /** Null while the episode lasts (or when the report does not say). */
  readonly endOffsetTime: number | null;
}

/** A flag as stored, answered to the room. */
export interface StoredFlag {
  readonly key: string;
  readonly type: FlagType;
  readonly confidence: number;
  readonly offsetTime: number | null;
  readonly endOffsetTime: number | null;
  readonly comment: string;
  /** Recorded for the record only, never raised (informational.ts). */
  readonly informational: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A number sent as JSON or as decimal text; undefined for anything else. */
function numberParam(params: Params, name: string): number | undefined {
  const value = param(params, name);
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

function isBlank(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/**
 * Reads a flag report: `key` (required, 1 to 64 of A-Z a-z 0-9 _ . : -), `type` (required, one of
 * FLAG_TYPES), `confidence` (required, 0 to 1), `offset_time` and `end_offset_time` (whole seconds
 * from 0; the end not before the start). Returns it; throws ParamMissing or Invalid naming the field.
 */
export function readFlagReport(params: Params): FlagReport {
  const key = param(params, 'key');
  if (isBlank(key)) throw new ParamMissing('key');
  if (typeof key !== 'string' || !EPISODE_KEY.test(key)) {
    throw new Invalid('key', 'must be 1 to 64 letters, digits or _ . : -');
  }
  if (isBlank(param(params, 'type'))) throw new ParamMissing('type');
  const type = optionalEnum(params, 'type', FLAG_TYPES);
  if (type === undefined) throw new ParamMissing('type');
  if (isBlank(param(params, 'confidence'))) throw new ParamMissing('confidence');
  const confidence = numberParam(params, 'confidence');
  if (confidence === undefined) throw new Invalid('confidence', 'is not a number');
  if (confidence < 0 || confidence > 1) throw new Invalid('confidence', 'must be from 0 to 1');
  const offsetTime = optionalInteger(params, 'offset_time', 0, MAX_INT) ?? null;
  const endOffsetTime = has(params, 'end_offset_time')
    ? (optionalInteger(params, 'end_offset_time', 0, MAX_INT) ?? null)
    : null;
  if (offsetTime !== null && endOffsetTime !== null && endOffsetTime < offsetTime) {
    throw new Invalid('end_offset_time', 'must not be before offset_time');
  }
  return { key, type, confidence, offsetTime, endOffsetTime };
}

/**
 * Reads a rate report: `hz`, the detections per second the device keeps up, 0 (the detectors
 * stopped) to FLAGS_RATE_MAX_HZ. Returns it; throws ParamMissing or Invalid naming `hz`.
 */
export function readFlagRate(params: Params): number {
  if (isBlank(param(params, 'hz'))) throw new ParamMissing('hz');
  const hz = numberParam(params, 'hz');
  if (hz === undefined) throw new Invalid('hz', 'is not a number');
  if (hz < 0 || hz > FLAGS_RATE_MAX_HZ) throw new Invalid('hz', `must be from 0 to ${FLAGS_RATE_MAX_HZ}`);
  return hz;
}

/** A rate in words for the reviewer's note: "0.5", "1", "1.25" (at most two decimals). */
function rateText(hz: number): string {
  return String(Math.round(hz * 100) / 100);
}

/**
 * The comment of a `flags_rate_lowered` incident: what a reviewer reads when the candidate's device
 * analysed less often than asked, or stopped.
 */
export function rateLoweredComment(hz: number): string {
  if (hz === 0)
    return 'The automated flags stopped on the candidate’s device: the rest of the exam was not analysed';
  return `The candidate’s device was slow: the automated flags analysed the camera ${rateText(hz)} times a second`;
}

/**
 * Whether a reported rate is lower than before: than the rate last reported, or the first time
 * than the exam's `detection_hz`.
 */
export function isRateLowered(hz: number, previous: number | null, detectionHz: number): boolean {
  return hz < (previous ?? detectionHz);
}
