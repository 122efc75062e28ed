import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { LinkedAttachment } from '../../domain/attachments/attachment.ts';
import type { Actor } from '../../domain/access.ts';
import type { IdInput } from '../../domain/documents/document.ts';
import { requiredString } from '../../domain/input.ts';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentAttachmentV2 } from './attachments.presenter.ts';
import {
  addAttachmentSchemaV2,
  destroyAttachmentSchemaV2,
  listAttachmentsSchemaV2,
} from './attachments.schemas.ts';
import { answer, INPUT_FAILURES, SAVE_FAILURES, withFailures } from './failures.ts';

type IdRoute = { Params: { id: string } };

/** The multipart field that carries the file in V2 (V3: `document`). */
const FILE_FIELD = 'file';

/** The first file sent in the `file` field, if any (other file fields are ignored). */
function uploadOf(request: FastifyRequest) {
  return request.uploads.find((upload) => upload.field === FILE_FIELD);
}

/**
 * The V2 attachment endpoints (api.md "V2 endpoints", under Documents): a document named by its id,
 * its attachments over the same service as V3's.
 */
export function registerV2AttachmentRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { attachments } = services;

  /** Every attachment of the document: V2 lists have no pages, so this reads V3's pages to the end. */
  async function allOf(actor: Actor, documentId: IdInput): Promise<LinkedAttachment[]> {
    const found: LinkedAttachment[] = [];
    for (let page = 1; ; page += 1) {
      const result = await attachments.list(actor, { documentId }, { page });
      found.push(...result.items);
      if (result.items.length === 0 || found.length >= result.total) return found;
    }
  }

  app.post<IdRoute>(
    '/documents/:id/add_attachment',
    { schema: addAttachmentSchemaV2 },
    withFailures<IdRoute>(
      // "400 if file is absent or the save fails": a content type that is not allowed is a failed
      // save here (V3 answers 415); an unknown document keeps V2's 404.
      [answer(400, INPUT_FAILURES)],
      async (request) => ({
        attachment: presentAttachmentV2(
          await attachments.create(
            actorOf(request),
            { documentId: request.params.id },
            uploadOf(request),
            FILE_FIELD,
          ),
        ),
      }),
    ),
  );

  // api.md: "400 on failure", so a document that is missing or out of scope answers 400 here, not 404.
  app.get<IdRoute>(
    '/documents/:id/attachments_list',
    { schema: listAttachmentsSchemaV2 },
    withFailures<IdRoute>([answer(400, SAVE_FAILURES)], async (request) => ({
      attachments: (await allOf(actorOf(request), request.params.id)).map(presentAttachmentV2),
    })),
  );

  app.delete<IdRoute>(
    '/documents/:id/destroy_attachment',
    { schema: destroyAttachmentSchemaV2 },
    withFailures<IdRoute>([answer(400, SAVE_FAILURES)], async (request, reply) => {
      const actor = actorOf(request);
      const attachmentId = requiredString(request.input.values, 'attachment_id');
      await attachments.destroy(actor, { documentId: request.params.id }, attachmentId);
      return reply.code(200).send();
    }),
  );
}
