/**
 * What the setup stage's parts share: the terms box, the camera picture the photos are taken from,
 * and what still stands between the student and the start (docs/room.md "Setup").
 */
import { t } from '../../shared/i18n.svelte.ts';
import type { Phrase } from '../../shared/phrase.ts';
import { room, stageOf, type CheckValue, type RoomSession, type RoomView } from '../state/room.svelte.ts';
import { isExemptField, photosNeeded, recordsAnything } from './exemptions.ts';

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

/** What each check is called in its result line. */
const CHECK_NAMES: Readonly<Record<CheckField, string>> = {
  webcam_check: 'room.checks.name.webcam',
  microphone_check: 'room.checks.name.microphone',
  screenshare_check: 'room.checks.name.screenshare',
  speakers_check: 'room.checks.name.speakers',
  bandwidth_check: 'room.checks.name.bandwidth',
  mobile_check: 'room.checks.name.mobile',
};

/** A check's state in words. */
const CHECK_STATES: Readonly<Record<CheckValue, string>> = {
  not_started: 'room.checks.state.notStarted',
  not_completed: 'room.checks.state.notCompleted',
  succeeded: 'room.checks.state.succeeded',
  failed: 'room.checks.state.failed',
  skipped: 'room.checks.state.skipped',
};

function isCheckField(field: string): field is CheckField {
  return Object.hasOwn(CHECK_NAMES, field);
}

/** A check's name in the page's language (the field itself for one the page does not know). */
export function checkName(field: string): string {
  return isCheckField(field) ? t(CHECK_NAMES[field]) : field;
}

/** A check's state in the page's language. */
export function checkState(value: CheckValue | undefined): string {
  return value !== undefined && Object.hasOwn(CHECK_STATES, value) ? t(CHECK_STATES[value]) : String(value);
}

/**
 * The checks the candidate must pass before the start: the view's `required_checks`, less the ones
 * the candidate is exempt from (exemptions.ts), and less the connection when nothing is recorded.
 * The server judges the same way; this keeps the page right while its view still lists them.
 */
export function requiredFields(view: RoomView | undefined): string[] {
  if (view === undefined) return [];
  const recording = recordsAnything(view);
  return view.session.required_checks.filter(
    (field) => !isExemptField(view, field) && (field !== 'bandwidth_check' || recording),
  );
}

/**
 * A result line: "Camera: passed", "Speakers: passed (optional)", with the measured speed for the
 * connection check ("Connection speed: failed (0.4 Mbit/s, slow)"), and "Camera: not needed for
 * you" for a check the candidate is exempt from. Reactive in components.
 */
export function resultLine(session: RoomSession, field: CheckField): string {
  if (isExemptField(room.view, field)) return t('room.setup.exempt.line', { check: checkName(field) });
  const value = checkValue(session, field) ?? 'not_started';
  let state = checkState(value);
  if (field === 'bandwidth_check' && session.bandwidth_speed !== null && value !== 'not_started') {
    const mbit = session.bandwidth_speed;
    state =
      value === 'failed'
        ? t('room.checks.speedSlow', { state, mbit })
        : t('room.checks.speed', { state, mbit });
  }
  const check = checkName(field);
  return requiredFields(room.view).includes(field)
    ? t('room.checks.line', { check, state })
    : t('room.checks.lineOptional', { check, state });
}

class SetupState {
  /** The terms box is ticked. */
  termsAccepted = $state(false);
  /** The terms box's error ('' for none). */
  termsError: Phrase | '' = $state.raw('');
  /**
   * The version of the privacy panel the candidate accepted ('' for none): the checks show only
   * while it is the view's privacy.version (PrivacyPanel.svelte), and the start sends it.
   */
  privacyAccepted = $state('');
  /** The server refused the start because the panel changed since it was accepted: say so on it. */
  privacyChanged = $state(false);
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

/** True when the candidate accepted the privacy panel the view states now. Reactive. */
export function privacyAccepted(view: RoomView | undefined): boolean {
  return view !== undefined && setup.privacyAccepted === view.privacy.version;
}

/** True when the exam has terms and the candidate has not ticked the box yet. */
export function termsPending(view: RoomView | undefined): boolean {
  return Boolean(view?.exam.terms) && !setup.termsAccepted;
}

/** What still stands between the student and the start button, as words (none: ready). Reactive. */
export function missingForStart(view: RoomView | undefined): string[] {
  if (view === undefined) return [t('room.setup.loading')];
  const { session } = view;
  if (session.skip_requirements) return [];
  const missing: string[] = [];
  for (const field of requiredFields(view)) {
    if (field === 'bandwidth_check' && slowConnectionAccepted(view)) continue;
    const value = checkValue(session, field);
    if (value !== 'succeeded')
      missing.push(t('room.checks.missing', { check: checkName(field), state: checkState(value) }));
  }
  // The photos, unless the candidate is exempt from them (or from the camera they are taken with).
  const photos = photosNeeded(view);
  if (photos.idCard && !session.has_id_card) missing.push(t('room.setup.start.missingIdCard'));
  if (photos.face && !session.has_face_photo) missing.push(t('room.setup.start.missingFacePhoto'));
  return missing;
}

/** The check fields the exam asks for, whether or not this candidate must pass them. */
function askedFields(view: RoomView): CheckField[] {
  const { exam } = view;
  const fields: CheckField[] = [];
  if (exam.web_cam) fields.push('webcam_check', 'microphone_check');
  if (exam.screen_share) fields.push('screenshare_check');
  if (exam.mobile_cam) fields.push('mobile_check');
  return fields;
}

/**
 * The exempt checks of the exam the session has not marked `skipped` yet (so staff read `skipped`
 * in the record rather than "not checked yet"). Returns the changes for saveChecks, or undefined
 * when there is nothing to mark (or the setup is over).
 */
export function exemptChecksToSkip(view: RoomView | undefined): Record<string, CheckValue> | undefined {
  if (view === undefined || stageOf(view.session.status) !== 'setup') return undefined;
  const changes: Record<string, CheckValue> = {};
  for (const field of askedFields(view)) {
    if (isExemptField(view, field) && checkValue(view.session, field) !== 'skipped')
      changes[field] = 'skipped';
  }
  return Object.keys(changes).length === 0 ? undefined : changes;
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
