import type { Accommodations, ExemptCheck } from '../student-sessions/accommodations.ts';
import type { FlagType } from './flag-types.ts';

/**
 * Which automated flags are recorded as informational only (docs/accommodations.md): kept on the
 * timeline for the record, never raised, never scored (score.ts), never counted on the live wall.
 *
 * - A student with `assistive_technology`: the flags assistive technology sets off by itself. A
 *   screen magnifier or screen reader user looks away from the camera to read (looking_away), a
 *   screen reader speaks (speech), and a magnifier's camera is a virtual camera (virtual_camera).
 * - A student exempt from a check: the flags of what they need not do. Without the webcam no face
 *   can be watched (no_face, multiple_faces, looking_away, face_mismatch, virtual_camera); without
 *   the microphone no speech; without the screen share its end means nothing; without the face photo
 *   there is nothing to compare with; without full screen, leaving it is no incident.
 */
export const ASSISTIVE_TECHNOLOGY_FLAGS: readonly FlagType[] = ['looking_away', 'speech', 'virtual_camera'];

/** The flags each exemption makes informational. */
export const EXEMPTION_FLAGS: Readonly<Record<ExemptCheck, readonly FlagType[]>> = {
  webcam: ['no_face', 'multiple_faces', 'looking_away', 'face_mismatch', 'virtual_camera'],
  microphone: ['speech'],
  screen_share: ['screen_share_ended'],
  mobile: [],
  id_photo: [],
  face_photo: ['face_mismatch'],
  fullscreen: ['fullscreen_exit'],
};

/** True when a flag of `type` is informational for a student with these accommodations. */
export function isInformationalFlag(
  type: FlagType,
  accommodations: Pick<Accommodations, 'assistiveTechnology' | 'exemptions'>,
): boolean {
  if (accommodations.assistiveTechnology && ASSISTIVE_TECHNOLOGY_FLAGS.includes(type)) return true;
  return accommodations.exemptions.some((exemption) => EXEMPTION_FLAGS[exemption.check].includes(type));
}
