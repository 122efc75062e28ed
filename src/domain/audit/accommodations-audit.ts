import type { Db } from '../../db/database.ts';
import type { Actor } from '../access.ts';
import { type Accommodations, storedAccommodations } from '../student-sessions/accommodations.ts';
import { USER_AGENT_MAX } from './audit-event.ts';
import { insertAuditEvent } from './audit.repository.ts';
import type { AuditClient } from './audit.service.ts';

/**
 * The audit log's action for a change of a student's accommodations (docs/accommodations.md,
 * docs/audit-log.md): recorded beside the route's own event, naming the session itself. Like every
 * audit event it holds no values: the accommodations (reasons of exemptions, the note) are about a
 * student's health and stay in the session.
 */
export const ACCOMMODATIONS_AUDIT_ACTION = 'student_session_accommodations_changed';

/** True when `before` and `after` differ in any key (compared as stored). */
export function accommodationsChanged(before: Accommodations, after: Accommodations): boolean {
  return storedAccommodations(before) !== storedAccommodations(after);
}

/**
 * Records that `actor` changed (or set, on create) the accommodations of session `sessionId`. Call
 * it in the transaction that writes them, so the change and its record go together. `client` is the
 * request's address and User-Agent when the change came over HTTP (null otherwise). Resolves when
 * written; throws what the database throws.
 */
export async function recordAccommodationsChange(
  db: Db,
  event: {
    readonly actor: Actor;
    readonly sessionId: number;
    readonly status: number;
    readonly client: AuditClient | undefined;
    readonly now: number;
  },
): Promise<void> {
  const agent = event.client?.userAgent ?? null;
  await insertAuditEvent(db, {
    instituteId: event.actor.instituteId,
    userId: event.actor.id,
    action: ACCOMMODATIONS_AUDIT_ACTION,
    email: null,
    targetType: 'student_sessions',
    targetId: event.sessionId,
    status: event.status,
    ip: event.client?.ip ?? null,
    userAgent: agent === null ? null : agent.slice(0, USER_AGENT_MAX),
    createdAt: event.now,
  });
}
