import type { Db } from '../../db/database.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, Invalid, NotFound } from '../errors.ts';
import { parseId } from '../ids.ts';
import { canReviewSession } from '../reviews/review.ts';
import { findVisibleSession } from '../student-sessions/session-access.ts';
import type { Incident } from '../student-sessions/student-session.ts';
import { FLAG_SOURCE } from './flag-types.ts';
import { findIncidentOfSession, setIncidentDismissal } from './flags.repository.ts';

/**
 * A reviewer's actions on automated flags (docs/automated-flags.md). Who may act is who may record
 * a verdict (canReviewSession): the exam's managers and the institute's reviewers.
 */
export interface FlagsService {
  /**
   * Marks an automated flag dismissed (kept, marked; it stops counting towards the suspicion score).
   * A flag already dismissed keeps its first dismissal. Returns the incident; throws NotFound
   * (Student Session, Incident), Forbidden (the actor may see but not review), or Invalid
   * (`incident_id`: not an automated flag).
   */
  dismiss(actor: Actor, sessionId: string | number, incidentId: string | number): Promise<Incident>;
  /** Clears a flag's dismissal. Returns the incident; throws as dismiss. */
  restore(actor: Actor, sessionId: string | number, incidentId: string | number): Promise<Incident>;
}

/** Builds the flag actions over the database and the clock. Returns the service; throws nothing. */
export function createFlagsService(deps: { readonly db: Db; readonly clock: Clock }): FlagsService {
  const { db, clock } = deps;

  async function change(
    actor: Actor,
    sessionId: string | number,
    incidentId: string | number,
    dismiss: boolean,
  ): Promise<Incident> {
    const { session, exam } = await findVisibleSession(db, actor, sessionId);
    const numeric = parseId(incidentId);
    const incident = numeric === undefined ? undefined : await findIncidentOfSession(db, session.id, numeric);
    if (incident === undefined) throw new NotFound('Incident', incidentId);
    if (!canReviewSession(actor, exam)) throw new Forbidden();
    if (incident.source !== FLAG_SOURCE) throw new Invalid('incident_id', 'is not an automated flag');
    const now = clock.now();
    const saved = await setIncidentDismissal(
      db,
      incident.id,
      dismiss ? { userId: actor.id, now } : null,
      now,
    );
    if (saved === undefined) throw new NotFound('Incident', incidentId);
    return saved;
  }

  return {
    dismiss: (actor, sessionId, incidentId) => change(actor, sessionId, incidentId, true),
    restore: (actor, sessionId, incidentId) => change(actor, sessionId, incidentId, false),
  };
}
