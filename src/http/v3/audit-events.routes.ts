import type { FastifyInstance } from 'fastify';
import type { AuditEvent } from '../../domain/audit/audit-event.ts';
import { actorOf } from '../actor.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import { isoTime } from '../time.ts';
import { listAuditEventsSchema } from './audit-events.schemas.ts';

/** The JSON of one audit event. */
function presentAuditEvent(event: AuditEvent) {
  return {
    id: event.id,
    institute_id: event.instituteId,
    user_id: event.userId,
    action: event.action,
    email: event.email,
    target_type: event.targetType,
    target_id: event.targetId,
    status: event.status,
    ip: event.ip,
    user_agent: event.userAgent,
    created_at: isoTime(event.createdAt),
  };
}

/** `GET /audit_events`: the audit log, for administrators (their institute) and superusers (all). */
export function registerAuditEventRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  app.get('/audit_events', { schema: listAuditEventsSchema }, async (request, reply) => {
    const page = await services.audit.list(actorOf(request), request.input.values);
    setPaginationHeaders(reply, page);
    return { audit_events: page.items.map(presentAuditEvent) };
  });
}
