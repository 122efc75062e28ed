import crypto from 'node:crypto';
import fs from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import multipart, { type MultipartFile, type MultipartValue } from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { Database } from '../db/database.ts';
import type { Actor } from '../domain/access.ts';
import type { Clock } from '../domain/clock.ts';
import { DomainError, MalformedBody, PayloadTooLarge } from '../domain/errors.ts';
import type { Services } from '../services.ts';
import { Measure } from '../storage/measure.ts';
import type { Upload } from '../storage/upload.ts';
import { registerFileRoutes } from './files.routes.ts';
import { registerRoomPage } from './room/page.routes.ts';
import { registerRoomRoutes } from './room/room.routes.ts';
import { domainErrorFromFramework, v2Answer, v3Answer } from './errors.ts';
import {
  EMPTY_PARAMS,
  mergeParams,
  type ParsedParams,
  parseFormParams,
  parseJsonParams,
  stringParams,
} from './request-params.ts';
import { registerV2 } from './v2/index.ts';
import { registerV3 } from './v3/index.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Query, body and route parameters merged (route wins), with their signed texts. */
    input: ParsedParams;
    /** The authenticated caller; set by the version's auth hook before any handler runs. */
    actor: Actor | undefined;
    /** Files of a multipart request, spooled to temporary files (removed after the response). */
    uploads: Upload[];
  }
}

export interface ServerDeps {
  readonly config: Config;
  readonly database: Database;
  readonly services: Services;
  readonly logger: Logger;
  readonly clock: Clock;
}

/** JSON bodies read on GET too (compat): the largest such body accepted. */
const GET_BODY_LIMIT = 1024 * 1024;

function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return (length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined;
}

async function readGetBody(request: FastifyRequest): Promise<ParsedParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request.raw) {
    size += (chunk as Buffer).length;
    if (size > GET_BODY_LIMIT) throw new MalformedBody('Request body too large for a GET');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const type = request.headers['content-type'] ?? '';
  if (type.includes('application/x-www-form-urlencoded')) return parseFormParams(text);
  return parseJsonParams(text);
}

/** How many leading bytes of an upload are kept for recognising its type. */
const SNIFF_BYTES = 4096;

/** Writes one multipart file part to a temporary file, enforcing the upload size limit. */
async function spool(part: MultipartFile, directory: string, maxBytes: number): Promise<Upload> {
  const file = path.join(directory, `${crypto.randomBytes(16).toString('hex')}.upload`);
  const measure = new Measure(maxBytes, SNIFF_BYTES);
  try {
    await pipeline(part.file, measure, fs.createWriteStream(file, { flags: 'wx', mode: 0o600 }));
  } catch (error) {
    await fs.promises.rm(file, { force: true });
    throw error;
  }
  if (part.file.truncated) {
    await fs.promises.rm(file, { force: true });
    throw new PayloadTooLarge('Payload Too Large');
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

/** The text fields of a multipart body (file parts excluded: they are not signed). */
function multipartFields(body: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  if (typeof body !== 'object' || body === null) return fields;
  for (const [name, entry] of Object.entries(body as Record<string, unknown>)) {
    const parts = Array.isArray(entry) ? entry : [entry];
    for (const part of parts as (MultipartValue | MultipartFile)[]) {
      if (part.type === 'field') fields[name] = String(part.value);
    }
  }
  return fields;
}

/** Which wire format answers a failure on this path. */
function isV2Path(url: string): boolean {
  return (
    url.startsWith('/api/') &&
    !url.startsWith('/api/v3') &&
    !url.startsWith('/api/room') &&
    !url.startsWith('/api/docs')
  );
}

/** Sends the answer for a failure in the wire format of the path's API version. */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: DomainError): FastifyReply {
  const answer = isV2Path(request.url) ? v2Answer(error) : v3Answer(error);
  reply.code(answer.status);
  if (answer.body === null) return reply.send();
  return reply.type('application/json; charset=utf-8').send(answer.body);
}

/**
 * Builds the HTTP server: body parsers, parameter merging, error mapping, health, OpenAPI, and the
 * V3 and V2 routes. Returns it ready to listen; the caller owns start and close.
 */
export async function buildServer(deps: ServerDeps): Promise<FastifyInstance> {
  const { config, database, logger } = deps;
  // Typed as Fastify's own logger interface so the instance keeps Fastify's default generics.
  const baseLogger: FastifyBaseLogger = logger;
  const app = Fastify({
    loggerInstance: baseLogger,
    // Fastify's own request lines would print query strings, which carry signatures; one line per
    // request is written below instead, with the path only.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.maxUploadBytes,
    routerOptions: {
      ignoreTrailingSlash: true,
      // Queries are read like form bodies: tolerant of unencoded values, with their signed texts.
      querystringParser: (text: string) => parseFormParams(text) as unknown as Record<string, unknown>,
    },
    // Parameters are checked by the domain, which owns the exact error messages; the schemas
    // describe the API (OpenAPI) and do not validate or reshape anything.
    ajv: { customOptions: { strict: false } },
  });
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  // Fastify forbids shared object defaults; the preValidation hook below sets it on every request.
  app.decorateRequest('input', null as unknown as ParsedParams);
  app.decorateRequest('actor', undefined);
  app.decorateRequest('uploads', null as unknown as Upload[]);

  const spoolDirectory = path.join(config.dataDir, 'tmp', 'uploads');
  fs.mkdirSync(spoolDirectory, { recursive: true });
  await app.register(multipart, {
    attachFieldsToBody: true,
    limits: { fileSize: config.maxUploadBytes, files: 5, fields: 200, fieldSize: 1024 * 1024, parts: 210 },
    async onFile(this: FastifyRequest, part: MultipartFile) {
      const upload = await spool(part, spoolDirectory, config.maxUploadBytes);
      this.uploads.push(upload);
    },
  });
  app.addHook('onRequest', (request, _reply, done) => {
    request.uploads = [];
    done();
  });
  app.addHook('onResponse', async (request) => {
    await Promise.all(request.uploads.map((upload) => fs.promises.rm(upload.path, { force: true })));
  });

  app.removeContentTypeParser(['application/json', 'text/plain']);
  const jsonParser = (
    _request: unknown,
    body: string | Buffer,
    done: (error: Error | null, body?: unknown) => void,
  ) => {
    try {
      done(null, parseJsonParams(body.toString()));
    } catch (error) {
      done(error as Error);
    }
  };
  app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonParser);
  app.addContentTypeParser(/^application\/[\w.+-]*\+json$/, { parseAs: 'string' }, jsonParser);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, parseFormParams(body as string));
  });

  app.addHook('preValidation', async (request) => {
    const query = (request.query as ParsedParams | undefined) ?? EMPTY_PARAMS;
    let body = request.isMultipart()
      ? stringParams(multipartFields(request.body))
      : ((request.body as ParsedParams | undefined) ?? EMPTY_PARAMS);
    if ((request.method === 'GET' || request.method === 'HEAD') && hasBody(request.headers)) {
      body = await readGetBody(request);
    }
    const route = stringParams((request.params as Record<string, string> | undefined) ?? {});
    request.input = mergeParams(query, body, route);
  });

  app.addHook('onResponse', async (request, reply) => {
    request.log.debug(
      {
        method: request.method,
        path: request.url.split('?')[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });

  app.setErrorHandler((error, request, reply) => {
    const domain = error instanceof DomainError ? error : domainErrorFromFramework(error);
    if (domain !== undefined) {
      if (domain.code === 'unauthorized') request.log.warn({ reason: domain.message }, 'request refused');
      // The parser's message can quote the body (secrets included), so only the fact is logged.
      if (domain.code === 'malformed_body')
        request.log.info({ path: request.url.split('?')[0] }, 'unreadable body');
      return sendError(request, reply, domain);
    }
    request.log.error({ err: error }, 'unexpected error');
    if (isV2Path(request.url)) return reply.code(500).send();
    return reply.code(500).type('application/json; charset=utf-8').send({ error: 'Internal Server Error' });
  });

  app.setNotFoundHandler((request, reply) => {
    const answer = isV2Path(request.url)
      ? { status: 404, body: null }
      : { status: 404, body: { error: 'Not Found' } };
    reply.code(answer.status);
    return answer.body === null ? reply.send() : reply.send(answer.body);
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Invigil API',
        version: '3',
        description:
          'Signed HTTP API of the Invigil proctoring service: V3 under /api/v3 and legacy V2 under /api. ' +
          'Every call carries timestamp, nonce and signature; see docs/signing.md.',
      },
      components: {
        securitySchemes: {
          token: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'Token token=<api_token>',
          },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs' });

  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    const ok = await database.ping();
    return reply.code(ok ? 200 : 503).send(ok ? { status: 'ok' } : { status: 'unavailable' });
  });
  app.get('/api/openapi.json', { schema: { hide: true } }, () => app.swagger());

  registerFileRoutes(app, deps);
  await app.register(
    (scope, _options, done) => {
      registerV3(scope, deps);
      done();
    },
    { prefix: '/api/v3' },
  );
  // The candidate room: unsigned (its token is the credential), JSON errors, its own rate limit.
  await app.register((scope) => registerRoomRoutes(scope, deps), { prefix: '/api/room' });
  registerRoomPage(app, deps);
  await app.register(
    (scope, _options, done) => {
      registerV2(scope, deps);
      done();
    },
    { prefix: '/api' },
  );
  return app;
}
