import type { MonitorSession, MonitorSnapshot, StatusCounts } from '../../domain/monitor/monitor.ts';
import { presentAccommodations } from '../../domain/student-sessions/accommodations.ts';
import { SESSION_STATUSES } from '../../domain/student-sessions/status.ts';
import { CHECK_FIELDS, type CheckField } from '../../domain/student-sessions/student-session.ts';
import { isoTime } from '../time.ts';

/** The counts by status, every status present (0 included), then `total`. */
export function presentStatusCountsV3(counts: StatusCounts): Record<string, number> {
  const body: Record<string, number> = {};
  for (const status of SESSION_STATUSES) body[status] = counts[status];
  body.total = counts.total;
  return body;
}

/**
 * One session as the monitor shows it: `id, name, email, attempt, status, checks` (the six check
 * fields by their record names), `incidents_count, proctor_id, live_status, clock_paused, updated_at`.
 */
export function presentMonitorSessionV3(session: MonitorSession): Record<string, unknown> {
  const checks: Record<string, string> = {};
  for (const [field, name] of Object.entries(CHECK_FIELDS) as [CheckField, string][]) {
    checks[name] = session.checks[field];
  }
  return {
    id: session.id,
    name: session.name,
    email: session.email,
    attempt: session.attempt,
    status: session.status,
    checks,
    incidents_count: session.incidentsCount,
    proctor_id: session.proctorId,
    live_status: session.liveStatus,
    clock_paused: session.clockPaused,
    accommodations: session.accommodations === null ? null : presentAccommodations(session.accommodations),
    on_break: session.onBreak,
    break_ends_at: session.breakEndsAt === null ? null : isoTime(session.breakEndsAt),
    breaks_taken: session.breaksTaken,
    updated_at: isoTime(session.updatedAt),
  };
}

/** The whole view: `{exam_id, counts, sessions}` (the JSON answer's `monitor` and the `snapshot` event). */
export function presentMonitorSnapshotV3(snapshot: MonitorSnapshot): Record<string, unknown> {
  return {
    exam_id: snapshot.examId,
    counts: presentStatusCountsV3(snapshot.counts),
    sessions: snapshot.sessions.map(presentMonitorSessionV3),
  };
}
