import type { FastifyInstance } from 'fastify';
import { PayloadTooLarge } from '../../domain/errors.ts';
import { RECORDING_CHUNK_MAX_BYTES } from '../../domain/room/room.ts';
import type { ChunkBody, RoomService } from '../../domain/room/room.service.ts';
import { MultipartReader, multipartBoundary } from './multipart.ts';
import { roomRecordingSchema } from './room.schemas.ts';

type TokenRoute = { Params: { token: string } };

/** A whole chunk request may carry this much besides the chunk itself (fields, part headers). */
const BODY_OVERHEAD_BYTES = 1024 * 1024;
const MAX_BODY_BYTES = RECORDING_CHUNK_MAX_BYTES + BODY_OVERHEAD_BYTES;
const TOO_LARGE = `Recording chunk too large (at most ${RECORDING_CHUNK_MAX_BYTES} bytes)`;

/** A body without parts (not multipart): its fields, if any, are among the request's parameters. */
const NO_PARTS: ChunkBody = {
  next: () => Promise.resolve(undefined),
  async *fileData() {
    // no file part
  },
};

/** The request's bytes, failing with PayloadTooLarge past `limit` (whatever Content-Length said). */
async function* limited(source: AsyncIterable<Buffer>, limit: number): AsyncGenerator<Buffer> {
  let size = 0;
  for await (const chunk of source) {
    size += chunk.length;
    if (size > limit) throw new PayloadTooLarge(TOO_LARGE);
    yield chunk;
  }
}

/**
 * `POST /api/room/:token/recordings` in its own scope, to be registered inside the room's scope (so
 * its rate limit applies). The scope replaces the server's multipart handling for this route alone:
 * instead of spooling every file part to a temporary file before the handler runs, the body is left
 * unread until the room has judged the token and the session's state, then read part by part, the
 * chunk streaming straight into the storage (RoomService.appendRecording). Returns (a resolved
 * promise, as Fastify's register wants) once registered.
 */
export function registerRecordingRoute(app: FastifyInstance, room: RoomService): Promise<void> {
  app.removeContentTypeParser('multipart/form-data');
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => {
    done(null, undefined);
  });

  // readsOwnMultipart: the server's credential check before multipart bodies (src/http/uploads.ts)
  // stands aside; the room judges this route's token itself, from its cache, before the body.
  const config = { readsOwnMultipart: true };
  app.post<TokenRoute>(
    '/:token/recordings',
    { schema: roomRecordingSchema, config },
    async (request, reply) => {
      const declared = Number(request.headers['content-length']);
      if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
        reply.header('connection', 'close');
        throw new PayloadTooLarge(TOO_LARGE);
      }
      const boundary = multipartBoundary(request.headers['content-type']);
      const reader =
        boundary === undefined
          ? undefined
          : new MultipartReader(limited(request.raw, MAX_BODY_BYTES), boundary);
      try {
        const ack = await room.appendRecording(
          request.params.token,
          request.input.values,
          reader ?? NO_PARTS,
        );
        return await reply.code(ack.stored ? 201 : 200).send({ next_sequence: ack.nextSequence });
      } catch (error) {
        // Refused before the body was read (unknown token, no started exam): the connection closes
        // after the answer, so the body is never read and nothing of it kept.
        if (reader !== undefined && !reader.started) reply.header('connection', 'close');
        throw error;
      }
    },
  );
  return Promise.resolve();
}
