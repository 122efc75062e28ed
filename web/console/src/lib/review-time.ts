/**
 * Video time as a reviewer reads it: "mm:ss" (or "h:mm:ss" past an hour), seconds from the session's
 * recording start, which is also the exam's clock (an incident's `offset_time` is on the same clock).
 */
import { flagOf, type FlagFields, type ShownFlag } from './flags.ts';

/** "04:07" for 247 s, "1:02:03" for 3,723 s; negative or unknown time reads "00:00". */
export function clockTime(seconds: number): string {
  const whole = Number.isFinite(seconds) && seconds > 0 ? Math.floor(seconds) : 0;
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const rest = whole % 60;
  const mmss = `${String(minutes).padStart(2, '0')}:${String(rest).padStart(2, '0')}`;
  return hours > 0 ? `${hours}:${mmss}` : mmss;
}

/** An incident placed on the video clock, for the timeline and the shortcuts. */
export interface TimedIncident {
  readonly id: number;
  /** Seconds from the recording start. */
  readonly at: number;
  readonly comment: string;
  /** The automatic flag this incident is (docs/automated-flags.md), or undefined for any other. */
  readonly flag?: ShownFlag | undefined;
  /** The rest break this incident begins or ends (docs/accommodations.md), or undefined for any other. */
  readonly rest?: 'started' | 'ended' | undefined;
}

/** A rest break on the video clock: from its start to its end (null while it runs, or when its end is missing). */
export interface RestSpan {
  /** The `break_started` incident. */
  readonly id: number;
  readonly start: number;
  readonly end: number | null;
}

/**
 * The rest breaks among `incidents` (in time order): each `break_started` with the `break_ended`
 * after it; an end without a start is left out, a start without an end runs on.
 */
export function restSpans(incidents: readonly TimedIncident[]): RestSpan[] {
  const spans: RestSpan[] = [];
  let open: { id: number; start: number } | undefined;
  for (const incident of incidents) {
    if (incident.rest === 'started') {
      if (open !== undefined) spans.push({ ...open, end: null });
      open = { id: incident.id, start: incident.at };
    } else if (incident.rest === 'ended' && open !== undefined) {
      spans.push({ ...open, end: incident.at });
      open = undefined;
    }
  }
  if (open !== undefined) spans.push({ ...open, end: null });
  return spans;
}

/**
 * The incidents that have a place on the clock, in time order: `offset_time` when the incident has
 * one, otherwise its creation time counted from `startedAt` (an ISO time; none: left out).
 */
export function timedIncidents(
  incidents: readonly ({
    id: number;
    comment: string;
    offset_time: number | null;
    created_at: string | null;
  } & FlagFields)[],
  startedAt: string | null,
): TimedIncident[] {
  const start = startedAt === null ? Number.NaN : new Date(startedAt).getTime();
  const timed: TimedIncident[] = [];
  for (const incident of incidents) {
    let at = incident.offset_time;
    if (at === null && incident.created_at !== null && Number.isFinite(start)) {
      at = Math.max(0, (new Date(incident.created_at).getTime() - start) / 1000);
    }
    if (at === null || !Number.isFinite(at)) continue;
    const rest =
      incident.type === 'break_started' ? 'started' : incident.type === 'break_ended' ? 'ended' : undefined;
    timed.push({ id: incident.id, at, comment: incident.comment, flag: flagOf(incident), rest });
  }
  return timed.sort((a, b) => a.at - b.at || a.id - b.id);
}

/**
 * The incident after `current` (more than half a second ahead, so pressing N at a marker moves on),
 * or undefined at the last one.
 */
export function nextIncident(
  incidents: readonly TimedIncident[],
  current: number,
): TimedIncident | undefined {
  return incidents.find((incident) => incident.at > current + 0.5);
}

/**
 * The incident before `current` (more than a second behind, so pressing P while playing just past a
 * marker goes to the one before it), or undefined at the first one.
 */
export function previousIncident(
  incidents: readonly TimedIncident[],
  current: number,
): TimedIncident | undefined {
  return incidents.findLast((incident) => incident.at < current - 1);
}
