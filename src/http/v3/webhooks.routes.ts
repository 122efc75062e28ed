import type { FastifyInstance } from 'fastify';
import type { IssuedWebhookSecret } from '../../domain/webhooks/webhooks.service.ts';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { rotateWebhookSecretSchema } from './webhooks.schemas.ts';

type IdRoute = { Params: { id: string } };

/** The V3 shape of a generated webhook secret (the only answer that ever holds it). */
function presentWebhookSecretV3(issued: IssuedWebhookSecret) {
  return {
    institute_id: issued.instituteId,
    secret: issued.secret,
    created_at: new Date(issued.createdAt).toISOString(),
    replaced: issued.replaced,
  };
}

/** `POST /institutes/:id/webhook_secret`: generates or rotates the signing secret (docs/webhooks.md). */
export function registerWebhookRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { webhooks } = services;

  app.post<IdRoute>(
    '/institutes/:id/webhook_secret',
    { schema: rotateWebhookSecretSchema },
    async (request, reply) => {
      // The secret is in this answer alone: no cache or proxy may keep a copy.
      reply.header('cache-control', 'no-store');
      return {
        webhook_secret: presentWebhookSecretV3(
          await webhooks.rotateSecret(actorOf(request), request.params.id),
        ),
      };
    },
  );
}
