import type { FastifyInstance } from 'fastify';
import { requiredString } from '../../domain/input.ts';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentDocumentV2 } from './documents.presenter.ts';
import {
  createDocumentSchemaV2,
  destroyDocumentSchemaV2,
  listDocumentsSchemaV2,
  showDocumentSchemaV2,
  updateDocumentSchemaV2,
} from './documents.schemas.ts';
import { answer, SAVE_FAILURES, withFailures } from './failures.ts';

type IdRoute = { Params: { id: string } };

/** V2 names the document text `document_text` (V3: `exam_content`). */
const CONTENT_PARAM = 'document_text';

/**
 * The V2 document endpoints (api.md "V2 endpoints", Documents). V2 names a document by its own id
 * alone; the services find its exam and check access through it.
 */
export function registerV2DocumentRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { documents } = services;

  app.get('/documents', { schema: listDocumentsSchemaV2 }, async (request, reply) => {
    const owned = await documents.listOwned(actorOf(request));
    // api.md: no documents is 400, not an empty list; V2 clients built on the Rails service rely on it.
    if (owned.length === 0) return reply.code(400).send();
    return { documents: owned.map(presentDocumentV2) };
  });

  app.get<IdRoute>('/documents/:id', { schema: showDocumentSchemaV2 }, async (request) => ({
    document: presentDocumentV2(
      await documents.getWithExam(actorOf(request), { documentId: request.params.id }),
    ),
  }));

  app.post(
    '/documents',
    { schema: createDocumentSchemaV2 },
    withFailures(
      [
        // api.md's "V2 forbidden": a second document is 403 for V2 clients built on the Rails service.
        answer(403, ['taken']),
        // "400 if a parameter is missing or the save fails": an unknown or unseen exam included.
        answer(400, SAVE_FAILURES),
      ],
      async (request, reply) => {
        const actor = actorOf(request);
        const examId = requiredString(request.input.values, 'exam_id');
        const created = await documents.create(actor, examId, request.input.values, CONTENT_PARAM);
        // api.md: documented as 200, but the Rails service answered 201 and V2 clients expect that.
        return reply.code(201).send({ id: created.id });
      },
    ),
  );

  // api.md: "400 on failure", so a document that is missing or out of scope answers 400 here, not 404.
  app.post<IdRoute>(
    '/documents/:id',
    { schema: updateDocumentSchemaV2 },
    withFailures<IdRoute>([answer(400, SAVE_FAILURES)], async (request, reply) => {
      await documents.update(
        actorOf(request),
        { documentId: request.params.id },
        request.input.values,
        CONTENT_PARAM,
      );
      return reply.code(200).send();
    }),
  );

  app.delete<IdRoute>(
    '/documents/:id',
    { schema: destroyDocumentSchemaV2 },
    withFailures<IdRoute>([answer(400, SAVE_FAILURES)], async (request, reply) => {
      await documents.destroy(actorOf(request), { documentId: request.params.id });
      return reply.code(200).send();
    }),
  );
}
