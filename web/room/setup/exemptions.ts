/**
 * The checks the candidate is exempt from (docs/accommodations.md), as the room view names them in
 * `accommodations.exemptions` (check names only: the reasons are for staff). Read defensively, so
 * a view without the block (an older server, a student without accommodations) means no exemption.
 * The setup shows an exempt check as "Not needed for you" and never asks for what it stands for.
 */
import { EXEMPT_CHECKS, type ExemptCheck, isExemptCheck } from '../../shared/exempt-checks.ts';
import type { RoomView } from '../state/room.svelte.ts';

export { EXEMPT_CHECKS, type ExemptCheck } from '../../shared/exempt-checks.ts';

/** The session's check field each exemption stands in for, where it has one. */
export const EXEMPT_CHECK_FIELDS: Readonly<Partial<Record<ExemptCheck, string>>> = {
  webcam: 'webcam_check',
  microphone: 'microphone_check',
  screen_share: 'screenshare_check',
  mobile: 'mobile_check',
};

/** The name of one listed exemption: a check name, or an object's `check`. */
function checkOf(item: unknown): unknown {
  return typeof item === 'object' && item !== null && 'check' in item ? item.check : item;
}

/**
 * The checks the view's candidate is exempt from: `accommodations.exemptions` of the view (or of
 * its session), each a check name or `{check}`. Returns the set (empty when the view has none).
 */
export function exemptionsOf(view: RoomView | undefined): ReadonlySet<ExemptCheck> {
  const found = new Set<ExemptCheck>();
  if (view === undefined) return found;
  const holders: unknown[] = [view, view.session];
  for (const holder of holders) {
    const accommodations: unknown =
      typeof holder === 'object' && holder !== null && 'accommodations' in holder
        ? holder.accommodations
        : undefined;
    const list: unknown =
      typeof accommodations === 'object' && accommodations !== null && 'exemptions' in accommodations
        ? accommodations.exemptions
        : undefined;
    if (!Array.isArray(list)) continue;
    for (const item of list as unknown[]) {
      const check = checkOf(item);
      if (isExemptCheck(check)) found.add(check);
    }
  }
  return found;
}

/** True when the view's candidate is exempt from `check`. */
export function isExempt(view: RoomView | undefined, check: ExemptCheck): boolean {
  return exemptionsOf(view).has(check);
}

/** True when the session's check `field` (webcam_check, …) stands for a check the candidate is exempt from. */
export function isExemptField(view: RoomView | undefined, field: string): boolean {
  const exempt = exemptionsOf(view);
  return EXEMPT_CHECKS.some((check) => exempt.has(check) && EXEMPT_CHECK_FIELDS[check] === field);
}

/**
 * Whether the room records anything of this candidate: the camera stream unless both the camera
 * and the microphone are exempt, the screen unless its sharing is, the phone unless it is. The
 * connection check is needed only then (src/domain/room/room.ts recordedStreams).
 */
export function recordsAnything(view: RoomView | undefined): boolean {
  if (view === undefined) return false;
  const { exam } = view;
  const exempt = exemptionsOf(view);
  return (
    (exam.web_cam && !(exempt.has('webcam') && exempt.has('microphone'))) ||
    (exam.screen_share && !exempt.has('screen_share')) ||
    (exam.mobile_cam && !exempt.has('mobile'))
  );
}

/**
 * Whether the setup takes the two photos: only with the camera (they are taken from its picture),
 * and each unless the candidate is exempt from it. Returns the photos it takes.
 */
export function photosNeeded(view: RoomView | undefined): { idCard: boolean; face: boolean } {
  if (view === undefined || !view.exam.web_cam || isExempt(view, 'webcam')) {
    return { idCard: false, face: false };
  }
  return { idCard: !isExempt(view, 'id_photo'), face: !isExempt(view, 'face_photo') };
}
