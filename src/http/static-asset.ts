import crypto from 'node:crypto';
import fs from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * A file the service serves from memory (a page's script or style sheet, the console's build): read
 * once at start, with an ETag made from its content, so a browser revalidates cheaply and picks up a
 * new release on its next load.
 */
export interface StaticAsset {
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag: string;
}

/** The asset of `body`, its ETag a hash of the bytes. Returns it. */
export function staticAsset(body: Buffer, contentType: string): StaticAsset {
  const etag = `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { body, contentType, etag };
}

/** Reads the file at `file` (a path or file URL) into an asset. Returns it; throws when it cannot be read. */
export function readStaticAsset(file: string | URL, contentType: string): StaticAsset {
  return staticAsset(fs.readFileSync(file), contentType);
}

/**
 * Answers with `asset`: its ETag and `cacheControl` (revalidate every time, by default), then 304 when
 * the request's If-None-Match names the same content, else the bytes with their type. Returns the reply.
 */
export function sendStaticAsset(
  request: Pick<FastifyRequest, 'headers'>,
  reply: FastifyReply,
  asset: StaticAsset,
  cacheControl = 'no-cache',
): FastifyReply {
  reply.header('etag', asset.etag).header('cache-control', cacheControl);
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  return reply.type(asset.contentType).send(asset.body);
}
