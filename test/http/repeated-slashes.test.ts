import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ApiClient } from '../helpers/client.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';
import { formEncode, REFUSED_TEXT, v3Headers } from './auth/support.ts';

/**
 * Rails squeezes repeated slashes before routing, and a public Python client relies on it: it joins
 * its prefix and a path that starts with a slash. The signature does not cover the path, so a call
 * signed for `/api/v3/exams/2` is the same call at `/api/v3//exams/2`.
 */
for (const dialect of DIALECTS) {
  describe(`repeated slashes in a path route like single ones [${dialect}]`, () => {
    let server: TestServer;
    let client: ApiClient;
    let examId: number;
    let roomToken: string;

    before(async () => {
      server = await startTestServer(dialect);
      const instituteId = await server.institute();
      client = (await server.user(instituteId, 'teacher')).client;
      const created = await client.v3('POST', '/exams', {
        name: 'Slashes',
        type: 'record_review',
        duration_minutes: 30,
      });
      assert.equal(created.status, 201, created.text);
      examId = Number(object(object(created.json, 'body').exam, 'exam').id);
      const student = await client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Student',
        email: 'student@example.org',
      });
      assert.equal(student.status, 201, student.text);
      roomToken = String(object(object(student.json, 'body').student, 'student').token);
    });
    after(async () => server.close());

    /** A signed V3 query string for `route` (route parameters signed, not sent). */
    const v3Query = (route: Record<string, string> = {}) => {
      const signed = client.sign({ ...route }, route, 'v3');
      return formEncode(signed);
    };

    for (const path of ['/api/v3//exams/:id', '//api/v3/exams/:id', '/api//v3///exams//:id']) {
      it(`V3: GET ${path} shows the exam`, async () => {
        const id = String(examId);
        const answer = await httpRequest({
          url: `${server.baseUrl}${path.replace(':id', id)}?${v3Query({ id })}`,
          headers: v3Headers(client.credentials.apiToken),
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(object(object(answer.json, 'body').exam, 'exam').id, examId);
      });
    }

    it('V3: GET //api/v3/exams lists, and a refusal there is a V3 answer', async () => {
      const listed = await httpRequest({
        url: `${server.baseUrl}//api/v3/exams?${v3Query()}`,
        headers: v3Headers(client.credentials.apiToken),
      });
      assert.equal(listed.status, 200, listed.text);
      const refused = await httpRequest({
        url: `${server.baseUrl}//api/v3/exams?${v3Query()}`,
        headers: v3Headers('0'.repeat(32)),
      });
      assert.equal(refused.status, 403);
      assert.equal(refused.text, REFUSED_TEXT);
    });

    it('V3: POST /api/v3//exams with a JSON body creates an exam', async () => {
      const signed = client.sign({ name: 'Via slashes', type: 'classroom', duration_minutes: 5 }, {}, 'v3');
      const answer = await httpRequest({
        url: `${server.baseUrl}/api/v3//exams`,
        method: 'POST',
        headers: v3Headers(client.credentials.apiToken, { 'content-type': 'application/json' }),
        body: JSON.stringify(signed),
      });
      assert.equal(answer.status, 201, answer.text);
    });

    it('keeps the query string byte for byte: a value holding // is still signed as sent', async () => {
      const filter = JSON.stringify({ name: { like: 'http://a//b' } });
      const signed = client.sign({ filter }, {}, 'v3');
      const answer = await httpRequest({
        url: `${server.baseUrl}/api//v3/exams?${formEncode(signed).replaceAll('%2F', '/')}`,
        headers: v3Headers(client.credentials.apiToken),
      });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(object(answer.json, 'body').exams, []);
    });

    for (const path of ['/api//exams/:id', '//api/exams/:id']) {
      it(`V2: GET ${path} shows the exam`, async () => {
        const id = String(examId);
        const signed = client.sign({ id }, { id }, 'v2');
        const answer = await httpRequest({
          url: `${server.baseUrl}${path.replace(':id', id)}?${formEncode(signed)}`,
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(object(object(answer.json, 'body').exam, 'exam').exam_id, examId);
      });
    }

    it('V2: GET /api//exams lists the exams, and an unknown path there is still an empty V2 404', async () => {
      const listed = await httpRequest({
        url: `${server.baseUrl}/api//exams?${formEncode(client.sign({}, {}, 'v2'))}`,
      });
      assert.equal(listed.status, 200, listed.text);
      const unknown = await httpRequest({ url: `${server.baseUrl}//api//no_such_thing` });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.text, '');
    });

    it('room API: GET /api/room//:token and //api/room/:token answer the room', async () => {
      for (const path of [`/api/room//${roomToken}`, `//api/room/${roomToken}`]) {
        const answer = await httpRequest({ url: `${server.baseUrl}${path}` });
        assert.equal(answer.status, 200, `${path}: ${answer.text}`);
        assert.ok('session' in object(answer.json, 'body'), path);
      }
    });

    it('room page: GET //room/:token serves the page', async () => {
      const answer = await httpRequest({ url: `${server.baseUrl}//room//${roomToken}` });
      assert.equal(answer.status, 200, answer.text);
      assert.match(String(answer.headers['content-type']), /^text\/html/);
    });

    it('file addresses: GET //files/:id reaches the download route (an altered address is refused there)', async () => {
      const answer = await httpRequest({ url: `${server.baseUrl}//files//1?expires=1&signature=00` });
      assert.equal(answer.status, 403, answer.text);
      assert.equal(answer.text, REFUSED_TEXT);
    });
  });
}
