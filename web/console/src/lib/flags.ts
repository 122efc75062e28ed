/**
 * Automated flags as a reviewer reads them (docs/automated-flags.md, docs/review.md): the detectors
 * in the candidate's room report episodes (no face, several faces, a tab switch...) that the service
 * stores as incidents with `source: "automatic"`. This module turns such an incident's fields into
 * words for the review screen and the timeline, and a suspicion score into words for the queue. It
 * holds no rule: the service decides what is a flag and what the score is.
 */

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

const TYPE_WORDS: Readonly<Record<FlagType, string>> = {
  no_face: 'No face in view',
  multiple_faces: 'Several faces in view',
  looking_away: 'Looking away',
  face_mismatch: 'Face not matching the photo (advisory)',
  speech: 'Speech',
  tab_switch: 'Tab or window switch',
  screen_share_ended: 'Screen share ended',
  fullscreen_exit: 'Full screen left',
  second_screen: 'Second screen',
  virtual_camera: 'Virtual camera',
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
}

/** The type in words ("Several faces in view"); an unknown type reads as its name with spaces. */
export function flagTypeWords(type: string): string {
  return (TYPE_WORDS as Readonly<Record<string, string>>)[type] ?? type.replaceAll('_', ' ');
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
  };
}

/** "confidence 83%" (rounded), or "" when the flag has none. */
export function confidenceWords(confidence: number | null): string {
  if (confidence === null || !Number.isFinite(confidence)) return '';
  return `confidence ${Math.round(Math.min(1, Math.max(0, confidence)) * 100)}%`;
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
  if (userId === null) return 'a reviewer';
  if (userId === me) return 'you';
  return names.get(userId) ?? `user ${userId}`;
}

/** Score bands for the queue: the number alone is hard to read at a glance. */
export function suspicionWords(score: number | null | undefined): string {
  if (score === null || score === undefined || !Number.isFinite(score)) return 'no flags';
  if (score <= 0) return 'none';
  if (score < 20) return 'low';
  if (score < 50) return 'medium';
  return 'high';
}

/** The band as a class name suffix (`none`, `low`, `medium`, `high`), for its colour beside the words. */
export function suspicionBand(score: number | null | undefined): 'none' | 'low' | 'medium' | 'high' {
  const words = suspicionWords(score);
  return words === 'no flags' ? 'none' : (words as 'none' | 'low' | 'medium' | 'high');
}
