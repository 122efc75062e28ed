import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../../src/domain/access.ts';
import type { Credentials } from '../../helpers/client.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import {
  assertNotAcceptable,
  assertRefused,
  createExam,
  formEncode,
  freshNonce,
  signatureOf,
  signedParams,
  v3Headers,
} from './support.ts';

interface ExamBody {
  exam: { id: number; name: string };
}
interface ExamsBody {
  exams: { id: number; name: string }[];
}

/** Exam names in a V3 list answer. */
function names(answer: HttpAnswer): string[] {
  return (answer.json as ExamsBody).exams.map((exam) => exam.name);
}

for (const dialect of DIALECTS) {
  describe(`compat: what existing clients send is accepted (contract 2-3) [${dialect}]`, () => {
    let server: TestServer;
    let credentials: Credentials;
    let actor: Actor;
    let examId: number;

    before(async () => {
      server = await startTestServer(dialect);
      const instituteId = await server.institute();
      const user = await server.user(instituteId, 'teacher');
      credentials = user.credentials;
      actor = { id: user.id, instituteId, role: 'teacher' };
      examId = await createExam(server, actor, 'Compat exam');
    });
    after(async () => server.close());

    /** A signed V3 GET of the exam list, parameters in the query, with these headers. */
    function listWith(headers: Record<string, string>, params: Record<string, string> = {}) {
      const query = formEncode(signedParams(credentials, params));
      return httpRequest({ url: `${server.baseUrl}/api/v3/exams?${query}`, headers });
    }

    describe('V3 Accept header', () => {
      it('accepts Accept: application/vnd.service.v3', async () => {
        const answer = await listWith(
          v3Headers(credentials.apiToken, { accept: 'application/vnd.service.v3' }),
        );
        assert.equal(answer.status, 200, answer.text);
        assert.ok(names(answer).includes('Compat exam'));
      });

      it('accepts Accept: application/vnd.procwise.v3', async () => {
        const answer = await listWith(
          v3Headers(credentials.apiToken, { accept: 'application/vnd.procwise.v3' }),
        );
        assert.equal(answer.status, 200, answer.text);
      });

      it('accepts application/vnd.procwise.v3 inside a longer Accept list', async () => {
        const accept = 'text/html, application/json;q=0.9, application/vnd.procwise.v3; q=0.8, */*;q=0.1';
        const answer = await listWith(v3Headers(credentials.apiToken, { accept }));
        assert.equal(answer.status, 200, answer.text);
      });

      it('accepts application/vnd.service.v3 inside a longer Accept list', async () => {
        const accept = 'application/json, application/vnd.service.v3+json';
        const answer = await listWith(v3Headers(credentials.apiToken, { accept }));
        assert.equal(answer.status, 200, answer.text);
      });

      it('answers 406 with the exact message to Accept: application/json', async () => {
        assertNotAcceptable(await listWith(v3Headers(credentials.apiToken, { accept: 'application/json' })));
      });

      it('answers 406 with the exact message when Accept is absent', async () => {
        assertNotAcceptable(await listWith({ authorization: `Token token=${credentials.apiToken}` }));
      });

      it('answers 406 to an older version media type (application/vnd.procwise.v2)', async () => {
        assertNotAcceptable(
          await listWith(v3Headers(credentials.apiToken, { accept: 'application/vnd.procwise.v2' })),
        );
      });
    });

    describe('V3 token header', () => {
      it('accepts Authorization: Token token=<api_token>', async () => {
        const answer = await listWith(v3Headers(credentials.apiToken));
        assert.equal(answer.status, 200, answer.text);
      });

      it('accepts the token in double quotes: Token token="<api_token>"', async () => {
        const answer = await listWith(
          v3Headers('', { authorization: `Token token="${credentials.apiToken}"` }),
        );
        assert.equal(answer.status, 200, answer.text);
      });
    });

    describe('bodies', () => {
      it('reads a signed JSON body on GET, its parameters included', async () => {
        const filter = JSON.stringify({ name: { eq: 'Compat exam' } });
        const body = JSON.stringify(signedParams(credentials, { filter }));
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams`,
          method: 'GET',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/json' }),
          body,
        });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(names(answer), ['Compat exam']);
      });

      it('reads a signed JSON body on DELETE', async () => {
        const id = await createExam(server, actor, 'Deleted through a JSON body');
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams/${id}`,
          method: 'DELETE',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/json' }),
          body: JSON.stringify(signedParams(credentials, {}, { route: { id: String(id) } })),
        });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, {});
        const shown = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams/${id}?${formEncode(signedParams(credentials, {}, { route: { id: String(id) } }))}`,
          headers: v3Headers(credentials.apiToken),
        });
        assert.equal(shown.status, 404, shown.text);
      });

      it('accepts an empty body sent with Content-Type: application/json on PATCH (parameters in the query)', async () => {
        const id = await createExam(server, actor, 'Before');
        const query = formEncode(signedParams(credentials, { name: 'After' }, { route: { id: String(id) } }));
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams/${id}?${query}`,
          method: 'PATCH',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/json' }),
          body: '',
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal((answer.json as ExamBody).exam.name, 'After');
      });

      it('accepts an empty body sent with Content-Type: application/json on POST (parameters in the query)', async () => {
        const params = { name: 'Created from the query', type: 'record_review', duration_minutes: '60' };
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams?${formEncode(signedParams(credentials, params))}`,
          method: 'POST',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/json' }),
          body: '',
        });
        assert.equal(answer.status, 201, answer.text);
        assert.equal((answer.json as ExamBody).exam.name, 'Created from the query');
      });

      it('reads a JSON body sent as application/json; charset=utf-8', async () => {
        const params = { name: 'Zoë’s charset exam', type: 'record_review', duration_minutes: '60' };
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams`,
          method: 'POST',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/json; charset=utf-8' }),
          body: JSON.stringify(signedParams(credentials, params)),
        });
        assert.equal(answer.status, 201, answer.text);
        assert.equal((answer.json as ExamBody).exam.name, 'Zoë’s charset exam');
      });

      it('accepts an empty body sent with Content-Type: application/json on GET and DELETE', async () => {
        const get = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams?${formEncode(signedParams(credentials, {}))}`,
          method: 'GET',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/json' }),
          body: '',
        });
        assert.equal(get.status, 200, get.text);
        const id = await createExam(server, actor, 'Deleted with an empty JSON body');
        const query = formEncode(signedParams(credentials, {}, { route: { id: String(id) } }));
        const remove = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams/${id}?${query}`,
          method: 'DELETE',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/json' }),
          body: '',
        });
        assert.equal(remove.status, 200, remove.text);
      });

      it('reads a form body whose values are not percent-encoded (raw spaces, quotes, brackets)', async () => {
        const name = 'Test 502 "A" [x]';
        const timestamp = String(Date.now());
        const nonce = freshNonce();
        const signed = { name, type: 'record_review', duration_minutes: '60', timestamp, nonce };
        const signature = signatureOf(credentials.secretKey, signed);
        const body = `name=${name}&type=record_review&duration_minutes=60&timestamp=${timestamp}&nonce=${nonce}&signature=${signature}`;
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams`,
          method: 'POST',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/x-www-form-urlencoded' }),
          body,
        });
        assert.equal(answer.status, 201, answer.text);
        assert.equal((answer.json as ExamBody).exam.name, name);
      });

      it('reads a percent-encoded form body as decoded values', async () => {
        const name = 'Encoded 50% "B" [y]';
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams`,
          method: 'POST',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/x-www-form-urlencoded' }),
          body: formEncode(
            signedParams(credentials, { name, type: 'record_review', duration_minutes: '60' }),
          ),
        });
        assert.equal(answer.status, 201, answer.text);
        assert.equal((answer.json as ExamBody).exam.name, name);
      });
    });

    describe('malformed JSON', () => {
      it('answers 400 with a JSON error body on V3 (POST)', async () => {
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams`,
          method: 'POST',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/json' }),
          body: '{"name": "x",',
        });
        assert.equal(answer.status, 400, answer.text);
        assert.match(String(answer.headers['content-type']), /^application\/json/);
        const body = answer.json as { error?: unknown };
        assert.equal(typeof body.error, 'string');
        assert.notEqual(body.error, '');
      });

      it('answers 400 with a JSON error body on V3 (a GET body)', async () => {
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams`,
          method: 'GET',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/json' }),
          body: '{not json}',
        });
        assert.equal(answer.status, 400, answer.text);
        assert.equal(typeof (answer.json as { error?: unknown }).error, 'string');
      });

      it('answers 400 with an empty body on V2 (/api/exams)', async () => {
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/exams`,
          method: 'GET',
          headers: { 'content-type': 'application/json' },
          body: '{"api_token": ',
        });
        assert.equal(answer.status, 400, answer.text);
        assert.equal(answer.text, '');
      });
    });

    describe('paths', () => {
      it('serves /api/v3/exams/ (trailing slash) like /api/v3/exams', async () => {
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams/?${formEncode(signedParams(credentials, {}))}`,
          headers: v3Headers(credentials.apiToken),
        });
        assert.equal(answer.status, 200, answer.text);
        assert.ok(names(answer).includes('Compat exam'));
      });

      it('serves /api/v3/exams? (empty query) with the parameters in a JSON GET body', async () => {
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams?`,
          method: 'GET',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/json' }),
          body: JSON.stringify(signedParams(credentials, {})),
        });
        assert.equal(answer.status, 200, answer.text);
      });

      it('serves /api/v3/exams/:id/ (trailing slash) with the route id signed', async () => {
        const query = formEncode(signedParams(credentials, {}, { route: { id: String(examId) } }));
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams/${examId}/?${query}`,
          headers: v3Headers(credentials.apiToken),
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal((answer.json as ExamBody).exam.id, examId);
      });

      it('serves V2 /api/exams/ and /api/exams? alike', async () => {
        const slash = await httpRequest({
          url: `${server.baseUrl}/api/exams/?${formEncode(signedParams(credentials, { api_token: credentials.apiToken }))}`,
        });
        assert.equal(slash.status, 200, slash.text);
        const bare = await httpRequest({
          url: `${server.baseUrl}/api/exams?`,
          method: 'GET',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(signedParams(credentials, { api_token: credentials.apiToken })),
        });
        assert.equal(bare.status, 200, bare.text);
      });
    });

    describe('signed parameters', () => {
      it('accepts a 20-digit nonce, kept as digits: two nonces one apart under one timestamp are both fresh', async () => {
        const timestamp = Date.now();
        const base = BigInt(freshNonce().padEnd(20, '0').slice(0, 20));
        for (const nonce of [base, base + 1n]) {
          assert.equal(String(nonce).length, 20);
          const exact = await httpRequest({
            url: `${server.baseUrl}/api/v3/exams?${formEncode(signedParams(credentials, {}, { timestamp, nonce: String(nonce) }))}`,
            headers: v3Headers(credentials.apiToken),
          });
          assert.equal(exact.status, 200, `nonce ${nonce}: ${exact.text}`);
        }
      });

      it('accepts a 20-digit nonce written as a JSON number', async () => {
        const timestamp = Date.now();
        const nonce = freshNonce().padEnd(20, '7').slice(0, 20);
        const signature = signatureOf(credentials.secretKey, { timestamp: String(timestamp), nonce });
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams`,
          method: 'GET',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/json' }),
          body: `{"timestamp":${timestamp},"nonce":${nonce},"signature":"${signature}"}`,
        });
        assert.equal(answer.status, 200, answer.text);
      });

      it('accepts the signature in upper-case hex', async () => {
        const sent = signedParams(credentials, {});
        sent.signature = (sent.signature ?? '').toUpperCase();
        assert.match(sent.signature, /^[0-9A-F]{64}$/);
        assert.match(sent.signature, /[A-F]/);
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams?${formEncode(sent)}`,
          headers: v3Headers(credentials.apiToken),
        });
        assert.equal(answer.status, 200, answer.text);
      });

      it('accepts the route parameter id signed though not sent', async () => {
        const sent = signedParams(credentials, {}, { route: { id: String(examId) } });
        assert.equal('id' in sent, false);
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams/${examId}?${formEncode(sent)}`,
          headers: v3Headers(credentials.apiToken),
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal((answer.json as ExamBody).exam.id, examId);
      });

      it('refuses a signature that leaves the route parameter id out', async () => {
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams/${examId}?${formEncode(signedParams(credentials, {}))}`,
          headers: v3Headers(credentials.apiToken),
        });
        assertRefused(answer);
      });

      it('lets the route parameter win over a same-named query parameter', async () => {
        const sent = signedParams(credentials, {}, { route: { id: String(examId) } });
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/v3/exams/${examId}?id=999999&${formEncode(sent)}`,
          headers: v3Headers(credentials.apiToken),
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal((answer.json as ExamBody).exam.id, examId);
      });
    });

    describe('V2', () => {
      it('has no Accept requirement', async () => {
        const answer = await httpRequest({
          url: `${server.baseUrl}/api/exams?${formEncode(signedParams(credentials, { api_token: credentials.apiToken }))}`,
          headers: { accept: 'text/html' },
        });
        assert.equal(answer.status, 200, answer.text);
      });
    });
  });
}
