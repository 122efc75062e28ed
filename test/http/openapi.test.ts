import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { App } from '../../src/app.ts';
import { httpRequest, type HttpAnswer } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { SAMPLE } from '../helpers/multipart.ts';
import { v2Multipart } from '../helpers/v2-multipart.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';
import { createWorld, ROUTE_CALLS, send, type World } from './access-matrix.support.ts';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** `/api/v3/exams/{id}` → `/api/v3/exams/:id`, the form Fastify names a route by. */
function routeTemplate(openApiPath: string): string {
  return openApiPath.replace(/\{([^}]+)\}/g, ':$1');
}

/** Every operation of the document as `METHOD /path/:param` → operation object. */
function operations(document: Json): Map<string, Json> {
  const found = new Map<string, Json>();
  for (const [path, item] of Object.entries(object(document.paths, 'paths'))) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (isObject(operation)) found.set(`${method.toUpperCase()} ${routeTemplate(path)}`, operation);
    }
  }
  return found;
}

/** The request parameter names an operation documents: query, path and every body property. */
function documentedParams(operation: Json): Set<string> {
  const names = new Set<string>();
  for (const parameter of Array.isArray(operation.parameters) ? operation.parameters : []) {
    if (isObject(parameter) && parameter.in !== 'header') names.add(String(parameter.name));
  }
  const content = isObject(operation.requestBody) ? operation.requestBody.content : undefined;
  for (const media of isObject(content) ? Object.values(content) : []) {
    const schema = isObject(media) ? media.schema : undefined;
    if (isObject(schema) && isObject(schema.properties)) {
      for (const name of Object.keys(schema.properties)) names.add(name);
    }
  }
  return names;
}

/**
 * Walks every schema of the document and returns a line for each object that a documentation tool
 * would fill with invented `additionalProp1` keys (a map without an example, or an object with no
 * properties that is not closed).
 */
function inventedKeys(value: unknown, path: string, found: string[]): string[] {
  if (Array.isArray(value)) {
    value.forEach((item, index) => inventedKeys(item, `${path}/${index}`, found));
    return found;
  }
  if (!isObject(value)) return found;
  const type = value.type;
  const isObjectSchema = type === 'object' || (Array.isArray(type) && type.includes('object'));
  if (isObjectSchema && value.example === undefined) {
    const extra = value.additionalProperties;
    if (extra !== undefined && extra !== false) found.push(`${path}: open map without an example`);
    if (value.properties === undefined && extra === undefined)
      found.push(`${path}: object without properties`);
  }
  for (const [key, child] of Object.entries(value)) inventedKeys(child, `${path}/${key}`, found);
  return found;
}

/** Keys every object answers to that are not parameters (a spread or an inspection reads them). */
const NOT_PARAMS = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * Records, per route, every parameter name the route's code looked up in the merged parameters
 * (read, tested with `in`, or checked as an own property), by wrapping them in a Proxy before any
 * handler runs.
 */
function recordReads(app: App, reads: Map<string, Set<string>>): void {
  app.server.addHook('preHandler', (request, _reply, done) => {
    const key = `${request.method} ${request.routeOptions.url ?? ''}`;
    const seen = reads.get(key) ?? new Set<string>();
    reads.set(key, seen);
    const note = (name: string | symbol) => {
      if (typeof name === 'string' && !NOT_PARAMS.has(name)) seen.add(name);
    };
    const values = new Proxy(request.input.values, {
      get(target, name, receiver) {
        note(name);
        return Reflect.get(target, name, receiver) as unknown;
      },
      has(target, name) {
        note(name);
        return Reflect.has(target, name);
      },
      getOwnPropertyDescriptor(target, name) {
        note(name);
        return Reflect.getOwnPropertyDescriptor(target, name);
      },
    });
    request.input = { ...request.input, values };
    done();
  });
}

/** One real answer of a route, for checking against its documented answer. */
interface Exchange {
  readonly route: string;
  readonly answer: HttpAnswer;
}

function newAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat('binary', true);
  return ajv;
}

/** Checks a real answer against the document: its status is documented and its JSON body fits. */
function checkAnswer(ajv: Ajv, document: Map<string, Json>, exchange: Exchange): string | undefined {
  const operation = document.get(exchange.route);
  if (operation === undefined) return `${exchange.route}: not in the document`;
  const { status, text, headers } = exchange.answer;
  const responses = isObject(operation.responses) ? operation.responses : {};
  const documented = responses[String(status)];
  if (!isObject(documented))
    return `${exchange.route}: status ${status} is not documented (${text.slice(0, 200)})`;
  const content = isObject(documented.content) ? documented.content : {};
  const jsonMedia = Object.entries(content).find(([type]) => type.includes('json'))?.[1];
  const isJson = String(headers['content-type'] ?? '').startsWith('application/json');
  if (!isJson) {
    if (text === '' && jsonMedia === undefined) return undefined;
    if (text !== '' && Object.keys(content).some((type) => !type.includes('json'))) return undefined;
    if (
      text === '' &&
      isObject(jsonMedia) &&
      isObject(jsonMedia.schema) &&
      jsonMedia.schema.type === 'null'
    ) {
      return undefined;
    }
    if (text === '' && isObject(jsonMedia) && isObject(jsonMedia.schema)) {
      const type = jsonMedia.schema.type;
      if (Array.isArray(type) && type.includes('null')) return undefined;
    }
    return `${exchange.route} ${status}: a ${String(headers['content-type'])} answer, documented as ${Object.keys(content).join(', ')}`;
  }
  if (!isObject(jsonMedia) || !isObject(jsonMedia.schema)) {
    return `${exchange.route} ${status}: a JSON answer without a documented schema`;
  }
  const validate = ajv.compile(jsonMedia.schema);
  if (validate(exchange.answer.json)) return undefined;
  return `${exchange.route} ${status}: ${ajv.errorsText(validate.errors)} in ${text.slice(0, 300)}`;
}

for (const dialect of DIALECTS) {
  describe(`GET /api/openapi.json describes exactly what the service reads and answers [${dialect}]`, () => {
    const reads = new Map<string, Set<string>>();
    const exchanges: Exchange[] = [];
    let server: TestServer;
    let world: World;
    let document: Json;
    let byRoute: Map<string, Json>;

    before(async () => {
      server = await startTestServer(dialect, { beforeListen: (app) => recordReads(app, reads) });
      const answer = await httpRequest({ url: `${server.baseUrl}/api/openapi.json` });
      assert.equal(answer.status, 200);
      document = object(answer.json, 'document');
      byRoute = operations(document);
      world = await createWorld(server);
      const caller = world.members.superuser;
      for (const [route, routeCall] of Object.entries(ROUTE_CALLS)) {
        const call = await routeCall.prepare(world, 'superuser');
        exchanges.push({ route: route.replace(' /', ' /api/v3/'), answer: await send(caller, route, call) });
      }
      await exerciseV2(server, world, exchanges);
      await exerciseRoom(server, world, exchanges);
    });
    after(async () => server.close());

    it("names the service: Invigil's own title and description", () => {
      const info = object(document.info, 'info');
      assert.equal(info.title, 'Invigil API');
      assert.match(String(info.description), /proctored online exams/);
    });

    it('describes every answer: no "Default Response", and each operation has a success', () => {
      const problems: string[] = [];
      for (const [route, operation] of byRoute) {
        const responses = object(operation.responses, `${route} responses`);
        // A browser navigation (OIDC sign-in's start and callback) succeeds with a 302.
        if (!Object.keys(responses).some((status) => status.startsWith('2') || status === '302'))
          problems.push(`${route}: no 2xx`);
        for (const [status, response] of Object.entries(responses)) {
          const text = isObject(response) ? response.description : undefined;
          if (typeof text !== 'string' || text === '' || text === 'Default Response') {
            problems.push(`${route} ${status}: ${String(text)}`);
          }
        }
      }
      assert.deepEqual(problems, []);
    });

    it('gives every object its properties or closes it, so no tool invents additionalProp1 keys', () => {
      assert.deepEqual(inventedKeys(document.paths, '', []), []);
    });

    it('documents the exam fields POST /api/v3/exams reads (web_cam, screen_share, mobile_cam, allow_*)', () => {
      const create = byRoute.get('POST /api/v3/exams');
      assert.ok(create !== undefined);
      const params = documentedParams(create);
      for (const name of [
        'web_cam',
        'screen_share',
        'mobile_cam',
        'allow_websites',
        'allow_external_applications',
        'allow_textbooks',
        'allow_calculator',
        'allow_pen_paper',
        'allow_additional',
        'global_proctoring',
        'global_reviewing',
        'exam_language',
        'timezone',
        'terms',
        'archived',
      ]) {
        assert.ok(params.has(name), `${name} is not documented`);
      }
    });

    it('exercises every V3 route of the document', () => {
      const exercised = new Set(exchanges.map((exchange) => exchange.route));
      const missing = [...byRoute.keys()].filter(
        (route) => route.includes(' /api/v3/') && !exercised.has(route),
      );
      assert.deepEqual(missing, []);
    });

    it('documents every request field a route reads (V3, V2 and the room)', () => {
      const undocumented: string[] = [];
      for (const [route, names] of reads) {
        const operation = byRoute.get(route);
        if (operation === undefined) continue;
        const documented = documentedParams(operation);
        for (const name of names) if (!documented.has(name)) undocumented.push(`${route}: ${name}`);
      }
      assert.ok(reads.size > 50, `only ${reads.size} routes were recorded`);
      assert.deepEqual(undocumented.sort(), []);
    });

    it('answers what the document says: every real answer fits its status and schema', () => {
      const ajv = newAjv();
      const problems = exchanges
        .map((exchange) => checkAnswer(ajv, byRoute, exchange))
        .filter((problem) => problem !== undefined);
      assert.deepEqual(problems, []);
    });

    it('documents the failures too: a 404, a 422, a 403 and a V2 400 fit their schemas', async () => {
      const owner = world.members.owner.client;
      const failures: Exchange[] = [
        { route: 'GET /api/v3/exams/:id', answer: await owner.v3('GET', '/exams/:id', { id: 987654321 }) },
        { route: 'POST /api/v3/exams', answer: await owner.v3('POST', '/exams', { type: 'demo' }) },
        {
          route: 'POST /api/v3/exams',
          answer: await owner.v3('POST', '/exams', { name: 'x', type: 'demo', timezone: 'Mars/Olympus' }),
        },
        {
          route: 'GET /api/v3/exams',
          answer: await owner.v3('GET', '/exams', {}, { signature: '0'.repeat(64) }),
        },
        { route: 'POST /api/exams', answer: await owner.v2('POST', '/exams', { name: 'no type' }) },
        { route: 'GET /api/exams/:id', answer: await owner.v2('GET', '/exams/:id', { id: 987654321 }) },
      ];
      assert.deepEqual(
        failures.map((exchange) => exchange.answer.status),
        [404, 422, 422, 403, 400, 404],
      );
      const ajv = newAjv();
      assert.deepEqual(
        failures
          .map((exchange) => checkAnswer(ajv, byRoute, exchange))
          .filter((problem) => problem !== undefined),
        [],
      );
    });
  });
}

/** V2 calls that read request fields, made as the owner of A's exam. */
async function exerciseV2(server: TestServer, world: World, into: Exchange[]): Promise<void> {
  const client = world.members.owner.client;
  const call = async (
    method: string,
    template: string,
    params: Record<string, string | number | boolean>,
  ) => {
    into.push({ route: `${method} /api${template}`, answer: await client.v2(method, template, params) });
    return into[into.length - 1]?.answer;
  };
  const created = await call('POST', '/exams', { name: 'V2 exam', type: 'record_review', duration: 45 });
  const examId = Number(object(created?.json, 'created').id);
  await call('GET', '/exams', {});
  await call('GET', '/exams/:id', { id: examId });
  await call('POST', '/exams/:id', { id: examId, name: 'V2 renamed', upload_exam: true });
  await call('POST', '/exams/:id/add_student', { id: examId, name: 'V2 student', email: 'v2@example.org' });
  await call('GET', '/exams/:id/show_students', { id: examId });
  await call('POST', '/exams/:id/send_emails', { id: examId });
  const document = await call('POST', '/documents', { exam_id: examId, document_text: 'Read this.' });
  const documentId = Number(object(document?.json, 'document').id);
  await call('GET', '/documents', {});
  await call('GET', '/documents/:id', { id: documentId });
  await call('POST', '/documents/:id', { id: documentId, document_text: 'Read this instead.' });
  const attached = await v2Multipart(client, 'POST', '/documents/:id/add_attachment', { id: documentId }, [
    { field: 'file', fileName: 'notes.pdf', contentType: 'application/pdf', bytes: SAMPLE.pdf },
  ]);
  into.push({ route: 'POST /api/documents/:id/add_attachment', answer: attached });
  const attachment = object(object(attached.json, 'attached').attachment, 'attachment');
  await call('GET', '/documents/:id/attachments_list', { id: documentId });
  await call('DELETE', '/documents/:id/destroy_attachment', {
    id: documentId,
    attachment_id: Number(attachment.attachment_id),
  });
  const students = await call('GET', '/exams/:id/show_students', { id: examId });
  const [student] = object(students?.json, 'students').student_session as Json[];
  await call('DELETE', '/exams/:id/delete_student', {
    id: examId,
    student_session_id: Number(student?.student_id),
  });
  await call('DELETE', '/documents/:id', { id: documentId });
  await call('DELETE', '/exams/:id', { id: examId });
  assert.ok(server.baseUrl !== '');
}

/** The candidate room's JSON calls for a fresh session of A's exam. */
async function exerciseRoom(server: TestServer, world: World, into: Exchange[]): Promise<void> {
  const created = await world.members.owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
    exam_id: world.exam,
    name: 'Room student',
    email: 'room-openapi@example.org',
  });
  const token = String(object(object(created.json, 'created').student, 'student').token);
  const room = async (method: string, path: string, body?: Json) => {
    const answer = await httpRequest({
      url: `${server.baseUrl}/api/room/${token}${path}`,
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    into.push({ route: `${method} /api/room/:token${path}`, answer });
  };
  await room('GET', '');
  await room('PUT', '/checks', {
    webcam_check: 'succeeded',
    bandwidth_speed: 12.5,
    operating_system: 'Linux',
    browser: 'Chromium',
    browser_version: '140',
  });
  await room('POST', '/enter');
  await room('POST', '/events', { type: 'focus_lost', offset_time: 3 });
  await room('POST', '/leave');
  await room('GET', '/messages');
  // A classroom exam has no live proctor: the documented 409.
  await room('POST', '/messages', { body: 'Hello?' });
}
