import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { canonicalMessage, signMessage } from '../../../src/http/auth/canonical.ts';
import { rubyFloat, rubyInspectString, rubyNumber } from '../../../src/http/auth/ruby-format.ts';
import {
  mergeParams,
  type ParsedParams,
  parseFormParams,
  parseJsonParams,
  stringParams,
} from '../../../src/http/request-params.ts';
import { encryptSecret, hashToken, loadServerKeys } from '../../../src/security/keys.ts';
import { httpRequest } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { assertAuthenticated, assertRefused, freshNonce, v3Headers } from './support.ts';

/**
 * The published vectors, a verbatim copy of the contract's `spec/signature-vectors.json` (computed by
 * Ruby 3.1 itself), kept beside this test so the suite needs nothing outside the repository.
 */
interface Vector {
  readonly title: string;
  readonly body_kind: string;
  readonly sent: string;
  readonly route_params: Readonly<Record<string, string>>;
  readonly canonical: string;
  readonly secret_key: string;
  readonly signature: string;
}
const VECTORS: readonly Vector[] = (
  JSON.parse(fs.readFileSync(new URL('./signature-vectors.json', import.meta.url), 'utf8')) as {
    vectors: Vector[];
  }
).vectors;

/** Reads `sent` with the reader the server uses for that kind of body. */
function readSent(vector: Vector): ParsedParams {
  if (vector.body_kind === 'application/json') return parseJsonParams(vector.sent);
  if (
    vector.body_kind === 'query string' ||
    vector.body_kind.startsWith('application/x-www-form-urlencoded')
  ) {
    return parseFormParams(vector.sent);
  }
  throw new Error(`vector "${vector.title}": unknown body kind ${vector.body_kind}`);
}

describe('signature test vectors (spec/signature-vectors.json)', () => {
  it('holds the eight published vectors', () => {
    assert.equal(VECTORS.length, 8);
  });

  for (const vector of VECTORS) {
    it(`${vector.title}: the canonical message and the HMAC are Ruby's`, () => {
      const params = mergeParams(readSent(vector), stringParams(vector.route_params));
      const message = canonicalMessage(params.signing);
      assert.equal(message, vector.canonical);
      assert.equal(signMessage(vector.secret_key, message), vector.signature);
    });
  }
});

describe('canonicalMessage', () => {
  it('sorts names by their UTF-8 bytes, not by UTF-16 code units', () => {
    const message = canonicalMessage({ '😀': 'b', '！': 'a', a: '3', _: '2', Z: '1', a_b: '4', ab: '5' });
    assert.equal(message, 'Z=1?_=2?a=3?a_b=4?ab=5?！=a?😀=b');
  });

  it('leaves out signature and nothing else, writing values without any encoding', () => {
    const message = canonicalMessage({ signature: 'f'.repeat(64), q: 'a=b?c&d e%20', empty: '' });
    assert.equal(message, 'empty=?q=a=b?c&d e%20');
  });

  it('keeps every digit of big integers nested in arrays and objects', () => {
    const params = parseJsonParams('{"a":[12345678901234567890,-1e2],"h":{"n":98765432109876543210}}');
    assert.equal(
      canonicalMessage(params.signing),
      'a=[12345678901234567890, -100.0]?h={"n"=>98765432109876543210}',
    );
  });

  it('writes form arrays and hashes as Ruby inspects them', () => {
    const params = parseFormParams('ids[]=1&ids[]=a%22b&meta[k]=v+w&plain=x+y%21');
    assert.equal(canonicalMessage(params.signing), 'ids=["1", "a\\"b"]?meta={"k"=>"v w"}?plain=x y!');
  });
});

describe("rubyFloat writes a Float as Ruby's Float#to_s does", () => {
  const cases: readonly (readonly [number, string])[] = [
    [1.5, '1.5'],
    [1e3, '1000.0'],
    [1e15, '1000000000000000.0'],
    [1e16, '1.0e+16'],
    [1.2345678901234568e17, '1.2345678901234568e+17'],
    [0.0001, '0.0001'],
    [0.00001, '1.0e-05'],
    [2.5e-7, '2.5e-07'],
    [-0, '-0.0'],
    [0, '0.0'],
    [-1.5, '-1.5'],
    [100, '100.0'],
    [0.1 + 0.2, '0.30000000000000004'],
    [123456.789, '123456.789'],
    [1e100, '1.0e+100'],
    [5e-324, '5.0e-324'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
  ];
  for (const [value, expected] of cases) {
    it(`writes ${Object.is(value, -0) ? '-0' : String(value)} as ${expected}`, () => {
      assert.equal(rubyFloat(value), expected);
    });
  }
});

describe('rubyNumber writes a JSON number as the Ruby value it parses to', () => {
  it('keeps every digit of an integer beyond 2^53', () => {
    assert.equal(rubyNumber('12345678901234567890').top, '12345678901234567890');
    assert.equal(rubyNumber('-98765432109876543').top, '-98765432109876543');
  });

  it('reads -0 as the Integer 0 and -0.0 as the Float -0.0', () => {
    assert.equal(rubyNumber('-0').top, '0');
    assert.equal(rubyNumber('-0.0').top, '-0.0');
  });

  it('reads any fraction or exponent as a Float', () => {
    assert.equal(rubyNumber('1E2').top, '100.0');
    assert.equal(rubyNumber('1e+3').top, '1000.0');
    assert.equal(rubyNumber('2.50').top, '2.5');
  });
});

describe("rubyInspectString writes a string as Ruby's String#inspect does (values inside arrays and hashes)", () => {
  const cases: readonly (readonly [string, string, string])[] = [
    ['plain text', 'abc', '"abc"'],
    ['the empty string', '', '""'],
    ['a double quote and a backslash', 'a"b\\c', '"a\\"b\\\\c"'],
    ['a single quote, untouched', "O'Brien", '"O\'Brien"'],
    ['newline, tab, carriage return', 'a\nb\tc\rd', '"a\\nb\\tc\\rd"'],
    ['form feed, vertical tab, backspace, bell, escape', '\f\v\b\x07\x1b', '"\\f\\v\\b\\a\\e"'],
    ['other C0 controls as \\u', '\x00\x01\x1f', '"\\u0000\\u0001\\u001F"'],
    ['DEL as \\u007F (a UTF-8 string, not a binary one)', '\x7f', '"\\u007F"'],
    ['C1 controls as \\u', '\u0085\u009f', '"\\u0085\\u009F"'],
    ['line and paragraph separators as \\u', '\u2028\u2029', '"\\u2028\\u2029"'],
    ['unassigned code points as \\u, beyond the BMP as \\u{...}', '\u0378\u{10ffff}', '"\\u0378\\u{10FFFF}"'],
    ['format characters as is (they print)', 'a\u200bb\ufeff', '"a\u200bb\ufeff"'],
    ['#{, #$ and #@ guarded', '#{x} #$y #@z', '"\\#{x} \\#$y \\#@z"'],
    ['a lone # and #x untouched', '# #x #', '"# #x #"'],
    ['a # before an escaped #{', '##{', '"#\\#{"'],
    ['printable non-ASCII as is', 'Zoë ünïcødé 日本', '"Zoë ünïcødé 日本"'],
    ['a no-break space as is (a space separator prints)', 'a\u00a0b', '"a\u00a0b"'],
    ['characters beyond the BMP as is', 'ok 😀', '"ok 😀"'],
    ['separators of the signed message as is', 'a=b?c&d', '"a=b?c&d"'],
  ];
  for (const [what, input, expected] of cases) {
    it(`writes ${what}`, () => {
      assert.equal(rubyInspectString(input), expected);
    });
  }

  it('writes nested strings through inspect and top-level strings as they are', () => {
    const params = parseJsonParams('{"top":"a\\"b","list":["a\\"b",1.0,-0,null],"hash":{"k\\n":"#{x}"}}');
    assert.equal(
      canonicalMessage(params.signing),
      'hash={"k\\n"=>"\\#{x}"}?list=["a\\"b", 1.0, 0, nil]?top=a"b',
    );
  });
});

/** What a JSON client computes by hand: HMAC-SHA256 hex of the message, with node:crypto. */
function hmacHex(secret: string, message: string): string {
  return crypto.createHmac('sha256', secret).update(message, 'utf8').digest('hex');
}

/** A 20-digit nonce written as digits only, unique in this process. */
function twentyDigitNonce(): string {
  return freshNonce().padEnd(20, '0').slice(0, 20);
}

for (const dialect of DIALECTS) {
  describe(`POST /api/v3/exams with a raw JSON body: numbers are signed as written [${dialect}]`, () => {
    let server: TestServer;
    let token: string;
    let secret: string;

    before(async () => {
      server = await startTestServer(dialect);
      const user = await server.user(await server.institute(), 'teacher');
      token = user.credentials.apiToken;
      secret = user.credentials.secretKey;
    });
    after(async () => server.close());

    /** Sends `{"name":...,<extra>,"timestamp":T,"nonce":N,"signature":S}` with S over `message(T, N)`. */
    async function postRaw(name: string, extraJson: string, signedExtra: readonly string[]) {
      const timestamp = Date.now();
      const nonce = twentyDigitNonce();
      const pairs = [
        'duration_minutes=60',
        ...signedExtra,
        `name=${name}`,
        `nonce=${nonce}`,
        `timestamp=${timestamp}`,
        'type=record_review',
      ];
      const message = pairs.sort().join('?');
      const signature = hmacHex(secret, message);
      const body =
        `{"name":"${name}","type":"record_review","duration_minutes":60,${extraJson},` +
        `"timestamp":${timestamp},"nonce":${nonce},"signature":"${signature}"}`;
      return httpRequest({
        url: `${server.baseUrl}/api/v3/exams`,
        method: 'POST',
        headers: v3Headers(token, { 'content-type': 'application/json' }),
        body,
      });
    }

    it('accepts a 20-digit integer parameter signed over its digits as written', async () => {
      const answer = await postRaw('Twenty digits', '"external_id":12345678901234567890', [
        'external_id=12345678901234567890',
      ]);
      assert.equal(answer.status, 201, answer.text);
      assert.equal((answer.json as { exam: { name: string } }).exam.name, 'Twenty digits');
    });

    it('accepts a 17-digit integer parameter signed over its digits as written', async () => {
      const answer = await postRaw('Seventeen digits', '"external_id":12345678901234567', [
        'external_id=12345678901234567',
      ]);
      assert.equal(answer.status, 201, answer.text);
    });

    it('accepts a 20-digit JSON number nonce (the nonce above is one) and a float signed as Ruby prints it', async () => {
      const answer = await postRaw('Float', '"ratio":1e3,"scale":0.00001', ['ratio=1000.0', 'scale=1.0e-05']);
      assert.equal(answer.status, 201, answer.text);
    });

    it('refuses a signature computed over the number as a double rounds it', async () => {
      const rounded = String(Number('12345678901234567890'));
      assert.equal(rounded, '12345678901234567000');
      const answer = await postRaw('Rounded', '"external_id":12345678901234567890', [
        `external_id=${rounded}`,
      ]);
      assertRefused(answer);
    });
  });
}

/**
 * Where each vector is sent when replayed against a real server. A vector whose route the server
 * does not serve yet is skipped with that reason, never sent to a 404 that would prove nothing.
 */
const VECTOR_ROUTES: Readonly<Record<string, { method: string; template: string }>> = {
  'V3 GET list, query string (values are strings)': { method: 'GET', template: '/api/v3/exams' },
  'V3 GET show: the route id is signed though not sent': { method: 'GET', template: '/api/v3/exams/:id' },
  'V3 POST JSON body with numbers and booleans': { method: 'POST', template: '/api/v3/exams' },
  'V3 POST JSON: null, empty string, unicode, separators inside values': {
    method: 'POST',
    template: '/api/v3/exams/:exam_id/student_sessions',
  },
  'V3 POST JSON: integer beyond 2^53 and a float': { method: 'POST', template: '/api/v3/exams' },
  'V3 POST JSON: array and object values': { method: 'POST', template: '/api/v3/exams' },
  'V3 form body, unencoded (spaces and quotes as sent)': { method: 'POST', template: '/api/v3/exams' },
  'V2: api_token is an ordinary signed parameter': { method: 'GET', template: '/api/exams/:id' },
};

/** The V2 vector's token; the V3 vectors send the same user's token in the header. */
const VECTOR_TOKEN = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';

/** Creates exams as the vectors' user (a superuser) until one with `id` exists. */
async function ensureExam(server: TestServer, id: number): Promise<void> {
  const user = await server.app.database.db
    .selectFrom('users')
    .select(['id', 'institute_id'])
    .where('api_token_hash', '=', hashToken(VECTOR_TOKEN))
    .executeTakeFirstOrThrow();
  const actor = { id: user.id, instituteId: user.institute_id, role: 'superuser' } as const;
  const { exams } = server.app.services;
  for (let created = 0; created <= id; created += 1) {
    const existing = await exams.get(actor, id).catch(() => undefined);
    if (existing !== undefined) return;
    await exams.create(actor, { name: `Vector exam ${created}`, type: 'demo', duration_minutes: 5 });
  }
  assert.fail(`exam ${id} could not be created`);
}

for (const dialect of DIALECTS) {
  describe(`every vector, sent byte for byte to a real server, is authenticated [${dialect}]`, () => {
    // The vectors were signed at 1795226927619; the server's clock stands there.
    const clock = new TestClock(1795226927619);
    let server: TestServer;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      const { id } = await server.user(await server.institute(), 'superuser');
      const secret = VECTORS[0]?.secret_key ?? '';
      const keys = loadServerKeys(server.app.config.serverSecret, server.app.config.dataDir);
      await server.app.database.db
        .updateTable('users')
        .set({
          api_token_hash: hashToken(VECTOR_TOKEN),
          secret_key_encrypted: encryptSecret(keys.encryption, secret),
        })
        .where('id', '=', id)
        .execute();
    });
    after(async () => server.close());

    it('knows a route for every vector', () => {
      for (const vector of VECTORS) assert.ok(VECTOR_ROUTES[vector.title], `no route for "${vector.title}"`);
    });

    for (const vector of VECTORS) {
      it(vector.title, async (t) => {
        const route = VECTOR_ROUTES[vector.title];
        assert.ok(route);
        if (!server.app.server.hasRoute({ method: route.method, url: route.template })) {
          t.skip(`${route.method} ${route.template} is not served yet`);
          return;
        }
        // The student-session vector adds a student to exam 7: that exam must exist for the vector's
        // user, so the signed request reaches the create and answers 201 (not a 404 that proves less).
        const examId = vector.route_params.exam_id;
        if (examId !== undefined) await ensureExam(server, Number(examId));
        const path = route.template.replace(
          /:([a-z_]+)/g,
          (_m, name: string) => vector.route_params[name] ?? '',
        );
        const isV2 = !route.template.startsWith('/api/v3/');
        const headers: Record<string, string> = isV2 ? {} : v3Headers(VECTOR_TOKEN);
        let url = `${server.baseUrl}${path}`;
        let body: string | undefined;
        if (vector.body_kind === 'query string') url += `?${vector.sent}&signature=${vector.signature}`;
        else {
          url += `?signature=${vector.signature}`;
          body = vector.sent;
          headers['content-type'] =
            vector.body_kind === 'application/json'
              ? 'application/json'
              : 'application/x-www-form-urlencoded';
        }
        const answer = await httpRequest({
          url,
          method: route.method,
          headers,
          ...(body === undefined ? {} : { body }),
        });
        assertAuthenticated(answer, vector.title);
        if (examId !== undefined) assert.equal(answer.status, 201, answer.text);
      });
    }
  });
}
