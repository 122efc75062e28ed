import type { Db } from '../../db/database.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { NotFound } from '../errors.ts';
import { findVisibleExam } from '../exams/exam-access.ts';
import {
  countByStatus,
  type MonitorChange,
  type MonitorSession,
  type MonitorSnapshot,
  sameCounts,
  sameSession,
} from './monitor.ts';
import {
  incidentTallyOf,
  incidentTallyOfExam,
  liveSessionCount,
  liveSessionIds,
  liveSessionsOf,
  type MonitorRow,
  sessionsByIds,
  sessionsUpdatedSince,
  sessionsWithIncidentsSince,
} from './monitor.repository.ts';

/**
 * How far before the newest change it has seen a look reaches back. Any process may write a
 * session (several `invigil serve` share one database), each stamping `updated_at` with its own
 * clock, and a transaction becomes visible only when it commits: a change stamped up to this long
 * before the newest one seen is still found. Changes found twice are told once (compared first).
 */
export const LOOKBACK_MS = 30_000;

/** One staff screen's view of an exam, kept current by looking at the database again and again. */
export interface MonitorFeed {
  /** The exam as it was when the feed opened. */
  readonly snapshot: MonitorSnapshot;
  /**
   * Looks at the database once: the sessions changed (status, checks, proctor, name...), those
   * with new incidents, new ones, and those gone (deleted or archived) since the last look, then
   * the counts if they moved. Returns the changes (an empty list when nothing moved); throws what
   * the database throws.
   */
  poll(): Promise<MonitorChange[]>;
  /**
   * The newest change the feed has seen (epoch ms of an `updated_at` or an incident's `created_at`):
   * grows with every change, so it serves as an event id. Returns it.
   */
  cursor(): number;
  /** True while the actor may still read the exam (it may be deleted, or a co-manager removed). */
  stillVisible(): Promise<boolean>;
  /** Ends the feed (it stops counting as open). Idempotent. */
  close(): void;
}

/** The live monitor of an exam, for whoever may read it. */
export interface MonitorService {
  /** The monitor's view of an exam now. Throws NotFound (Exam) when missing, deleted or out of scope. */
  read(actor: Actor, examId: string | number): Promise<MonitorSnapshot>;
  /** Opens a feed: the view now, then its changes on each poll. Throws NotFound (Exam) as read does. */
  open(actor: Actor, examId: string | number): Promise<MonitorFeed>;
  /** How many feeds are open in this process. */
  openFeeds(): number;
}

function withIncidents(rows: readonly MonitorRow[], counts: ReadonlyMap<number, number>): MonitorSession[] {
  return rows.map((row) => ({ ...row.session, incidentsCount: counts.get(row.session.id) ?? 0 }));
}

/**
 * Builds the monitor over the database and the clock. Returns the service; building it throws
 * nothing and opens nothing.
 */
export function createMonitorService(deps: { db: Db; clock: Clock }): MonitorService {
  const { db, clock } = deps;
  let open = 0;

  async function look(examId: number): Promise<{ snapshot: MonitorSnapshot; newestIncident: number }> {
    const [rows, incidents] = await Promise.all([
      liveSessionsOf(db, examId),
      incidentTallyOfExam(db, examId),
    ]);
    const sessions = withIncidents(rows, incidents.counts);
    return {
      snapshot: { examId, counts: countByStatus(sessions), sessions },
      newestIncident: incidents.newest,
    };
  }

  function feedOf(
    actor: Actor,
    examId: number,
    start: { snapshot: MonitorSnapshot; newestIncident: number },
  ) {
    const known = new Map(start.snapshot.sessions.map((session) => [session.id, session]));
    let counts = start.snapshot.counts;
    // Where the next look starts, at least as far back as this process's own clock says.
    const floor = clock.now() - LOOKBACK_MS;
    let sessionMark = start.snapshot.sessions.reduce(
      (mark, session) => Math.max(mark, session.updatedAt),
      floor,
    );
    let incidentMark = Math.max(floor, start.newestIncident);
    let closed = false;
    open += 1;

    /** Applies what a look found to `known`, returning the sessions that changed or went. */
    function apply(rows: readonly MonitorRow[], incidentOnly: readonly number[], tally: Map<number, number>) {
      const changes: MonitorChange[] = [];
      const next = new Map<number, MonitorSession | undefined>();
      for (const row of rows) {
        next.set(
          row.session.id,
          row.archived ? undefined : { ...row.session, incidentsCount: tally.get(row.session.id) ?? 0 },
        );
      }
      for (const id of incidentOnly) {
        const before = known.get(id);
        if (!next.has(id) && before !== undefined)
          next.set(id, { ...before, incidentsCount: tally.get(id) ?? 0 });
      }
      for (const [id, session] of [...next].sort(([a], [b]) => a - b)) {
        const before = known.get(id);
        if (session === undefined) {
          if (known.delete(id)) changes.push({ kind: 'removed', id });
        } else if (before === undefined || !sameSession(before, session)) {
          known.set(id, session);
          changes.push({ kind: 'session', session });
        }
      }
      return changes;
    }

    /** Finds sessions deleted, or created unseen by the marks, when the live count disagrees. */
    async function reconcile(): Promise<MonitorChange[]> {
      if ((await liveSessionCount(db, examId)) === known.size) return [];
      const live = await liveSessionIds(db, examId);
      const gone = [...known.keys()].filter((id) => !live.has(id));
      const added = [...live].filter((id) => !known.has(id));
      const [rows, tally] = await Promise.all([sessionsByIds(db, examId, added), incidentTallyOf(db, added)]);
      const changes: MonitorChange[] = gone.map((id) => ({ kind: 'removed', id }));
      for (const id of gone) known.delete(id);
      return [...changes, ...apply(rows, [], tally.counts)];
    }

    const feed: MonitorFeed = {
      snapshot: start.snapshot,

      async poll() {
        const [rows, incidentIds] = await Promise.all([
          sessionsUpdatedSince(db, examId, sessionMark - LOOKBACK_MS),
          sessionsWithIncidentsSince(db, examId, incidentMark - LOOKBACK_MS),
        ]);
        const touched = new Set(rows.map((row) => row.session.id));
        const incidentOnly = incidentIds.filter((id) => !touched.has(id));
        const tally = await incidentTallyOf(db, [...touched, ...incidentOnly]);
        for (const row of rows) sessionMark = Math.max(sessionMark, row.session.updatedAt);
        incidentMark = Math.max(incidentMark, tally.newest);
        const changes = [...apply(rows, incidentOnly, tally.counts), ...(await reconcile())];
        const now = countByStatus(known.values());
        if (!sameCounts(now, counts)) {
          counts = now;
          changes.push({ kind: 'counts', counts });
        }
        return changes;
      },

      cursor() {
        return Math.max(sessionMark, incidentMark);
      },

      async stillVisible() {
        try {
          await findVisibleExam(db, actor, examId);
          return true;
        } catch (error) {
          if (error instanceof NotFound) return false;
          throw error;
        }
      },

      close() {
        if (closed) return;
        closed = true;
        open -= 1;
      },
    };
    return feed;
  }

  return {
    async read(actor, examId) {
      const exam = await findVisibleExam(db, actor, examId);
      return (await look(exam.id)).snapshot;
    },

    async open(actor, examId) {
      const exam = await findVisibleExam(db, actor, examId);
      return feedOf(actor, exam.id, await look(exam.id));
    },

    openFeeds() {
      return open;
    },
  };
}
