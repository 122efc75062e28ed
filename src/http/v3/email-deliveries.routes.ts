import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentEmailDeliveriesV3 } from './email-deliveries.presenter.ts';
import { emailDeliveriesSchema } from './email-deliveries.schemas.ts';

type IdRoute = { Params: { id: string } };

/** How an exam's exam-link emails were delivered, and its students' room links (docs/mail.md). */
export function registerEmailDeliveryRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { emailDeliveries } = services;

  app.get<IdRoute>('/exams/:id/email_deliveries', { schema: emailDeliveriesSchema }, async (request) =>
    presentEmailDeliveriesV3(
      await emailDeliveries.read(actorOf(request), request.params.id, request.input.values),
    ),
  );
}
