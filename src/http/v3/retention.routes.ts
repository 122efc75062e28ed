import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import { auditClientOf } from '../audit.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import {
  presentKindPurgeV3,
  presentLegalHoldV3,
  presentPurgeV3,
  presentRetentionPolicyV3,
} from './retention.presenter.ts';
import {
  listPurgesSchema,
  listSessionPurgesSchema,
  putLegalHoldSchema,
  putRetentionPoliciesSchema,
  showLegalHoldSchema,
  showRetentionPoliciesSchema,
  showSessionRetentionSchema,
} from './retention.schemas.ts';

type IdRoute = { Params: { id: string } };

/** The audit actions of a legal-hold change, besides the route's own event (docs/audit-log.md). */
export const LEGAL_HOLD_SET = 'legal_hold_set';
export const LEGAL_HOLD_CLEARED = 'legal_hold_cleared';

/** The V3 retention routes (docs/retention.md): a session's legal hold, the purge log. */
export function registerRetentionRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { retention } = services;

  app.get<IdRoute>('/student_sessions/:id/legal_hold', { schema: showLegalHoldSchema }, async (request) => {
    const actor = actorOf(request);
    const hold = await retention.legalHold(actor, request.params.id);
    return {
      legal_hold: presentLegalHoldV3(hold, await retention.purgedKinds(actor, hold.studentSessionId)),
    };
  });

  app.get<IdRoute>(
    '/student_sessions/:id/retention',
    { schema: showSessionRetentionSchema },
    async (request) => ({
      purged_kinds: (await retention.sessionRetention(actorOf(request), request.params.id)).map(
        presentKindPurgeV3,
      ),
    }),
  );

  app.get<IdRoute>(
    '/institutes/:id/retention_policies',
    { schema: showRetentionPoliciesSchema },
    async (request) => ({
      retention_policies: (await retention.policies(actorOf(request), request.params.id)).map(
        presentRetentionPolicyV3,
      ),
    }),
  );

  app.put<IdRoute>(
    '/institutes/:id/retention_policies',
    { schema: putRetentionPoliciesSchema },
    async (request) => ({
      retention_policies: (
        await retention.setPolicies(actorOf(request), request.params.id, request.input.values)
      ).map(presentRetentionPolicyV3),
    }),
  );

  app.put<IdRoute>('/student_sessions/:id/legal_hold', { schema: putLegalHoldSchema }, async (request) => {
    const actor = actorOf(request);
    const { hold, changed } = await retention.setLegalHold(actor, request.params.id, request.input.values);
    if (changed) {
      // Named by itself too, so an administrator finds every hold change with one filter.
      const action = hold.held ? LEGAL_HOLD_SET : LEGAL_HOLD_CLEARED;
      try {
        await services.audit.recordWrite({
          actor,
          action,
          targetType: 'student_sessions',
          targetId: hold.studentSessionId,
          status: 200,
          client: auditClientOf(request),
        });
      } catch (error) {
        request.log.error({ err: error, action }, 'audit event not recorded');
      }
    }
    return {
      legal_hold: presentLegalHoldV3(hold, await retention.purgedKinds(actor, hold.studentSessionId)),
    };
  });

  app.get<IdRoute>(
    '/student_sessions/:id/purges',
    { schema: listSessionPurgesSchema },
    async (request, reply) => {
      const page = await retention.sessionPurges(actorOf(request), request.params.id, request.input.values);
      setPaginationHeaders(reply, page);
      return { purges: page.items.map(presentPurgeV3) };
    },
  );

  app.get('/purges', { schema: listPurgesSchema }, async (request, reply) => {
    const page = await retention.purges(actorOf(request), request.input.values);
    setPaginationHeaders(reply, page);
    return { purges: page.items.map(presentPurgeV3) };
  });
}
