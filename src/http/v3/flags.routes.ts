import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { dismissFlagSchema, restoreFlagSchema } from './flags.schemas.ts';
import { presentIncidentV3 } from './student-sessions.presenter.ts';

type IncidentRoute = { Params: { id: string; incident_id: string } };

/**
 * Dismissing and restoring an automated flag (docs/automated-flags.md): `POST` and `DELETE`
 * `/student_sessions/:id/incidents/:incident_id/dismiss`, each answering `{"incident": record}`.
 * The generic write audit records both.
 */
export function registerFlagRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const path = '/student_sessions/:id/incidents/:incident_id/dismiss';

  app.post<IncidentRoute>(path, { schema: dismissFlagSchema }, async (request) => {
    const { id, incident_id: incidentId } = request.params;
    return { incident: presentIncidentV3(await services.flags.dismiss(actorOf(request), id, incidentId)) };
  });

  app.delete<IncidentRoute>(path, { schema: restoreFlagSchema }, async (request) => {
    const { id, incident_id: incidentId } = request.params;
    return { incident: presentIncidentV3(await services.flags.restore(actorOf(request), id, incidentId)) };
  });
}
