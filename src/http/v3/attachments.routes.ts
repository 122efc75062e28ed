import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AttachmentOwner } from '../../domain/attachments/attachment.ts';
import { actorOf } from '../actor.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentAttachmentV3 } from './attachments.presenter.ts';
import { attachmentSchemas } from './attachments.schemas.ts';

/** The multipart field that carries the file (api.md: the `document` parameter). */
const FILE_FIELD = 'document';

type OwnerParams = { exam_id: string; document_id?: string };
type OwnerRoute = { Params: OwnerParams };
type AttachmentRoute = { Params: OwnerParams & { id: string } };

function ownerOf(params: OwnerParams): AttachmentOwner {
  return params.document_id === undefined
    ? { examId: params.exam_id }
    : { examId: params.exam_id, documentId: params.document_id };
}

/** The first file sent in the `document` field, if any (other file fields are ignored). */
function uploadOf(request: FastifyRequest) {
  return request.uploads.find((upload) => upload.field === FILE_FIELD);
}

/**
 * Attachments on both route sets: `/exams/:exam_id/attachments` (the exam's document, created empty
 * on the first upload) and `/exams/:exam_id/documents/:document_id/attachments` (that document).
 */
export function registerAttachmentRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { attachments } = services;

  for (const [base, owner] of [
    ['/exams/:exam_id/attachments', ['exam_id']],
    ['/exams/:exam_id/documents/:document_id/attachments', ['exam_id', 'document_id']],
  ] as const) {
    const schemas = attachmentSchemas(owner);

    app.get<OwnerRoute>(base, { schema: schemas.list }, async (request, reply) => {
      const page = await attachments.list(actorOf(request), ownerOf(request.params), request.input.values);
      setPaginationHeaders(reply, page);
      return { attachments: page.items.map(presentAttachmentV3) };
    });

    app.get<AttachmentRoute>(`${base}/:id`, { schema: schemas.show }, async (request) => ({
      attachment: presentAttachmentV3(
        await attachments.get(actorOf(request), ownerOf(request.params), request.params.id),
      ),
    }));

    app.post<OwnerRoute>(base, { schema: schemas.create }, async (request, reply) =>
      reply.code(201).send({
        attachment: presentAttachmentV3(
          await attachments.create(actorOf(request), ownerOf(request.params), uploadOf(request), FILE_FIELD),
        ),
      }),
    );

    app.delete<AttachmentRoute>(`${base}/:id`, { schema: schemas.destroy }, async (request) => {
      await attachments.destroy(actorOf(request), ownerOf(request.params), request.params.id);
      return {};
    });
  }
}
