/**
 * The phone as a second camera (step 13, docs/room.md "The phone"): in a `mobile_cam` exam the
 * student pairs a phone with the session, by the QR code the room shows (`{PUBLIC_URL}/m/<pairing
 * token>`) or by PIN and email at `{PUBLIC_URL}/m`; the phone then records a side view as a third
 * stream (`source: "mobile"`). These are the rules; mobile.service.ts applies them.
 */
import type { SessionStatus } from '../student-sessions/status.ts';

/** What the room and the staff see of the phone. */
export const MOBILE_STATUSES = ['not_paired', 'paired', 'streaming', 'lost'] as const;
export type MobileStatus = (typeof MOBILE_STATUSES)[number];

/** The phone as the room (the computer) shows it; null fields once the session is finished. */
export interface RoomMobile {
  readonly pairingUrl: string | null;
  readonly pairingAddress: string;
  readonly pinCode: string | null;
  readonly status: MobileStatus;
  readonly device: string | null;
  readonly lastSeenAt: number | null;
  readonly chunksCount: number;
}

/** A phone not heard from for this long (no heartbeat, clip or chunk) is lost. */
export const MOBILE_LOST_MS = 15_000;
/**
 * How long after the end of a session the phone's last chunks are still taken: the phone learns of
 * the end from its next request (a heartbeat every 5 s), then stops its recorder and sends the chunk
 * recorded up to then, which began before the end.
 */
export const MOBILE_FINISH_GRACE_MS = 15_000;

/** The incidents of a phone lost and back during the exam: kind → the record's comment. */
export const MOBILE_INCIDENTS = {
  mobile_lost: 'The phone camera stopped sending video',
  mobile_returned: 'The phone camera is sending video again',
} as const;
export type MobileIncidentKind = keyof typeof MOBILE_INCIDENTS;

/** The 404 message of a pairing token that names no session (never made, or replaced). */
export const NO_PHONE = "Couldn't find this phone link: scan the newest code shown in the exam room";
/** The 422 message of a PIN and email that match no session waiting for a phone. */
export const WRONG_PIN = 'That PIN and email do not match an exam that is waiting for a phone';
/** The 409 message of pairing with a finished session. */
export const PHONE_NOT_NEEDED = 'This exam is finished: the phone is no longer needed';
/** The 409 message of the pairing code of an exam without a phone. */
export const NO_MOBILE_CAM = 'This exam does not use a phone camera';
/** The 409 message of a check clip sent once the exam has started. */
export const CHECK_CLOSED = 'The phone check is part of the setup; the exam has already started';

/** The 422 detail of a room that reports the phone's check as passed itself. */
export const MOBILE_CHECK_BY_PHONE = 'is passed by the phone camera check, not by the room';

/** The least a check clip may hold to count as frames that arrived. */
export const CHECK_CLIP_MIN_BYTES = 1024;

/** The longest device description kept. */
export const MAX_DEVICE_TEXT = 120;

/** Statuses in which the phone may pair and check (the room's setup and before it). */
const SETUP_STATUSES: readonly SessionStatus[] = [
  'registered',
  'email_sent',
  'after_check_req',
  'exam_not_started',
  'in_setup',
];

/** True when the session is still before its start (the phone may pair and run its check). */
export function inSetup(status: SessionStatus): boolean {
  return SETUP_STATUSES.includes(status);
}

/**
 * The status a phone has at `now`, from what is stored: a paired or streaming phone not heard from for
 * MOBILE_LOST_MS is lost; otherwise the stored status stands (the phone's heartbeat says whether it
 * streams).
 * Returns it with, for a phone that just became lost, when it was lost (last heard + MOBILE_LOST_MS).
 */
export function settledStatus(
  state: { readonly mobileStatus: MobileStatus; readonly mobileSeenAt: number | null },
  now: number,
): { status: MobileStatus; lostAt: number | null } {
  const { mobileStatus: status, mobileSeenAt: seenAt } = state;
  if ((status === 'paired' || status === 'streaming') && seenAt !== null && now - seenAt > MOBILE_LOST_MS) {
    return { status: 'lost', lostAt: seenAt + MOBILE_LOST_MS };
  }
  return { status, lostAt: null };
}

/** The address the QR code holds. */
export function pairingUrl(publicUrl: string, mobileToken: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/m/${mobileToken}`;
}

/** The short address a phone that cannot scan types in. */
export function pairingAddress(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/m`;
}

/** Reads a stored phone status; an unknown value (a corrupted row) reads as not paired. */
export function parseMobileStatus(value: string): MobileStatus {
  return MOBILE_STATUSES.find((known) => known === value) ?? 'not_paired';
}
