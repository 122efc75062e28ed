import type { LiveStatus } from '../live/live.ts';
import type { Accommodations } from '../student-sessions/accommodations.ts';
import { type CheckValue, SESSION_STATUSES, type SessionStatus } from '../student-sessions/status.ts';
import { CHECK_FIELDS, type CheckField } from '../student-sessions/student-session.ts';

/**
 * The live monitor of an exam (docs/live-monitor.md): what a staff screen shows of each session
 * while the exam runs, and the changes between two looks at the database. Pure: the service reads,
 * the HTTP layer streams.
 */

/** One session as the monitor shows it. Times are epoch milliseconds. */
export interface MonitorSession {
  readonly id: number;
  readonly name: string;
  readonly email: string;
  readonly attempt: number;
  readonly status: SessionStatus;
  readonly checks: { readonly [K in CheckField]: CheckValue };
  readonly incidentsCount: number;
  readonly proctorId: number | null;
  /** The candidate's live connection (live-proctored exams; docs/api-live.md). */
  readonly liveStatus: LiveStatus;
  /** The proctor holds the candidate's clock still. */
  readonly clockPaused: boolean;
  /**
   * The student's accommodations (docs/accommodations.md), so the wall can mark them; null when the
   * student has none.
   */
  readonly accommodations: Accommodations | null;
  /** The candidate is on a rest break (the exam clock stands still). */
  readonly onBreak: boolean;
  /** When the running break ends by itself (epoch ms); null when none runs (or it has no limit). */
  readonly breakEndsAt: number | null;
  /** How many rest breaks the candidate started. */
  readonly breaksTaken: number;
  readonly updatedAt: number;
}

/** How many sessions are in each status, and in all. */
export type StatusCounts = { readonly [S in SessionStatus]: number } & { readonly total: number };

/** Everything the monitor shows of an exam at one moment: its sessions (archived aside), by id. */
export interface MonitorSnapshot {
  readonly examId: number;
  readonly counts: StatusCounts;
  readonly sessions: readonly MonitorSession[];
}

/** What changed between two looks: a session new or changed, a session gone (deleted or archived), new counts. */
export type MonitorChange =
  | { readonly kind: 'session'; readonly session: MonitorSession }
  | { readonly kind: 'removed'; readonly id: number }
  | { readonly kind: 'counts'; readonly counts: StatusCounts };

/** Counts the sessions by status. Returns every status, zero included, and the total. */
export function countByStatus(sessions: Iterable<MonitorSession>): StatusCounts {
  const counts = Object.fromEntries(SESSION_STATUSES.map((status) => [status, 0])) as Record<
    SessionStatus,
    number
  >;
  let total = 0;
  for (const session of sessions) {
    counts[session.status] += 1;
    total += 1;
  }
  return { ...counts, total };
}

/** True when two counts are the same in every status. */
export function sameCounts(a: StatusCounts, b: StatusCounts): boolean {
  return a.total === b.total && SESSION_STATUSES.every((status) => a[status] === b[status]);
}

/** True when the monitor would show the two versions of a session the same. */
export function sameSession(a: MonitorSession, b: MonitorSession): boolean {
  return (
    a.updatedAt === b.updatedAt &&
    a.status === b.status &&
    a.incidentsCount === b.incidentsCount &&
    a.proctorId === b.proctorId &&
    a.liveStatus === b.liveStatus &&
    a.clockPaused === b.clockPaused &&
    a.onBreak === b.onBreak &&
    a.breakEndsAt === b.breakEndsAt &&
    a.breaksTaken === b.breaksTaken &&
    sameAccommodations(a.accommodations, b.accommodations) &&
    a.name === b.name &&
    a.email === b.email &&
    a.attempt === b.attempt &&
    (Object.keys(CHECK_FIELDS) as CheckField[]).every((field) => a.checks[field] === b.checks[field])
  );
}

/** True when two sessions' accommodations are the same (none on both counts as the same). */
function sameAccommodations(a: Accommodations | null, b: Accommodations | null): boolean {
  if (a === null || b === null) return a === b;
  return JSON.stringify(a) === JSON.stringify(b);
}
