import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifySchema } from 'fastify';
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

/** How many received pieces may wait for the reader before the request is paused. */
const QUEUED_PIECES = 4;

/**
 * The request's bytes as the multipart reader asks for them, failing with PayloadTooLarge past
 * `limit` (whatever Content-Length said; the request is then cut off, as nothing more of it will be
 * read). Pieces come from 'data' events into a short queue (the request paused while it is full)
 * and are handed out as asked for: per piece this costs far less than a stream's own async
 * iterator, which every chunk request paid several times over. Listening starts with the first
 * piece asked for, so the body of a request refused before it is never read. Rejects with the
 * request's error, or when the request is cut off before its end.
 */
class RequestBytes implements AsyncIterable<Buffer>, AsyncIterator<Buffer> {
  readonly #request: Readable;
  readonly #limit: number;
  readonly #queue: Buffer[] = [];
  #size = 0;
  #listening = false;
  #ended = false;
  #failure: Error | undefined = undefined;
  #waiting: { resolve: (result: IteratorResult<Buffer>) => void; reject: (error: Error) => void } | undefined;

  constructor(request: Readable, limit: number) {
    this.#request = request;
    this.#limit = limit;
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return this;
  }

  next(): Promise<IteratorResult<Buffer>> {
    if (!this.#listening) this.#listen();
    const piece = this.#queue.shift();
    if (piece !== undefined) {
      if (this.#queue.length === 0 && this.#request.isPaused()) this.#request.resume();
      return Promise.resolve({ done: false, value: piece });
    }
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  #listen(): void {
    this.#listening = true;
    const request = this.#request;
    request.on('data', (piece: Buffer) => this.#take(piece));
    request.once('end', () => {
      this.#ended = true;
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting?.resolve({ done: true, value: undefined });
    });
    request.once('error', (error: Error) => this.#fail(error));
    request.once('close', () => this.#fail(new Error('the request was cut off before its end')));
  }

  #take(piece: Buffer): void {
    if (this.#failure !== undefined) return;
    this.#size += piece.length;
    if (this.#size > this.#limit) {
      this.#fail(new PayloadTooLarge(TOO_LARGE));
      this.#request.destroy();
      return;
    }
    const waiting = this.#waiting;
    if (waiting !== undefined) {
      this.#waiting = undefined;
      waiting.resolve({ done: false, value: piece });
      return;
    }
    this.#queue.push(piece);
    if (this.#queue.length >= QUEUED_PIECES) this.#request.pause();
  }

  #fail(error: Error): void {
    if (this.#ended || this.#failure !== undefined) return;
    this.#failure = error;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.reject(error);
  }
}

/**
 * `POST /api/room/:token/recordings` in its own scope, to be registered inside the room's scope (so
 * its rate limit applies). The scope replaces the server's multipart handling for this route alone:
 * instead of spooling every file part to a temporary file before the handler runs, the body is left
 * unread until the room has judged the token and the session's state, then read part by part, the
 * chunk streaming straight into the storage (`append`: RoomService.appendRecording, or the phone's
 * MobileService.appendRecording under `/api/mobile`, with its own `schema`). Returns (a resolved
 * promise, as Fastify's register wants) once registered.
 */
export function registerRecordingRoute(
  app: FastifyInstance,
  append: RoomService['appendRecording'],
  schema: FastifySchema = roomRecordingSchema,
): Promise<void> {
  app.removeContentTypeParser('multipart/form-data');
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => {
    done(null, undefined);
  });

  // readsOwnMultipart: the server's credential check before multipart bodies (src/http/uploads.ts)
  // stands aside; the room judges this route's token itself, from its cache, before the body.
  const config = { readsOwnMultipart: true };
  app.post<TokenRoute>('/:token/recordings', { schema, config }, async (request, reply) => {
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
      reply.header('connection', 'close');
      throw new PayloadTooLarge(TOO_LARGE);
    }
    const boundary = multipartBoundary(request.headers['content-type']);
    const reader =
      boundary === undefined
        ? undefined
        : new MultipartReader(new RequestBytes(request.raw, MAX_BODY_BYTES), boundary);
    try {
      const ack = await append(request.params.token, request.input.values, reader ?? NO_PARTS);
      return await reply.code(ack.stored ? 201 : 200).send({ next_sequence: ack.nextSequence });
    } catch (error) {
      // Refused before the body was read (unknown token, no started exam): the connection closes
      // after the answer, so the body is never read and nothing of it kept.
      if (reader !== undefined && !reader.started) reply.header('connection', 'close');
      throw error;
    }
  });
  return Promise.resolve();
}
