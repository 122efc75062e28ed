import { FLAG_SOURCE, type FlagType } from './flag-types.ts';

/**
 * The suspicion score of a session (0 to 100), which ranks the review queue. It is built from the
 * session's automated flags that no reviewer dismissed and that were raised (an informational flag,
 * informational.ts, is kept for the record and never scored):
 *
 *   points(flag) = weight(type) × confidence × duration factor
 *   duration factor = 1 + (end_offset_time − offset_time) / 60, at most 3
 *                     (1 while the episode has no end, or ends where it began)
 *   score = min(100, ⌊Σ points⌋)
 *
 * So a one-minute episode weighs twice a momentary one, and anything past two minutes three times;
 * a certain virtual camera (weight 20) scores 20, five short tab switches at confidence 1 score 40.
 * The weights say how much a type, on its own, suggests something a reviewer should watch; a
 * signal that is often innocent (glancing away, leaving full screen) weighs little. The score
 * orders work; it decides nothing (docs/automated-flags.md).
 *
 * The review queue sorts in SQL, so the same formula is written there too
 * (flags.repository.ts, suspicionScoreSql), from these constants; a test holds the two together.
 */
export const FLAG_WEIGHTS: Readonly<Record<FlagType, number>> = {
  no_face: 10,
  multiple_faces: 15,
  looking_away: 5,
  face_mismatch: 8,
  speech: 10,
  tab_switch: 8,
  screen_share_ended: 10,
  fullscreen_exit: 5,
  second_screen: 10,
  virtual_camera: 20,
};

/** Seconds of an episode that add 1 to its duration factor. */
export const DURATION_UNIT_SECONDS = 60;
/** The largest duration factor. */
export const DURATION_FACTOR_MAX = 3;
/** The largest score. */
export const SUSPICION_SCORE_MAX = 100;
/** Added before rounding down, so a sum such as 2.9999999999999996 counts as the 3 it means. */
export const SCORE_EPSILON = 1e-9;

/** What the score reads of an incident (any incident: only undismissed, raised automatic flags count). */
export interface ScoredIncident {
  readonly source: string | null;
  readonly type: string | null;
  readonly confidence: number | null;
  readonly offsetTime: number | null;
  readonly endOffsetTime: number | null;
  readonly dismissedAt: number | null;
  /** Recorded for the record only (informational.ts): never scored. Absent reads as false. */
  readonly informational?: boolean;
}

function weightOf(type: string | null): number {
  return type !== null && Object.hasOwn(FLAG_WEIGHTS, type) ? FLAG_WEIGHTS[type as FlagType] : 0;
}

/** An episode's duration factor: from 1 (no end, or no length) up to DURATION_FACTOR_MAX. */
export function durationFactor(offsetTime: number | null, endOffsetTime: number | null): number {
  if (offsetTime === null || endOffsetTime === null || endOffsetTime <= offsetTime) return 1;
  return Math.min(DURATION_FACTOR_MAX, 1 + (endOffsetTime - offsetTime) / DURATION_UNIT_SECONDS);
}

/** The points one incident adds: 0 unless it is a raised (not informational) automatic flag no one dismissed. */
export function flagPoints(incident: ScoredIncident): number {
  if (incident.source !== FLAG_SOURCE || incident.dismissedAt !== null || incident.informational === true)
    return 0;
  const confidence = Math.min(1, Math.max(0, incident.confidence ?? 0));
  return weightOf(incident.type) * confidence * durationFactor(incident.offsetTime, incident.endOffsetTime);
}

/** The suspicion score of a session's incidents: a whole number from 0 to SUSPICION_SCORE_MAX. */
export function suspicionScore(incidents: readonly ScoredIncident[]): number {
  const total = incidents.reduce((sum, incident) => sum + flagPoints(incident), 0);
  return Math.min(SUSPICION_SCORE_MAX, Math.floor(total + SCORE_EPSILON));
}
