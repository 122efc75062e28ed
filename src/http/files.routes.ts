import type { FastifyInstance } from 'fastify';
import { NotFound, Unauthorized } from '../domain/errors.ts';
import { parseId } from '../domain/ids.ts';
import { contentDisposition } from '../storage/content-disposition.ts';
import { StorageMissing } from '../storage/storage.ts';
import type { ServerDeps } from './server.ts';

/**
 * Expiring file addresses (`/files/:id?expires=...&signature=...`). The signature is the only
 * credential; an expired or altered address answers 403 like any other refusal.
 */
export function registerFileRoutes(app: FastifyInstance, { services, clock }: ServerDeps): void {
  app.get<{ Params: { id: string }; Querystring: unknown }>(
    '/files/:id',
    {
      schema: {
        tags: ['files'],
        summary: 'Download a file through an expiring address',
        params: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
        querystring: {
          type: 'object',
          properties: { expires: { type: 'integer' }, signature: { type: 'string' } },
          required: ['expires', 'signature'],
        },
      },
    },
    async (request, reply) => {
      const { expires, signature } = request.input.values;
      const valid = services.urlSigner.verify(
        request.params.id,
        typeof expires === 'string' ? expires : undefined,
        typeof signature === 'string' ? signature : undefined,
        clock.now(),
      );
      if (!valid) throw new Unauthorized('expired or altered file address');
      const id = parseId(request.params.id);
      const file = id === undefined ? undefined : await services.files.find(id);
      if (file === undefined) throw new NotFound('Attachment', request.params.id);
      try {
        const stream = await services.files.open(file);
        return reply
          .type(file.contentType)
          .header('content-length', String(file.size))
          .header('content-disposition', contentDisposition(file.originalName))
          .header('cache-control', 'private, no-store')
          .header('x-content-type-options', 'nosniff')
          .send(stream);
      } catch (error) {
        if (error instanceof StorageMissing) throw new NotFound('Attachment', request.params.id);
        throw error;
      }
    },
  );
}
