/**
 * Automated flags as a reviewer reads them (docs/automated-flags.md, docs/review.md): the detectors
 * in the candidate's room report episodes (no face, several faces, a tab switch...) that the service
 * stores as incidents with `source: "automatic"`. This module turns such an incident's fields into
 * words for the review screen and the timeline, and a suspicion score into words for the queue. It
 * holds no rule: the service decides what is a flag and what the score is.
 */
import { t } from '../../../shared/i18n.svelte.ts';
import { formatLocale } from './format-locale.ts';

/** The closed set of flag types (docs/automated-flags.md). */
export const FLAG_TYPES = [
  'no_face',
  'multiple_faces',
  'looking_away',
  'face_mismatch',
  'speech',
  'tab_switch',
  'screen_share_ended',
  'fullscreen_exit',
  'second_screen',
  'virtual_camera',
] as const;
export type FlagType = (typeof FLAG_TYPES)[number];

/** Each type's message key. */
const TYPE_WORDS: Readonly<Record<FlagType, string>> = {
  no_face: 'console.flags.noFace',
  multiple_faces: 'console.flags.multipleFaces',
  looking_away: 'console.flags.lookingAway',
  face_mismatch: 'console.flags.faceMismatch',
  speech: 'console.flags.speech',
  tab_switch: 'console.flags.tabSwitch',
  screen_share_ended: 'console.flags.screenShareEnded',
  fullscreen_exit: 'console.flags.fullscreenExit',
  second_screen: 'console.flags.secondScreen',
  virtual_camera: 'console.flags.virtualCamera',
};

/** The fields of an incident record that make it a flag (null or false on other incidents). */
export interface FlagFields {
  readonly type?: string | null;
  readonly source?: string | null;
  readonly confidence?: number | null;
  readonly end_offset_time?: number | null;
  readonly dismissed?: boolean;
  readonly dismissed_at?: string | null;
  readonly dismissed_by?: number | null;
  /** Recorded for the record only, never raised (assistive technology, an exemption: docs/accommodations.md). */
  readonly informational?: boolean;
}

/** An automatic flag as the review screen shows it. */
export interface ShownFlag {
  /** The type as the API names it (`no_face`); an unknown one is kept as sent. */
  readonly type: string;
  /** The type in words ("No face in view"). */
  readonly words: string;
  /** Whether the type is one this console knows (else its words are only its name, and the comment tells more). */
  readonly known: boolean;
  /** 0..1, or null when the room sent none. */
  readonly confidence: number | null;
  /** Seconds from the recording start when the episode ended; null while it lasts (or unknown). */
  readonly end: number | null;
  readonly dismissed: boolean;
  readonly dismissedAt: string | null;
  readonly dismissedBy: number | null;
  /** Recorded for the record only and never raised (docs/accommodations.md). */
  readonly informational: boolean;
}

/** The type in words ("Several faces in view"); an unknown type reads as its name with spaces. */
export function flagTypeWords(type: string): string {
  const key = (TYPE_WORDS as Readonly<Record<string, string>>)[type];
  return key === undefined ? type.replaceAll('_', ' ') : t(key);
}

/** The flag an incident carries, or undefined for an ordinary incident (not `source: "automatic"`). */
export function flagOf(incident: FlagFields): ShownFlag | undefined {
  if (incident.source !== 'automatic') return undefined;
  const type = incident.type ?? 'unknown';
  return {
    type,
    words: flagTypeWords(type),
    known: Object.hasOwn(TYPE_WORDS, type),
    confidence: typeof incident.confidence === 'number' ? incident.confidence : null,
    end: typeof incident.end_offset_time === 'number' ? incident.end_offset_time : null,
    dismissed: incident.dismissed === true || (incident.dismissed_at ?? null) !== null,
    dismissedAt: incident.dismissed_at ?? null,
    dismissedBy: incident.dismissed_by ?? null,
    informational: incident.informational === true,
  };
}

/** "confidence 83%" (rounded), or "" when the flag has none. */
export function confidenceWords(confidence: number | null): string {
  if (confidence === null || !Number.isFinite(confidence)) return '';
  const share = Math.round(Math.min(1, Math.max(0, confidence)) * 100) / 100;
  return t('console.flags.confidence', {
    percent: new Intl.NumberFormat(formatLocale(), { style: 'percent' }).format(share),
  });
}

/**
 * Who dismissed a flag, in words: "you", the name `names` knows for the id, or "user 12"; "a
 * reviewer" when the user is no longer known (deleted: the service keeps the dismissal).
 */
export function dismisserWords(
  userId: number | null,
  me: number | undefined,
  names: ReadonlyMap<number, string>,
): string {
  if (userId === null) return t('console.flags.aReviewer');
  if (userId === me) return t('console.flags.you');
  return names.get(userId) ?? t('console.flags.userNumber', { id: userId });
}

/** Score bands for the queue: the number alone is hard to read at a glance. */
export function suspicionWords(score: number | null | undefined): string {
  if (score === null || score === undefined || !Number.isFinite(score))
    return t('console.flags.suspicionNoFlags');
  return t(BAND_WORDS[suspicionBand(score)]);
}

const BAND_WORDS = {
  none: 'console.flags.suspicionNone',
  low: 'console.flags.suspicionLow',
  medium: 'console.flags.suspicionMedium',
  high: 'console.flags.suspicionHigh',
} as const;

/** The band as a class name suffix (`none`, `low`, `medium`, `high`), for its colour beside the words. */
export function suspicionBand(score: number | null | undefined): 'none' | 'low' | 'medium' | 'high' {
  if (score === null || score === undefined || !Number.isFinite(score) || score <= 0) return 'none';
  if (score < 20) return 'low';
  if (score < 50) return 'medium';
  return 'high';
}
