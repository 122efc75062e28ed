import type { FastifyInstance } from 'fastify';
import { contentDisposition } from '../../storage/content-disposition.ts';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { downloadZipSchema, generateZipSchema, zipStatusSchema } from './zip.schemas.ts';

type IdRoute = { Params: { id: string } };

/**
 * The exam documents zip (contract §7, docs/zip-exports.md): `generate` queues the job (202, empty
 * body), `status` answers `{"zip_job_status"}`, `download` streams the archive once it succeeded.
 * All three are for the exam's managers only.
 */
export function registerZipRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { examExports } = services;

  app.put<IdRoute>(
    '/exams/:id/generate_exam_documents_zip',
    { schema: generateZipSchema },
    async (request, reply) => {
      await examExports.generate(actorOf(request), request.params.id, request.input.values);
      return reply.code(202).send();
    },
  );

  app.get<IdRoute>('/exams/:id/status_exam_documents_zip', { schema: zipStatusSchema }, async (request) => ({
    zip_job_status: await examExports.status(actorOf(request), request.params.id),
  }));

  app.get<IdRoute>(
    '/exams/:id/download_exam_documents_zip',
    { schema: downloadZipSchema },
    async (request, reply) => {
      const archive = await examExports.download(actorOf(request), request.params.id);
      return reply
        .type('application/zip')
        .header('content-length', String(archive.file.size))
        .header('content-disposition', contentDisposition(archive.fileName))
        .header('cache-control', 'private, no-store')
        .header('x-content-type-options', 'nosniff')
        .send(archive.body);
    },
  );
}
