import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentDocumentV3 } from './documents.presenter.ts';
import {
  createDocumentSchema,
  destroyDocumentSchema,
  listDocumentsSchema,
  showDocumentSchema,
  updateDocumentSchema,
} from './documents.schemas.ts';

type ExamRoute = { Params: { exam_id: string } };
type DocumentRoute = { Params: { exam_id: string; id: string } };

/** `/exams/:exam_id/documents[/:id]`: the exam's instruction document (at most one per exam). */
export function registerDocumentRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { documents } = services;
  const refOf = (params: DocumentRoute['Params']) => ({ examId: params.exam_id, documentId: params.id });

  app.get<ExamRoute>('/exams/:exam_id/documents', { schema: listDocumentsSchema }, async (request, reply) => {
    const page = await documents.list(actorOf(request), request.params.exam_id, request.input.values);
    setPaginationHeaders(reply, page);
    return { documents: page.items.map(presentDocumentV3) };
  });

  app.get<DocumentRoute>(
    '/exams/:exam_id/documents/:id',
    { schema: showDocumentSchema },
    async (request) => ({
      document: presentDocumentV3(await documents.get(actorOf(request), refOf(request.params))),
    }),
  );

  app.post<ExamRoute>('/exams/:exam_id/documents', { schema: createDocumentSchema }, async (request, reply) =>
    reply.code(201).send({
      document: presentDocumentV3(
        await documents.create(actorOf(request), request.params.exam_id, request.input.values),
      ),
    }),
  );

  app.route<DocumentRoute>({
    method: ['PATCH', 'PUT'],
    url: '/exams/:exam_id/documents/:id',
    schema: updateDocumentSchema,
    handler: async (request) => ({
      document: presentDocumentV3(
        await documents.update(actorOf(request), refOf(request.params), request.input.values),
      ),
    }),
  });

  app.delete<DocumentRoute>(
    '/exams/:exam_id/documents/:id',
    { schema: destroyDocumentSchema },
    async (request) => {
      await documents.destroy(actorOf(request), refOf(request.params));
      return {};
    },
  );
}
