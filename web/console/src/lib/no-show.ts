/**
 * No-shows: sessions that never started before the exam's window closed. The service keeps their
 * V3 status (the contract's machine has no such state); the console derives it from the exam's
 * `end_time` and the session's status, and filters on the statuses before a start.
 */
import type { StudentStatus } from './student-status';

/** The statuses of a session that has not started (yet). */
export const NOT_STARTED: readonly StudentStatus[] = [
  'registered',
  'email_sent',
  'after_check_req',
  'in_setup',
  'exam_not_started',
];

/** The value of the status filter that selects no-shows. */
export const NO_SHOW = 'no_show';

/** When the exam's window closed (epoch ms), or undefined while it is open or has no end. */
export function windowClosedAt(endTime: string | number | null | undefined, now: number): number | undefined {
  if (endTime === null || endTime === undefined || endTime === '') return undefined;
  const closes = typeof endTime === 'number' ? endTime : Date.parse(endTime);
  return Number.isFinite(closes) && closes <= now ? closes : undefined;
}

/** True when the session never started and the exam's window has closed. */
export function isNoShow(
  session: { readonly status: string; readonly start_time?: string | number | null },
  closedAt: number | undefined,
): boolean {
  if (closedAt === undefined) return false;
  const started = session.start_time !== null && session.start_time !== undefined;
  return !started && (NOT_STARTED as readonly string[]).includes(session.status);
}
