import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Actor } from '../domain/access.ts';
import { DomainError, Invalid, PayloadTooLarge } from '../domain/errors.ts';
import type { Upload } from '../storage/upload.ts';
import type { RouteDeps } from './route-deps.ts';
import { docsPageOptions } from './docs/docs-page.ts';
import { registerFileRoutes } from './files.routes.ts';
import { answerClientError, guardConnections, hasBody, nodeServerOptions } from './connection-guard.ts';
import { completeRouteSchema, ignoredParams, ignoredParamsHeader } from './openapi.ts';
import { registerRoomPage } from './room/page.routes.ts';
import { registerMobilePages } from './mobile/pages.routes.ts';
import { registerLiveAssets } from './live/assets.routes.ts';
import { registerWebAssets } from './web-build.ts';
import { registerFlagModels } from './room/models.routes.ts';
import { registerRoomRoutes } from './room/room.routes.ts';
import { registerCandidateDataPages } from './room/candidate-data.routes.ts';
import { registerPractice } from './practice/practice.routes.ts';
import { registerMobileRoutes } from './mobile/mobile.routes.ts';
import { registerLtiProctoringRoutes } from './lti/proctoring.routes.ts';
import { registerLtiDeepLinkingRoutes } from './lti/deep-linking.routes.ts';
import { registerLtiRoutes } from './lti/lti.routes.ts';
import { domainErrorFromFramework, v2Answer, v3Answer } from './errors.ts';
import { createUnavailableMapper, RETRY_AFTER_SECONDS } from './unavailable.ts';
import {
  EMPTY_PARAMS,
  mergeParams,
  nulParam,
  type ParsedParams,
  parseFormParams,
  parseJsonParams,
  stringParams,
} from './request-params.ts';
import { registerV2 } from './v2/index.ts';
import { registerUploads } from './uploads.ts';
import { registerV3 } from './v3/index.ts';
import { registerStaffSignInRoutes } from './staff/sign-in.routes.ts';
import { registerAccountRoutes } from './staff/account.routes.ts';
import { registerConsoleRoutes, storageMediaOrigins } from './console/console.routes.ts';
import { liveConnectSources } from '../live/csp.ts';
import { registerLiveSockets } from './live/socket.routes.ts';

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

/**
 * Reads the JSON or form body of a GET (compat), within `limit` bytes: refused from Content-Length
 * before reading, or as soon as a chunked body passes the limit. Throws PayloadTooLarge, MalformedJson.
 */
async function readGetBody(
  request: FastifyRequest,
  reply: FastifyReply,
  limit: number,
): Promise<ParsedParams> {
  if (Number(request.headers['content-length']) > limit) {
    reply.header('connection', 'close');
    throw new PayloadTooLarge('Payload Too Large');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request.raw) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      reply.header('connection', 'close');
      throw new PayloadTooLarge('Payload Too Large');
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const type = request.headers['content-type'] ?? '';
  if (type.includes('application/x-www-form-urlencoded')) return parseFormParams(text);
  return parseJsonParams(text);
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

/**
 * The request target with runs of slashes in its path squeezed to one, as Rails routes them (a
 * public Python client builds `/api/v3//exams/2`). The query string is kept byte for byte: it holds
 * the signed values. Returns the target unchanged when it is not a path (absolute or `*` form).
 */
export function squeezeSlashes(target: string): string {
  if (!target.startsWith('/')) return target;
  const queryAt = target.indexOf('?');
  const path = queryAt === -1 ? target : target.slice(0, queryAt);
  if (!path.includes('//')) return target;
  return path.replace(/\/{2,}/g, '/') + (queryAt === -1 ? '' : target.slice(queryAt));
}

/** Which wire format answers a failure on this path. */
function isV2Path(url: string): boolean {
  return (
    url.startsWith('/api/') &&
    !url.startsWith('/api/v3') &&
    !url.startsWith('/api/room') &&
    !url.startsWith('/api/mobile') &&
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
 * Refuses a request with a NUL character in any parameter (name or value, query, body or route) or
 * in an uploaded file's name or field, before authentication and before any route reads it: the
 * credential itself may carry it, and PostgreSQL cannot store it. Throws Invalid (422 naming the
 * field; V2 400); returns nothing otherwise.
 */
function refuseNul(request: FastifyRequest): void {
  const name = nulParam(request.input);
  if (name !== undefined) throw new Invalid(name, 'contains a NUL character');
  for (const upload of request.uploads ?? []) {
    const field = upload.field.replaceAll('\u0000', '\\0');
    if (field !== upload.field) throw new Invalid(field, 'contains a NUL character');
    if (upload.fileName.includes('\u0000')) throw new Invalid(field, 'has a file name with a NUL character');
  }
}

/**
 * Builds the HTTP server: body parsers, parameter merging, error mapping, health, OpenAPI, and the
 * V3 and V2 routes. Returns it ready to listen; the caller owns start and close.
 */
export async function buildServer(deps: RouteDeps): Promise<FastifyInstance> {
  const { config, database, logger } = deps;
  // Typed as Fastify's own logger interface so the instance keeps Fastify's default generics.
  const baseLogger: FastifyBaseLogger = logger;
  const app = Fastify({
    loggerInstance: baseLogger,
    // Fastify's own request lines would print query strings, which carry signatures; one line per
    // request is written below instead, with the path only.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.maxUploadBytes,
    rewriteUrl: (raw) => squeezeSlashes(raw.url ?? '/'),
    clientErrorHandler: answerClientError,
    // Slow and silent clients: headers within REQUEST_TIMEOUT_MS here, bodies in guardConnections.
    http: nodeServerOptions(config.transport),
    // The router's own refusals (a path parameter over 100 characters, a broken percent escape)
    // answer without quoting the path back, as every other error does.
    frameworkErrors: (error, _request, reply) => {
      const answer = reply as FastifyReply;
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') void answer.code(414).send({ error: 'URI Too Long' });
      else void answer.code(400).send({ error: 'Bad Request' });
    },
    routerOptions: {
      ignoreTrailingSlash: true,
      // Queries are read like form bodies: tolerant of unencoded values, with their signed texts.
      querystringParser: (text: string) => parseFormParams(text) as unknown as Record<string, unknown>,
    },
    // Parameters are checked by the domain, which owns the exact error messages; the schemas
    // describe the API (OpenAPI) and do not validate or reshape anything.
    ajv: { customOptions: { strict: false } },
  });
  guardConnections(app.server, config.transport, app.log);
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  // Fastify forbids shared object defaults; the preValidation hook below sets it on every request.
  app.decorateRequest('input', null as unknown as ParsedParams);
  app.decorateRequest('actor', undefined);
  app.decorateRequest('uploads', null as unknown as Upload[]);

  // Multipart: the credential checked before the body, spool files removed however the request ends.
  await registerUploads(app, { config, services: deps.services, now: () => deps.clock.now() });

  // Every answer says nosniff, so no browser runs a JSON answer (which may echo input) as a page or a
  // script; set first, so refusals from later hooks carry it too.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('x-content-type-options', 'nosniff');
    done();
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
  // JSON and form bodies are parsed whole on the event loop, so they get their own small limit
  // (MAX_BODY_BYTES), checked from Content-Length before reading and while reading a chunked body.
  const small = { parseAs: 'string', bodyLimit: config.maxBodyBytes } as const;
  app.addContentTypeParser('application/json', small, jsonParser);
  app.addContentTypeParser(/^application\/[\w.+-]*\+json$/, small, jsonParser);
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    small,
    (_req, body: string | Buffer, done) => {
      try {
        done(null, parseFormParams(body.toString()));
      } catch (error) {
        done(error as Error);
      }
    },
  );

  app.addHook('preValidation', async (request, reply) => {
    // The not-found route's query comes from Fastify's own parser (a plain object), not ours.
    const parsed = request.query as Partial<ParsedParams> | undefined;
    const query =
      parsed?.values !== undefined && parsed.signing !== undefined ? (parsed as ParsedParams) : EMPTY_PARAMS;
    let body = request.isMultipart()
      ? stringParams(multipartFields(request.body))
      : ((request.body as ParsedParams | undefined) ?? EMPTY_PARAMS);
    if ((request.method === 'GET' || request.method === 'HEAD') && hasBody(request.headers)) {
      body = await readGetBody(request, reply, config.maxBodyBytes);
    }
    const route = stringParams((request.params as Record<string, string> | undefined) ?? {});
    request.input = mergeParams(query, body, route);
    refuseNul(request);
  });

  // V3 ignores parameters a route does not know (clients send extras) but names them, so a
  // misspelt one (`webcam` for `web_cam`) is visible to the client and in the debug log.
  // Both hooks below run on every request, so they take callbacks (no promise each) and return
  // early when they have nothing to do.
  app.addHook('preHandler', (request, reply, done) => {
    const { schema } = request.routeOptions;
    if (schema === undefined || !request.url.startsWith('/api/v3/')) {
      done();
      return;
    }
    const ignored = ignoredParams(schema, Object.keys(request.input.values));
    if (ignored.length > 0) {
      reply.header('x-ignored-params', ignoredParamsHeader(ignored));
      request.log.debug({ path: request.url.split('?')[0], ignored }, 'ignored parameters');
    }
    done();
  });

  app.addHook('onResponse', (request, reply, done) => {
    if (request.log.level === 'debug' || request.log.level === 'trace') {
      request.log.debug(
        {
          method: request.method,
          path: request.url.split('?')[0],
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
        },
        'request',
      );
    }
    done();
  });

  // A database outage is answered 503 with Retry-After (never 500): the request itself was fine.
  const unavailable = createUnavailableMapper(logger);
  app.setErrorHandler((error, request, reply) => {
    const domain =
      error instanceof DomainError ? error : (domainErrorFromFramework(error) ?? unavailable(error));
    if (domain !== undefined) {
      if (domain.code === 'unavailable') reply.header('retry-after', String(RETRY_AFTER_SECONDS));
      if (domain.code === 'unauthorized') request.log.warn({ reason: domain.message }, 'request refused');
      // Fail closed, loudly: the operator must restore the server key (docs/storage.md).
      if (domain.code === 'data_key_unavailable')
        request.log.error({ reason: domain.message }, 'stored data cannot be decrypted');
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

  // Live proctoring's WebSockets, ahead of every other route (see registerLiveSockets).
  await registerLiveSockets(app, deps);

  await app.register(swagger, {
    // Descriptions, the failures common to each API family and exact answer shapes, added once.
    transform: ({ schema, url }) => ({ schema: completeRouteSchema(schema, url) ?? schema, url }),
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Invigil API',
        version: '3',
        description:
          'The HTTP API of Invigil, a self-hostable service for proctored online exams: exams, instruction ' +
          'documents and attachments, student sessions, institutes and users, LTI connections, and the ' +
          'candidate exam room. V3 lives under /api/v3 (Accept: application/vnd.procwise.v3, header ' +
          '`Authorization: Token token=<api_token>`), the legacy V2 under /api (`api_token` as a signed ' +
          'parameter), the room under /api/room/<token> (the token is the credential). Every V3 and V2 call ' +
          'carries timestamp, nonce and signature (HMAC-SHA256 of the sorted parameters; docs/signing.md), ' +
          'except a V3 call from a browser signed in to the console: its session cookie (and X-CSRF-Token on ' +
          'changes) stands in for them, which is how "Try it out" on this page works once signed in. ' +
          'V3 ignores parameters a route does not know and names them in the X-Ignored-Params header.',
      },
      components: {
        securitySchemes: {
          token: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'Token token=<api_token>',
          },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: 'invigil_session',
            description:
              'The console session (POST /auth/sign_in), V3 only, with X-CSRF-Token on every method but GET and HEAD',
          },
        },
      },
    },
  });
  // Swagger UI with "Try it out" over the console's session cookie, under a strict CSP.
  await app.register(swaggerUi, docsPageOptions());

  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    const ok = await database.ping();
    if (!ok) reply.header('retry-after', String(RETRY_AFTER_SECONDS));
    return reply.code(ok ? 200 : 503).send(ok ? { status: 'ok' } : { status: 'unavailable' });
  });
  app.get('/api/openapi.json', { schema: { hide: true } }, () => app.swagger());

  registerFileRoutes(app, deps);
  // Staff sign-in (cookie sessions for the console) and the compat sign-in for API credentials.
  registerStaffSignInRoutes(app, deps);
  // My account: a signed-in user's own password and API credentials.
  registerAccountRoutes(app, deps);
  await app.register(
    (scope, _options, done) => {
      registerV3(scope, deps);
      done();
    },
    { prefix: '/api/v3' },
  );
  // The candidate room: unsigned (its token is the credential), JSON errors, its own rate limit.
  await app.register((scope) => registerRoomRoutes(scope, deps), { prefix: '/api/room' });
  // The practice run of the technical setup (docs/practice.md): its API beside the room's, and its pages.
  await registerPractice(app, deps);
  await app.register((scope) => registerMobileRoutes(scope, deps), { prefix: '/api/mobile' });
  registerRoomPage(app, deps);
  // A candidate's own data: the request page and the zip's expiring address (docs/candidate-data.md).
  registerCandidateDataPages(app, deps);
  // The phone as a second camera: the PIN form and the phone page (docs/room.md "The phone").
  registerMobilePages(app, deps);
  // The room's automated-flag detectors and their models, hashed and immutable (docs/automated-flags.md).
  registerFlagModels(app);
  // LMS launches: LTI 1.3 login and launch, LTI 1.1 launch, the tool's key set (docs/lti.md).
  await registerLtiRoutes(app, deps);
  // LTI Proctoring Services: the room's way on to the platform's assessment (LtiStartAssessment).
  registerLtiProctoringRoutes(app, deps);
  // LTI Deep Linking: the console's choice of exam, sent back to the platform.
  registerLtiDeepLinkingRoutes(app, deps);
  // The live-proctoring browser modules (live client, LiveKit adapter, livekit-client).
  registerLiveAssets(app);
  // The web build's hashed files (docs/architecture.md, "The web/ entries").
  registerWebAssets(app);
  // The exam office console (a built single-page app) and `/` pointing at it.
  registerConsoleRoutes(app, {
    mediaOrigins: storageMediaOrigins(deps.config.storage),
    connectOrigins: liveConnectSources(deps.config),
  });
  await app.register(
    (scope, _options, done) => {
      registerV2(scope, deps);
      done();
    },
    { prefix: '/api' },
  );
  return app;
}
