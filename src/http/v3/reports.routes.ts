import type { FastifyInstance } from 'fastify';
import { contentDisposition } from '../../storage/content-disposition.ts';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { readReportLanguage } from '../../domain/reports/session-report.service.ts';
import { sessionReportSchema } from './reports.schemas.ts';

type IdRoute = { Params: { id: string } };

/**
 * The session report (docs/reports.md): `GET /student_sessions/:id/report.pdf` answers the PDF as
 * an attachment, for whoever may read the session, in the `language` asked for or the institute's.
 */
export function registerReportRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { reports } = services;

  app.get<IdRoute>(
    '/student_sessions/:id/report.pdf',
    { schema: sessionReportSchema },
    async (request, reply) => {
      const report = await reports.report(
        actorOf(request),
        request.params.id,
        readReportLanguage(request.input.values),
      );
      return reply
        .type('application/pdf')
        .header('content-length', String(report.bytes.length))
        .header('content-disposition', contentDisposition(report.fileName))
        .header('cache-control', 'private, no-store')
        .header('x-content-type-options', 'nosniff')
        .send(Buffer.from(report.bytes.buffer, report.bytes.byteOffset, report.bytes.byteLength));
    },
  );
}
