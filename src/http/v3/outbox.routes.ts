import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentOutboxMessageV3, presentOutboxSummaryV3 } from './outbox.presenter.ts';
import { listOutboxSchema, redeliverOutboxMessageSchema, showOutboxMessageSchema } from './outbox.schemas.ts';

type MessageRoute = { Params: { id: string } };

/**
 * `/outbox[/:id[/redeliver]]`: the emails of the outbox, for administrators (their institute) and
 * superusers (all), and their redelivery (docs/mail.md, "The outbox API").
 */
export function registerOutboxRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { outbox } = services;

  app.get('/outbox', { schema: listOutboxSchema }, async (request, reply) => {
    const page = await outbox.list(actorOf(request), request.input.values);
    setPaginationHeaders(reply, page);
    return { messages: page.items.map(presentOutboxSummaryV3) };
  });

  app.get<MessageRoute>('/outbox/:id', { schema: showOutboxMessageSchema }, async (request) => ({
    message: presentOutboxMessageV3(await outbox.get(actorOf(request), request.params.id)),
  }));

  app.post<MessageRoute>(
    '/outbox/:id/redeliver',
    { schema: redeliverOutboxMessageSchema },
    async (request) => ({
      message: presentOutboxMessageV3(await outbox.redeliver(actorOf(request), request.params.id)),
    }),
  );
}
