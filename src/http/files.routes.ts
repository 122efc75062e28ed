import type { FastifyInstance } from 'fastify';
import { NotFound, Unauthorized } from '../domain/errors.ts';
import { parseId } from '../domain/ids.ts';
import { contentDisposition } from '../storage/content-disposition.ts';
import { type ByteRange, StorageMissing } from '../storage/storage.ts';
import type { RouteDeps } from './route-deps.ts';

/**
 * The part of a file of `size` bytes a request asks for (`Range: bytes=...`, RFC 9110 §14): one
 * range (`a-b`, `a-`, or the last `-n` bytes), clipped to the file. Returns undefined for the whole
 * file (no Range, several ranges, a unit other than bytes, a malformed header, or an `If-Range`
 * that does not name the current `etag`), 'unsatisfiable' when the range lies past the end.
 */
export function wantedRange(
  header: string | undefined,
  ifRange: string | undefined,
  etag: string,
  size: number,
): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  // If-Range with another validator (or a date: files have no modification time we vouch for): whole file.
  if (ifRange !== undefined && ifRange !== etag) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (match === null) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

/**
 * Expiring file addresses (`/files/:id?expires=...&signature=...`). The signature is the only
 * credential; an expired or altered address answers 403 like any other refusal. A `Range` request
 * is answered 206 with that part (416 past the end), so a video player can seek in a recording.
 */
export function registerFileRoutes(app: FastifyInstance, { services, clock }: RouteDeps): void {
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
      const etag = `"${file.sha256}"`;
      reply
        .header('accept-ranges', 'bytes')
        .header('etag', etag)
        .header('content-disposition', contentDisposition(file.originalName))
        .header('cache-control', 'private, no-store')
        .header('x-content-type-options', 'nosniff');
      try {
        const ifRange = request.headers['if-range'];
        const range = wantedRange(
          request.headers.range,
          typeof ifRange === 'string' ? ifRange : undefined,
          etag,
          file.size,
        );
        if (range === 'unsatisfiable') {
          return reply.code(416).header('content-range', `bytes */${file.size}`).send();
        }
        const part = range === undefined ? undefined : await services.files.openRange(file, range);
        if (range !== undefined && part !== undefined) {
          return reply
            .code(206)
            .type(file.contentType)
            .header('content-range', `bytes ${range.start}-${range.end}/${file.size}`)
            .header('content-length', String(range.end - range.start + 1))
            .send(part);
        }
        const stream = await services.files.open(file);
        return reply.type(file.contentType).header('content-length', String(file.size)).send(stream);
      } catch (error) {
        if (error instanceof StorageMissing) throw new NotFound('Attachment', request.params.id);
        throw error;
      }
    },
  );
}
