/**
 * The checks a student may be exempted from (docs/accommodations.md), in the service's order
 * (src/domain/student-sessions/accommodations.ts EXEMPT_CHECKS, which the pages cannot import):
 * the room's setup and the console both name them.
 */
export const EXEMPT_CHECKS = [
  'webcam',
  'microphone',
  'screen_share',
  'mobile',
  'id_photo',
  'face_photo',
  'fullscreen',
] as const;
export type ExemptCheck = (typeof EXEMPT_CHECKS)[number];

/** True when `value` names one of EXEMPT_CHECKS. */
export function isExemptCheck(value: unknown): value is ExemptCheck {
  return typeof value === 'string' && (EXEMPT_CHECKS as readonly string[]).includes(value);
}
