import type { FastifyInstance } from 'fastify';
import { readReportLanguage } from '../../domain/reports/session-report.service.ts';
import { contentDisposition } from '../../storage/content-disposition.ts';
import { actorOf } from '../actor.ts';
import { auditClientOf } from '../audit.ts';
import type { RouteDeps } from '../route-deps.ts';
import { processingRecordSchema } from './processing-record.schemas.ts';

type IdRoute = { Params: { id: string } };

/** The audit action of a downloaded record of processing (docs/audit-log.md). */
export const RECORD_OF_PROCESSING_DOWNLOADED = 'record_of_processing_downloaded';

/**
 * The record of processing (docs/data-protection.md): `GET /institutes/:id/record_of_processing`
 * answers the PDF as an attachment to the institute's administrators, and records the download.
 */
export function registerProcessingRecordRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { processingRecords } = services;

  app.get<IdRoute>(
    '/institutes/:id/record_of_processing',
    { schema: processingRecordSchema },
    async (request, reply) => {
      const actor = actorOf(request);
      const record = await processingRecords.record(
        actor,
        request.params.id,
        readReportLanguage(request.input.values),
      );
      // A read is not audited by the write hook; this one names who took the institute's record.
      try {
        await services.audit.recordWrite({
          actor,
          action: RECORD_OF_PROCESSING_DOWNLOADED,
          targetType: 'institutes',
          targetId: record.instituteId,
          status: 200,
          client: auditClientOf(request),
        });
      } catch (error) {
        request.log.error(
          { err: error, action: RECORD_OF_PROCESSING_DOWNLOADED },
          'audit event not recorded',
        );
      }
      return reply
        .type('application/pdf')
        .header('content-length', String(record.bytes.length))
        .header('content-disposition', contentDisposition(record.fileName))
        .header('cache-control', 'private, no-store')
        .header('x-content-type-options', 'nosniff')
        .send(Buffer.from(record.bytes.buffer, record.bytes.byteOffset, record.bytes.byteLength));
    },
  );
}
