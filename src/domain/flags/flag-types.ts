/**
 * The automated flags' closed set of types (docs/automated-flags.md). The room's detectors report
 * episodes of these; each becomes one incident whose comment is the type's sentence below, so a
 * reviewer reads the same words on the timeline, in the session record and in the PDF report.
 */
export const FLAG_SENTENCES = {
  no_face: 'Automatic flag: no face was in view of the webcam',
  multiple_faces: 'Automatic flag: more than one face was in view of the webcam',
  looking_away: 'Automatic flag: the candidate looked away from the screen',
  face_mismatch: 'Automatic flag (advisory only): the face in view may not match the face photo',
  speech: 'Automatic flag: speech was heard while the exam forbids talking',
  tab_switch: 'Automatic flag: the candidate switched to another tab or window',
  screen_share_ended: 'Automatic flag: the screen share ended',
  fullscreen_exit: 'Automatic flag: the candidate left full-screen mode',
  second_screen: 'Automatic flag: the browser reports a second screen',
  virtual_camera: 'Automatic flag: the webcam looks like a virtual camera',
} as const;

export type FlagType = keyof typeof FLAG_SENTENCES;

/** Every flag type, in the order of FLAG_SENTENCES. */
export const FLAG_TYPES = Object.keys(FLAG_SENTENCES) as FlagType[];

/** `incidents.source` of a flag: written by a detector, not by a person. */
export const FLAG_SOURCE = 'automatic';

/** `incidents.kind` of a flag (the room's events use their event type as the kind). */
export const FLAG_KIND = 'flag';

/** `incidents.kind` of the note that a device lowered its detection rate: not a flag, never scored. */
export const FLAGS_RATE_LOWERED_KIND = 'flags_rate_lowered';

/** Whether `value` names a flag type. */
export function isFlagType(value: unknown): value is FlagType {
  return typeof value === 'string' && Object.hasOwn(FLAG_SENTENCES, value);
}
