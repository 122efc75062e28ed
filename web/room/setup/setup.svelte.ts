/**
 * What the setup stage's parts share: the terms box, the camera picture the photos are taken from,
 * and what still stands between the student and the start (docs/room.md "Setup").
 */
import { room, type CheckValue, type RoomSession, type RoomView } from '../state/room.svelte.ts';
import { SETUP_WORDS } from '../words.ts';

/** The slowest connection the bandwidth check passes, in Mbit/s. */
export const MIN_MBIT = 1;
/** The longest the connection check downloads; a slower line is measured on what arrived by then. */
export const MEASURE_LIMIT_MS = 10000;

/** The session's check fields the setup shows. */
export type CheckField =
  | 'webcam_check'
  | 'microphone_check'
  | 'screenshare_check'
  | 'speakers_check'
  | 'bandwidth_check'
  | 'mobile_check';

class SetupState {
  /** The terms box is ticked. */
  termsAccepted = $state(false);
  /** The terms box's error ('' for none). */
  termsError = $state('');
  /** The camera picture (the photos are taken from it); set by the photos section. */
  preview: HTMLVideoElement | undefined = $state.raw();
}

/** The setup of this page. */
export const setup = new SetupState();

/** A check's value in the session. */
export function checkValue(session: RoomSession, field: string): CheckValue | undefined {
  const value: unknown = (session as unknown as Record<string, unknown>)[field];
  return typeof value === 'string' ? (value as CheckValue) : undefined;
}

/** True when the exam lets a measured slow connection start (docs/room.md): not a live-proctored one. */
export function slowConnectionAccepted(view: RoomView | undefined): boolean {
  if (view === undefined) return false;
  const { session, exam } = view;
  return (
    exam.type !== 'live_proctoring' &&
    session.bandwidth_check === 'failed' &&
    session.bandwidth_speed !== null
  );
}

/** True when the exam has terms and the candidate has not ticked the box yet. */
export function termsPending(view: RoomView | undefined): boolean {
  return Boolean(view?.exam.terms) && !setup.termsAccepted;
}

/** What still stands between the student and the start button, as sentences (none: ready). */
export function missingForStart(view: RoomView | undefined): string[] {
  if (view === undefined) return [SETUP_WORDS.loading];
  const { session, exam } = view;
  if (session.skip_requirements) return [];
  const missing: string[] = [];
  for (const field of session.required_checks) {
    if (field === 'bandwidth_check' && slowConnectionAccepted(view)) continue;
    const value = checkValue(session, field);
    if (value !== 'succeeded') missing.push(SETUP_WORDS.missingCheck(field, value));
  }
  if (exam.web_cam && !session.has_id_card) missing.push(SETUP_WORDS.missingIdCard);
  if (exam.web_cam && !session.has_face_photo) missing.push(SETUP_WORDS.missingFacePhoto);
  return missing;
}

/** The browser and system, as the checks report them to the server. */
function clientDetails(): Record<string, string> {
  const agent = navigator.userAgent;
  const browser = /(Edg|OPR|Chrome|Chromium|Firefox|Version)\/([\d.]+)/.exec(agent);
  const system = /Windows|Mac OS X|Android|iPhone|iPad|CrOS|Linux/.exec(agent);
  const names: Record<string, string> = { Edg: 'Edge', OPR: 'Opera', Version: 'Safari' };
  const name = browser?.[1] ?? '';
  return {
    browser: browser ? (names[name] ?? name) : 'unknown',
    browser_version: browser?.[2] ?? '',
    operating_system: system ? system[0] : 'unknown',
  };
}

/** Saves check results and the browser's description, then shows the answer. */
export async function saveChecks(results: Record<string, unknown>): Promise<void> {
  room.accept(await room.callView('PUT', '/checks', { ...results, ...clientDetails() }));
}
