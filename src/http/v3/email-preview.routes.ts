import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentEmailPreviewV3 } from './email-preview.presenter.ts';
import { emailPreviewSchema } from './email-preview.schemas.ts';

type IdRoute = { Params: { id: string } };

/** The preview of an email send_emails would send (docs/api-v3-student-sessions.md, Email preview). */
export function registerEmailPreviewRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { emailPreview } = services;

  app.get<IdRoute>('/exams/:id/email_preview', { schema: emailPreviewSchema }, async (request) =>
    presentEmailPreviewV3(
      await emailPreview.preview(actorOf(request), request.params.id, request.input.values),
    ),
  );
}
