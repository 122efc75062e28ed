import crypto from 'node:crypto';
import fs from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import multipart, { type MultipartFields, type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/config.ts';
import { MalformedBody, PayloadTooLarge, RouteNotFound, Unauthorized } from '../domain/errors.ts';
import type { Services } from '../services.ts';
import { Measure } from '../storage/measure.ts';
import type { Upload } from '../storage/upload.ts';
import { tokenFromHeader } from './auth/authenticate.ts';
import { cookieActor } from './staff/session-cookie.ts';
import type { ParsedParams } from './request-params.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * What the multipart reader may write for this request, and what it has written; null for a
     * request the server's multipart handling never reads (not multipart, or readsOwnMultipart).
     */
    spool: SpoolState | null;
  }
  interface FastifyContextConfig {
    /**
     * Set on a route that reads its multipart body itself (streaming it elsewhere) and checks its
     * credential on its own: the pre-body credential check of this module then leaves it alone.
     */
    readsOwnMultipart?: boolean;
  }
}

/**
 * Whether a request's file parts may be written to the spool directory:
 * `cleared` once a credential was checked before the body; `body` for a V2 request whose
 * `api_token` travels in the body (checked from the fields read before the first file part);
 * `none` for anything else (no file part is ever written for it).
 */
type Clearance = 'cleared' | 'body' | 'none';

/** Per request: the spool files written (or being written) and the writers still open. */
export interface SpoolState {
  clearance: Clearance;
  readonly files: Set<string>;
  readonly writers: Set<Writable>;
  /** True once the request ended (answered, or the client went away): nothing more is written. */
  ended: boolean;
  /** True once the first file part began (the text fields ahead of it are all read). */
  fileStarted: boolean;
  /**
   * For a refusal: asks the server to close the connection after the answer instead of reading the
   * rest of a large body. A small body (within MAX_BODY_BYTES) is read and dropped instead: closing
   * a socket with unread data resets it, and the client could lose the answer.
   */
  closeConnection(): void;
}

/** A spool file untouched this long belongs to no live request (a crashed process left it). */
export const SPOOL_STALE_MS = 60 * 60 * 1000;

/** How often a running server sweeps stale spool files. */
export const SPOOL_SWEEP_INTERVAL_MS = 10 * 60 * 1000;

/** How many leading bytes of an upload are kept for recognising its type. */
const SNIFF_BYTES = 4096;

/**
 * Most text fields a multipart body may carry (more: 413). The signed fields and a route's
 * parameters are a dozen; the bound only keeps a body from being a pile of tiny fields.
 */
export const MAX_MULTIPART_FIELDS = 200;

/** Spool files are named `<32 hex>.upload`; the sweep touches nothing else. */
const SPOOL_FILE = /^[0-9a-f]{32}\.upload$/;

/** The spool directory under a data directory: where multipart file parts wait for their handler. */
export function spoolDirectory(dataDir: string): string {
  return path.join(dataDir, 'tmp', 'uploads');
}

/**
 * Removes spool files last written more than `staleMs` before `now`. Several processes may share a
 * data directory, so a young file (another process's request in flight) is left alone. Returns how
 * many files were removed; never throws (a file removed meanwhile by someone else is fine).
 */
export async function sweepSpool(directory: string, now: number, staleMs = SPOOL_STALE_MS): Promise<number> {
  let names: string[];
  try {
    names = await fs.promises.readdir(directory);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!SPOOL_FILE.test(name)) continue;
    const file = path.join(directory, name);
    try {
      const stat = await fs.promises.stat(file);
      if (now - stat.mtimeMs <= staleMs) continue;
      await fs.promises.rm(file, { force: true });
      removed += 1;
    } catch {
      // Gone already, or unreadable: the next sweep tries again.
    }
  }
  return removed;
}

function isMultipartRequest(headers: IncomingHttpHeaders): boolean {
  return /^\s*multipart\//i.test(headers['content-type'] ?? '');
}

/** Which credential a route's multipart request carries, from its route template. */
function routeKind(url: string | undefined): 'v3' | 'room' | 'phone' | 'v2' | 'other' {
  if (url === undefined) return 'other';
  if (url.startsWith('/api/v3/') || url === '/api/v3') return 'v3';
  if (url.startsWith('/api/room/')) return 'room';
  if (url.startsWith('/api/mobile/')) return 'phone';
  if (url.startsWith('/api/') && !url.startsWith('/api/docs')) return 'v2';
  return 'other';
}

/** Throws Unauthorized unless `token` names an active user (the signature is checked later, as always). */
async function requireActiveUser(services: Services, token: unknown, reason: string): Promise<void> {
  if (typeof token !== 'string' || token === '') throw new Unauthorized(`${reason}: no api token`);
  const found = await services.users.authenticate(token);
  if (found === undefined) throw new Unauthorized(`${reason}: unknown token or inactive user`);
}

/**
 * The credential check that can run before a multipart body is read: V3's token header names an
 * active user, a room path's token names a session, a V2 `api_token` in the query names an active
 * user. Sets the request's clearance; throws Unauthorized (403), the room's NotFoundMessage (404)
 * or RouteNotFound, after asking for the connection to be closed so the body is never read.
 */
async function checkBeforeBody(
  request: FastifyRequest,
  state: SpoolState,
  services: Services,
  maxUncheckedBytes: number,
): Promise<void> {
  if (request.is404) {
    state.closeConnection();
    throw new RouteNotFound('Not Found');
  }
  const kind = routeKind(request.routeOptions.url);
  try {
    if (kind === 'v3') {
      // The console uploads with its session cookie (and CSRF header), checked here as fully as V3's
      // preHandler will; a request with an Authorization header is judged by its token.
      const byCookie = (await cookieActor(services, request)) !== undefined;
      if (!byCookie) {
        await requireActiveUser(services, tokenFromHeader(request.headers.authorization), 'before the body');
      }
      state.clearance = 'cleared';
    } else if (kind === 'room') {
      const params = request.params as { token?: unknown } | undefined;
      const token = typeof params?.token === 'string' ? params.token : '';
      // Throws the room's own 404 for a token that names no session.
      await services.room.examName(token);
      state.clearance = 'cleared';
    } else if (kind === 'phone') {
      const params = request.params as { token?: unknown } | undefined;
      const token = typeof params?.token === 'string' ? params.token : '';
      // The phone's pairing token is its credential (404 when it names no session).
      await services.mobile.examName(token);
      state.clearance = 'cleared';
    } else if (kind === 'v2') {
      const query = request.query as ParsedParams | undefined;
      const token =
        query !== undefined && Object.hasOwn(query.values, 'api_token') ? query.values.api_token : undefined;
      if (token === undefined) {
        state.clearance = 'body';
        capUnchecked(request, state, maxUncheckedBytes);
        return;
      }
      await requireActiveUser(services, token, 'before the body');
      state.clearance = 'cleared';
    }
  } catch (error) {
    state.closeConnection();
    throw error;
  }
}

/**
 * Bounds what a V2 multipart request whose `api_token` travels in the body may send before its
 * first file part, where that token is checked: the text fields ahead of it are held in memory, so
 * past `maxBytes` without a file part begun the connection is cut (no answer: the client has shown
 * no credential yet). Returns at once; the count runs as the body arrives.
 */
function capUnchecked(request: FastifyRequest, state: SpoolState, maxBytes: number): void {
  let seen = 0;
  const count = (chunk: Buffer): void => {
    if (state.clearance !== 'body' || state.fileStarted) {
      request.raw.off('data', count);
      return;
    }
    seen += chunk.length;
    if (seen <= maxBytes) return;
    request.raw.off('data', count);
    request.log.warn(
      { bytes: seen },
      'multipart fields without a checked credential over the limit: connection cut',
    );
    request.raw.destroy();
  };
  // Counted only once the multipart reader pipes the body: a 'data' listener added earlier would
  // start the flow before the reader is attached, and the bytes would be lost to it.
  if (request.raw.readableFlowing === true) request.raw.on('data', count);
  else request.raw.once('resume', () => request.raw.on('data', count));
}

/**
 * For a V2 request whose `api_token` is a multipart field: checks it from the fields read so far,
 * before the first file part is written. Clients send their text fields before the file; a file
 * part ahead of `api_token` is refused like a missing token. Throws Unauthorized.
 */
async function checkFromFields(
  state: SpoolState,
  fields: MultipartFields,
  services: Services,
): Promise<void> {
  const entry = Object.hasOwn(fields, 'api_token') ? fields.api_token : undefined;
  const first = Array.isArray(entry) ? entry[0] : entry;
  const token = first !== undefined && first.type === 'field' ? first.value : undefined;
  await requireActiveUser(services, token, 'at the first file part');
  state.clearance = 'cleared';
}

/** Writes one multipart file part to a temporary file, enforcing the upload size limit. */
async function spool(
  part: MultipartFile,
  state: SpoolState,
  directory: string,
  maxBytes: number,
): Promise<Upload> {
  const file = path.join(directory, `${crypto.randomBytes(16).toString('hex')}.upload`);
  const measure = new Measure(maxBytes, SNIFF_BYTES);
  const writer = fs.createWriteStream(file, { flags: 'wx', mode: 0o600 });
  state.files.add(file);
  state.writers.add(writer);
  try {
    await pipeline(part.file, measure, writer);
  } catch (error) {
    // Also the path of an aborted request: its writer was destroyed, and the half-written part goes.
    await fs.promises.rm(file, { force: true });
    throw error;
  } finally {
    state.writers.delete(writer);
  }
  if (part.file.truncated) {
    await fs.promises.rm(file, { force: true });
    throw new PayloadTooLarge('Payload Too Large');
  }
  if (state.ended) {
    // The client went away while the last bytes were written: nobody will read this file.
    await fs.promises.rm(file, { force: true });
    throw new MalformedBody('Bad Request');
  }
  return {
    field: part.fieldname,
    fileName: part.filename,
    declaredType: part.mimetype,
    path: file,
    size: measure.size,
    head: measure.head,
  };
}

/** The bytes a text field's value held (a field sent as JSON arrives parsed). Returns them. */
function textBytes(value: unknown): number {
  return Buffer.byteLength(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
}

/** Stops every write still running for the request and removes every file it spooled. */
async function discard(state: SpoolState): Promise<void> {
  state.ended = true;
  for (const writer of state.writers) writer.destroy();
  await Promise.all([...state.files].map((file) => fs.promises.rm(file, { force: true })));
}

/**
 * Registers multipart reading with its guards: the credential check before any body byte is read
 * (a preParsing hook), file parts spooled to `DATA_DIR/tmp/uploads` only for a cleared request,
 * every spool file removed when the request ends in any way (answered, failed, or cut off by the
 * client, a half-written part included), and stale files swept at start and every
 * SPOOL_SWEEP_INTERVAL_MS. Returns once registered; throws when the spool directory cannot be made.
 */
export async function registerUploads(
  app: FastifyInstance,
  deps: { readonly config: Config; readonly services: Services; readonly now: () => number },
): Promise<void> {
  const { config, services } = deps;
  const directory = spoolDirectory(config.dataDir);
  fs.mkdirSync(directory, { recursive: true });
  const swept = await sweepSpool(directory, deps.now());
  if (swept > 0) app.log.info({ removed: swept }, 'stale upload spool files removed');
  const timer = setInterval(() => {
    void sweepSpool(directory, deps.now()).then((removed) => {
      if (removed > 0) app.log.info({ removed }, 'stale upload spool files removed');
    });
  }, SPOOL_SWEEP_INTERVAL_MS);
  timer.unref();
  app.addHook('onClose', (_instance, done) => {
    clearInterval(timer);
    done();
  });

  /** Whether the server's multipart handling reads this request's body (and may spool files). */
  const spools = (request: FastifyRequest): boolean =>
    isMultipartRequest(request.headers) && request.routeOptions.config.readsOwnMultipart !== true;

  app.decorateRequest('spool', null);
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done) => {
    request.uploads = [];
    // Every other request (polls, JSON, the room's chunks) skips the state and its listener: a
    // chunk-heavy load paid for them on every request.
    if (!spools(request)) {
      request.spool = null;
      done();
      return;
    }
    const state: SpoolState = {
      clearance: 'none',
      files: new Set(),
      writers: new Set(),
      ended: false,
      fileStarted: false,
      closeConnection: () => {
        const length = Number(request.headers['content-length']);
        if (!(length <= config.maxBodyBytes)) reply.header('connection', 'close');
      },
    };
    request.spool = state;
    // 'close' comes once the answer is written, or when the client cuts the connection first:
    // either way the request is over, and so are its spool files (the handler, if still running for
    // a client that left, loses them; the client never saw an answer and sends again).
    reply.raw.once('close', () => void discard(state));
    done();
  });
  app.addHook('onResponse', (request, _reply, done) => {
    const state = request.spool;
    if (state === null) done();
    else discard(state).then(() => done(), done);
  });
  app.addHook('preParsing', async (request, _reply, payload) => {
    const state = request.spool;
    if (state === null) return payload;
    await checkBeforeBody(request, state, services, config.maxBodyBytes);
    return payload;
  });

  await app.register(multipart, {
    limits: {
      fileSize: config.maxUploadBytes,
      files: 5,
      fields: MAX_MULTIPART_FIELDS,
      // A longer field is cut by the reader, and refused below: it could only be over the total.
      fieldSize: config.maxBodyBytes,
      parts: MAX_MULTIPART_FIELDS + 10,
    },
  });

  /** Checks a file part's credential (before a byte of it is written), then spools it. */
  async function receiveFile(request: FastifyRequest, part: MultipartFile): Promise<void> {
    const state = request.spool;
    if (state === null) {
      part.file.resume();
      throw new Unauthorized('file part without a checked credential');
    }
    state.fileStarted = true;
    try {
      if (state.clearance === 'body') await checkFromFields(state, part.fields, services);
      if (state.clearance !== 'cleared') throw new Unauthorized('file part without a checked credential');
      if (state.ended) throw new MalformedBody('Bad Request');
    } catch (error) {
      part.file.resume();
      state.closeConnection();
      throw error;
    }
    request.uploads.push(await spool(part, state, directory, config.maxUploadBytes));
  }

  // The body is read here, part by part, rather than by the plugin's attachFieldsToBody, so the text
  // fields can be bounded as they arrive: together they may hold MAX_BODY_BYTES, as a JSON or form
  // body may (each is cut at that size by the reader, so one over it is refused too), and at most
  // MAX_MULTIPART_FIELDS of them (the reader's FST_FIELDS_LIMIT, 413). Without the total, 200 fields
  // of MAX_BODY_BYTES each would sit in memory. `request.body` keeps the plugin's shape: every part
  // so far by field name.
  app.addHook('preValidation', async (request: FastifyRequest) => {
    if (!request.isMultipart()) return;
    let total = 0;
    for await (const part of request.parts()) {
      request.body = part.fields;
      if (part.type === 'file') {
        await receiveFile(request, part);
        continue;
      }
      total += Buffer.byteLength(part.fieldname) + textBytes(part.value);
      if (part.valueTruncated || part.fieldnameTruncated || total > config.maxBodyBytes) {
        request.spool?.closeConnection();
        throw new PayloadTooLarge('Payload Too Large');
      }
    }
  });
}
