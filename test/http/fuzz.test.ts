/**
 * A schema-driven fuzz run: every operation of the service's own OpenAPI document (read at run time,
 * so new routes and fields are covered without touching this file) gets a fixed number of correctly
 * signed requests carrying hostile values (wrong types, huge numbers, NUL, unicode, arrays, nested
 * objects, bad dates and JSON, prototype names) in its declared parameters and in undeclared ones,
 * in the query, a JSON body, a form body or a multipart body. No answer may be a 500, and every V3 or
 * room error must be a JSON `{"error": ...}` body. The PRNG is seeded: the seed is printed, and
 * FUZZ_SEED=<n> replays a run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { canonicalMessage } from '../../src/http/auth/canonical.ts';
import {
  mergeParams,
  type ParsedParams,
  parseFormParams,
  parseJsonParams,
  stringParams,
} from '../../src/http/request-params.ts';
import { invalid } from '../helpers/answers.ts';
import { V3_ACCEPT } from '../helpers/client.ts';
import { type HttpAnswer, httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { multipartBody, SAMPLE } from '../helpers/multipart.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';
import { hmac, nextNonce } from '../helpers/signing.ts';

const CASES_PER_OPERATION = 12;
const SEED = process.env.FUZZ_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED);
console.log(`fuzz seed ${SEED} (replay with FUZZ_SEED=${SEED})`);

/** mulberry32: a small seeded PRNG, so a failing run can be replayed exactly. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty'] as const;

/**
 * A very long word that does not compress (a run of one letter does, and then fits any index): a
 * text column with a unique index on PostgreSQL refuses an entry over about 2.7 kB.
 */
const LONG_WORD = ((): string => {
  const random = prng(7);
  let word = '';
  while (word.length < 6000) word += Math.floor(random() * 36 ** 6).toString(36);
  return word;
})();

/** Hostile texts, for any parameter in any position. */
const HOSTILE_TEXTS: readonly string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '-1',
  '0',
  '1.5',
  '-0',
  '18446744073709551616',
  '-9223372036854775809',
  '9'.repeat(400),
  '1e309',
  'NaN',
  'Infinity',
  'true',
  'null',
  '[]',
  '{}',
  '💥🙈👩‍👩‍👧',
  '\u202Eevil\u202C',
  'שלום',
  'x'.repeat(5000),
  LONG_WORD,
  `${LONG_WORD}@example.org`,
  `a${'\u0000'.repeat(3)}b`,
  '2026-02-30',
  '0000-00-00',
  '9999-12-31T23:59:60Z',
  '-271821-04-20',
  '99999999999999999999',
  '{"a":',
  '[1,2',
  '{"constructor":{"in":[]}}',
  '{"__proto__":{"eq":1}}',
  '{"toString":{"eq":1}}',
  '[{"valueOf":"asc"}]',
  '[{"constructor":"desc"}]',
  '{"id":{"in":"x"}}',
  '{"id":{"like":1}}',
  ...PROTOTYPE_NAMES,
  '%00',
  '%',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  'a=b&c=d',
  'role',
];

/** Hostile JSON texts (written as JSON, so 2^64 and 1e400 reach the server as they are written). */
const HOSTILE_JSON: readonly string[] = [
  'null',
  'true',
  'false',
  '0',
  '-1',
  '-0',
  '1.5',
  '18446744073709551616',
  '-18446744073709551617',
  '1e400',
  '-1e400',
  '1e-400',
  '123456789012345678901234567890',
  '[]',
  '[1,"a",null,true]',
  '[[[[[]]]]]',
  '{}',
  '{"a":{"b":{"c":[1]}}}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"in":[]}}',
  '{"toString":"x","valueOf":1}',
  '[{"__proto__":"asc"}]',
  '{"eq":"\\u0000"}',
  '"\\u0000"',
  '"\\ud800"',
  '"2026-02-30T25:61:00Z"',
];

function hostileJson(random: Random): string {
  if (random() < 0.5) return JSON.stringify(pick(random, HOSTILE_TEXTS));
  return pick(random, HOSTILE_JSON);
}

const HOSTILE_IDS: readonly string[] = [
  '0',
  '-1',
  '1.5',
  '2147483648',
  '18446744073709551616',
  '9'.repeat(40),
  'abc',
  '\u0000',
  '💥',
  ' 1',
  '1e3',
  LONG_WORD.slice(0, 2000),
  ...PROTOTYPE_NAMES,
];

interface OpenApiParameter {
  readonly name: string;
  readonly in: string;
}
interface OpenApiOperation {
  readonly parameters?: readonly OpenApiParameter[];
  readonly requestBody?: {
    readonly content?: Record<
      string,
      { readonly schema?: { readonly properties?: Record<string, unknown> } }
    >;
  };
}

/** One operation of the document, with what it declares. */
interface Operation {
  readonly method: string;
  readonly template: string;
  readonly pathNames: readonly string[];
  readonly fields: readonly string[];
  readonly multipart: boolean;
}

const SIGNING_NAMES = new Set(['timestamp', 'nonce', 'signature', 'api_token']);

function operationsOf(document: unknown): Operation[] {
  const paths = object(object(document, 'OpenAPI document').paths, 'paths');
  const operations: Operation[] = [];
  for (const [template, entry] of Object.entries(paths)) {
    for (const [method, raw] of Object.entries(object(entry, template))) {
      if (method === 'head' || method === 'options') continue;
      const operation = raw as OpenApiOperation;
      const parameters = operation.parameters ?? [];
      const content = operation.requestBody?.content ?? {};
      const bodyFields = Object.values(content).flatMap((media) =>
        Object.keys(media.schema?.properties ?? {}),
      );
      const fields = new Set(
        [...parameters.filter((p) => p.in === 'query').map((p) => p.name), ...bodyFields].filter(
          (name) => !SIGNING_NAMES.has(name),
        ),
      );
      operations.push({
        method: method.toUpperCase(),
        template,
        pathNames: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        fields: [...fields],
        multipart: Object.keys(content).some((type) => type.startsWith('multipart/')),
      });
    }
  }
  return operations;
}

type Api = 'v3' | 'v2' | 'room' | 'other';

/**
 * Routes without a credential that the OpenAPI document hides (browser pages and LTI), fuzzed too:
 * each is reachable by anyone, so a NUL or a long word in any field must not reach a database.
 */
const HIDDEN_OPERATIONS: readonly Operation[] = [
  { method: 'POST', template: '/m', pathNames: [], fields: ['pin', 'email'], multipart: false },
  {
    method: 'GET',
    template: '/lti/login',
    pathNames: [],
    fields: ['iss', 'login_hint', 'target_link_uri', 'client_id', 'lti_deployment_id', 'lti_message_hint'],
    multipart: false,
  },
  {
    method: 'POST',
    template: '/lti/login',
    pathNames: [],
    fields: ['iss', 'login_hint', 'target_link_uri', 'client_id', 'lti_storage_target'],
    multipart: false,
  },
  {
    method: 'POST',
    template: '/lti/launch',
    pathNames: [],
    fields: [
      'id_token',
      'state',
      'oauth_consumer_key',
      'oauth_nonce',
      'oauth_signature',
      'user_id',
      'resource_link_id',
    ],
    multipart: false,
  },
  {
    method: 'GET',
    template: '/lti/start-assessment/{token}',
    pathNames: ['token'],
    fields: [],
    multipart: false,
  },
];

function apiOf(template: string): Api {
  if (template.startsWith('/api/v3/')) return 'v3';
  if (template.startsWith('/api/room/') || template.startsWith('/api/mobile/')) return 'room';
  if (template.startsWith('/api/')) return 'v2';
  return 'other';
}

/** Records the fuzz run points path ids at, so some requests reach a real record. */
interface Seed {
  readonly ids: Readonly<Record<string, number>>;
  readonly roomToken: string;
  /** The pairing token of the session's phone (the exam has mobile_cam), for `/api/mobile/{token}`. */
  readonly mobileToken: string;
}

/** A real id for a path parameter: by its name, or for `id` by the path segment before it. */
function realId(seed: Seed, template: string, name: string): string {
  if (name === 'token') return template.startsWith('/api/mobile/') ? seed.mobileToken : seed.roomToken;
  const segments = template.split('/');
  const at = segments.indexOf(`{${name}}`);
  const collection = name === 'id' ? (segments[at - 1] ?? '') : name.replace(/_id$/, 's');
  return String(seed.ids[collection] ?? 1);
}

type BodyKind = 'query' | 'json' | 'form' | 'multipart';

/** One request as built: what is sent, and a short description for a failure message. */
interface Built {
  readonly url: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: string | Buffer;
  readonly describe: string;
}

function formText(pairs: readonly (readonly [string, string])[]): string {
  return pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&');
}

/** Form/query pairs with hostile values, some as `name[]` arrays and `name[key]` hashes. */
function hostilePairs(random: Random, names: readonly string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (const name of names) {
    const shape = random();
    if (shape < 0.15) {
      pairs.push([`${name}[]`, pick(random, HOSTILE_TEXTS)], [`${name}[]`, pick(random, HOSTILE_TEXTS)]);
    } else if (shape < 0.25) {
      pairs.push([`${name}[${pick(random, [...PROTOTYPE_NAMES, 'eq', 'a'])}]`, pick(random, HOSTILE_TEXTS)]);
    } else {
      pairs.push([name, pick(random, HOSTILE_TEXTS)]);
    }
  }
  return pairs;
}

/** The names one case sends: a random part of the declared fields, plus a few undeclared ones. */
function chosenNames(random: Random, operation: Operation): string[] {
  const names = operation.fields.filter(() => random() < 0.6);
  const extra = Math.floor(random() * 3);
  for (let i = 0; i < extra; i += 1)
    names.push(
      pick(random, [...PROTOTYPE_NAMES, 'webcam', 'x'.repeat(300), '💥', 'a[b][c]', 'n\u0000ul', LONG_WORD]),
    );
  return [...new Set(names)];
}

function buildRequest(
  random: Random,
  operation: Operation,
  seed: Seed,
  baseUrl: string,
  credentials: { apiToken: string; secretKey: string },
): Built {
  const api = apiOf(operation.template);
  const route: Record<string, string> = {};
  let path = operation.template;
  for (const name of operation.pathNames) {
    const value = random() < 0.5 ? realId(seed, operation.template, name) : pick(random, HOSTILE_IDS);
    route[name] = value;
    path = path.replace(`{${name}}`, encodeURIComponent(value));
  }
  const names = chosenNames(random, operation);
  const readsQuery = operation.method === 'GET' || operation.method === 'DELETE';
  const kinds: BodyKind[] = readsQuery ? ['query', 'query', 'json'] : ['json', 'form', 'query'];
  if (operation.multipart || api === 'room') kinds.push('multipart', 'multipart');
  const kind = pick(random, kinds);
  const signed = api === 'v3' || api === 'v2';
  const auth: [string, string][] = [];
  if (api === 'v2') auth.push(['api_token', credentials.apiToken]);
  if (signed) auth.push(['timestamp', String(Date.now())], ['nonce', nextNonce()]);
  const headers: Record<string, string> = {};
  if (api === 'v3') {
    headers.accept = V3_ACCEPT;
    headers.authorization = `Token token=${credentials.apiToken}`;
  }
  const sign = (...sources: ParsedParams[]): string =>
    hmac(credentials.secretKey, canonicalMessage(mergeParams(...sources, stringParams(route)).signing));

  let query = '';
  let body: string | Buffer | undefined;
  if (kind === 'query' || kind === 'form') {
    const pairs = [...hostilePairs(random, names), ...auth];
    const text = formText(pairs);
    const signature = signed ? `&signature=${sign(parseFormParams(text))}` : '';
    if (kind === 'query') query = `${text}${signature}`;
    else {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = `${text}${signature}`;
    }
  } else if (kind === 'json') {
    const members = [
      ...names.map((name) => `${JSON.stringify(name)}:${hostileJson(random)}`),
      ...auth.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`),
    ];
    const unsigned = `{${members.join(',')}}`;
    const signature = signed ? sign(parseJsonParams(unsigned)) : undefined;
    headers['content-type'] = 'application/json';
    body = signature === undefined ? unsigned : `{${[...members, `"signature":"${signature}"`].join(',')}}`;
  } else {
    const fields: Record<string, string> = {};
    for (const name of names) {
      if (name !== '__proto__') fields[name] = pick(random, HOSTILE_TEXTS);
    }
    for (const [name, value] of auth) fields[name] = value;
    if (signed) fields.signature = sign(stringParams(fields));
    const fileField = pick(random, ['file', 'document', 'photo', 'constructor']);
    const bytes = pick(random, [SAMPLE.png, SAMPLE.pdf, SAMPLE.binary, SAMPLE.elf, Buffer.alloc(0)]);
    const built = multipartBody(fields, [
      { field: fileField, fileName: pick(random, HOSTILE_TEXTS) || 'f', contentType: 'image/png', bytes },
    ]);
    headers['content-type'] = built.contentType;
    body = built.body;
  }
  const url = `${baseUrl}${path}${query === '' ? '' : `?${query}`}`;
  const snippet = (typeof body === 'string' ? body : (body?.toString('latin1') ?? query)).slice(0, 300);
  return {
    url,
    method: operation.method,
    headers,
    ...(body === undefined ? {} : { body }),
    describe: `${operation.method} ${path} as ${kind}: ${snippet}`,
  };
}

/** Why an answer is wrong, or undefined when it is acceptable. */
function problemWith(api: Api, answer: HttpAnswer): string | undefined {
  if (answer.status >= 500) return `status ${answer.status}`;
  if ((api === 'v3' || api === 'room') && answer.status >= 400) {
    const json = answer.json;
    const ok =
      typeof json === 'object' && json !== null && typeof (json as { error?: unknown }).error === 'string';
    if (!ok) return `status ${answer.status} with a non-JSON error body`;
  }
  return undefined;
}

/** A signed V3 POST of plain string fields (`route`: the path's parameters, which are signed too). */
async function post(
  server: TestServer,
  credentials: { apiToken: string; secretKey: string },
  template: string,
  params: Record<string, string>,
  route: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const fields = { ...params, timestamp: String(Date.now()), nonce: nextNonce() };
  const signature = hmac(
    credentials.secretKey,
    canonicalMessage(mergeParams(stringParams(fields), stringParams(route)).signing),
  );
  const answer = await httpRequest({
    url: `${server.baseUrl}/api/v3${template}`,
    method: 'POST',
    headers: {
      accept: V3_ACCEPT,
      authorization: `Token token=${credentials.apiToken}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ ...fields, signature }),
  });
  assert.ok(answer.status < 300, `${template}: ${answer.status} ${answer.text}`);
  return object(answer.json, 'answer');
}

for (const dialect of DIALECTS) {
  describe(`fuzzing every OpenAPI operation with hostile parameters [${dialect}]`, () => {
    let server: TestServer;
    let credentials: { apiToken: string; secretKey: string };
    let seed: Seed;
    let operations: Operation[] = [];

    before(async () => {
      server = await startTestServer(dialect);
      const home = await server.institute();
      // A superuser reaches every route; the records it fuzzes live in another institute, so a
      // hostile destroy never takes the caller's own institute or user with it.
      credentials = (await server.user(home, 'superuser')).credentials;
      const target = await server.institute();
      const user = await server.user(target, 'teacher');
      const exam = object(
        (
          await post(server, credentials, '/exams', {
            name: 'Fuzz',
            type: 'record_review',
            duration_minutes: '60',
            mobile_cam: 'true',
          })
        ).exam,
        'exam',
      );
      const examId = Number(exam.id);
      const session = object(
        (
          await post(
            server,
            credentials,
            `/exams/${examId}/student_sessions`,
            { name: 'S', email: 's@example.org' },
            { exam_id: String(examId) },
          )
        ).student,
        'student',
      );
      const document = await post(
        server,
        credentials,
        `/exams/${examId}/documents`,
        { name: 'D', exam_content: 'x' },
        { exam_id: String(examId) },
      ).catch((): Record<string, unknown> => ({}));
      const documentId = Number(object(document.document ?? { id: 1 }, 'document').id);
      const row = await server.app.database.db
        .selectFrom('student_sessions')
        .select('token')
        .where('id', '=', Number(session.id))
        .executeTakeFirstOrThrow();
      seed = {
        ids: {
          exams: examId,
          documents: documentId,
          student_sessions: Number(session.id),
          institutes: target,
          users: user.id,
          comanagers: user.id,
        },
        roomToken: row.token,
        mobileToken: await server.app.services.mobile
          .pairByPin(String(session.pin_code).padStart(6, '0'), 's@example.org')
          .then((paired) => paired.mobileToken),
      };
      const spec = await httpRequest({ url: `${server.baseUrl}/api/openapi.json` });
      assert.equal(spec.status, 200);
      operations = [...operationsOf(spec.json), ...HIDDEN_OPERATIONS];
    });
    after(() => server.close());

    it('reads a document with V3, V2 and room operations', () => {
      const apis = new Set(operations.map((operation) => apiOf(operation.template)));
      for (const api of ['v3', 'v2', 'room'] as const) assert.ok(apis.has(api), `no ${api} operation`);
    });

    it('answers 422 naming the field for prototype names in filter and sort on every V3 list', async () => {
      const lists = operations.filter(
        (operation) =>
          operation.method === 'GET' &&
          apiOf(operation.template) === 'v3' &&
          operation.fields.includes('filter'),
      );
      assert.ok(lists.length > 0);
      for (const operation of lists) {
        for (const name of PROTOTYPE_NAMES) {
          for (const [param, value] of [
            ['filter', JSON.stringify({ [name]: { in: [] } })],
            ['filter', `{${JSON.stringify(name)}:{"eq":1}}`],
            ['sort', `[{${JSON.stringify(name)}:"asc"}]`],
          ] as const) {
            let path = operation.template;
            const route: Record<string, string> = {};
            for (const pathName of operation.pathNames) {
              route[pathName] = realId(seed, operation.template, pathName);
              path = path.replace(`{${pathName}}`, route[pathName]);
            }
            const fields = { [param]: value, timestamp: String(Date.now()), nonce: nextNonce() };
            const signature = hmac(
              credentials.secretKey,
              canonicalMessage(mergeParams(stringParams(fields), stringParams(route)).signing),
            );
            const answer = await httpRequest({
              url: `${server.baseUrl}${path}?${formText([...Object.entries(fields), ['signature', signature]])}`,
              headers: { accept: V3_ACCEPT, authorization: `Token token=${credentials.apiToken}` },
            });
            assert.equal(answer.status, 422, `${operation.template} ${param}=${value}: ${answer.text}`);
            if (value.includes('"eq"') || value.includes('"in"') || param === 'sort') {
              assert.deepEqual(
                answer.json,
                invalid(param, `has an unknown field: ${name}`),
                `${operation.template} ${value}`,
              );
            }
          }
        }
      }
    });
    it(`answers ${CASES_PER_OPERATION} hostile requests per operation without a 500`, async () => {
      const random = prng(SEED);
      const problems: string[] = [];
      for (const operation of operations) {
        const api = apiOf(operation.template);
        for (let i = 0; i < CASES_PER_OPERATION; i += 1) {
          const built = buildRequest(random, operation, seed, server.baseUrl, credentials);
          let answer: HttpAnswer;
          try {
            answer = await httpRequest(built);
          } catch (error) {
            problems.push(`no answer (${(error as Error).message}): ${built.describe}`);
            continue;
          }
          const problem = problemWith(api, answer);
          if (problem !== undefined)
            problems.push(`${problem}: ${built.describe} → ${answer.text.slice(0, 200)}`);
        }
      }
      assert.deepEqual(problems, [], `seed ${SEED}`);
    });
  });
}
