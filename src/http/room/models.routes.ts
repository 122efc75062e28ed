import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { flagModelSet } from './flag-models.ts';

/**
 * `GET /room/models/:hash/:file`: the automated-flag detectors and their models
 * (src/http/room/flag-models.ts). Only the files of the set, and only under the set's current hash,
 * are answered, each with `Cache-Control: public, max-age=31536000, immutable`; anything else is a
 * 404. Files are sent gzip-compressed to a browser that accepts it (compressed once, on first ask,
 * and kept): onnxruntime's WebAssembly is 14 MB as it is and under 4 MB compressed.
 */

const gzip = promisify(zlib.gzip);

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Compressed bodies by file name, shared by every server of the process (the set is too). */
const compressed = new Map<string, Promise<Buffer>>();

function gzipped(name: string, body: Buffer): Promise<Buffer> {
  let promise = compressed.get(name);
  if (promise === undefined) {
    promise = gzip(body, { level: 9 });
    compressed.set(name, promise);
  }
  return promise;
}

/** Whether an Accept-Encoding header admits gzip (and does not refuse it with q=0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((part) => {
    const [coding, ...parameters] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    return !parameters.some((parameter) => /^\s*q=0(\.0*)?\s*$/.test(parameter));
  });
}

/**
 * Registers the route. Reads the set at once (so a missing package fails the start, not a
 * candidate's exam); throws when a package is not installed.
 */
export function registerFlagModels(app: FastifyInstance): void {
  const set = flagModelSet();
  app.get<{ Params: { hash: string; file: string } }>(
    '/room/models/:hash/:file',
    { schema: { hide: true } },
    async (request, reply) => {
      reply.header('x-content-type-options', 'nosniff');
      const file = request.params.hash === set.hash ? set.files.get(request.params.file) : undefined;
      if (file === undefined) {
        request.log.info({ path: request.url }, 'flag model refused: not in the served set');
        return reply.code(404).type('application/json; charset=utf-8').send({ error: 'Not Found' });
      }
      reply.header('cache-control', IMMUTABLE).header('vary', 'accept-encoding').type(file.contentType);
      if (!acceptsGzip(request.headers['accept-encoding'])) return reply.send(file.body);
      const body = await gzipped(request.params.file, file.body);
      return reply.header('content-encoding', 'gzip').send(body);
    },
  );
}
