/**
 * A NUL character in any text a request carries is refused with 422 naming the field (V2: 400), on
 * both databases alike, before any route or database reads it (docs/security.md, "Input refused
 * before it reaches a database").
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { invalid } from '../helpers/answers.ts';
import { httpRequest } from '../helpers/http.ts';
import { SAMPLE, v3Multipart } from '../helpers/multipart.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';
import { postJson } from './staff/support.ts';

const NUL_DETAIL = 'contains a NUL character';

for (const dialect of DIALECTS) {
  describe(`NUL characters in requests [${dialect}]`, () => {
    let server: TestServer;
    let user: Awaited<ReturnType<TestServer['user']>>;

    before(async () => {
      server = await startTestServer(dialect);
      user = await server.user(await server.institute(), 'administrator');
    });
    after(() => server.close());

    const form = (path: string, body: string) =>
      httpRequest({
        url: `${server.baseUrl}${path}`,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });

    it('POST /auth/sign_in answers 422 naming the email', async () => {
      const answer = await postJson(server, '/auth/sign_in', { email: 'a\u0000@example.org', password: 'x' });
      assert.equal(answer.status, 422, answer.text);
      assert.deepEqual(answer.json, invalid('email', NUL_DETAIL));
    });

    it('POST /auth/password/forgot answers 422 naming the email', async () => {
      const answer = await postJson(server, '/auth/password/forgot', { email: '\u0000' });
      assert.equal(answer.status, 422, answer.text);
      assert.deepEqual(answer.json, invalid('email', NUL_DETAIL));
    });

    it('POST /users/sign_in.json answers 422 naming the nested parameter', async () => {
      const answer = await postJson(server, '/users/sign_in.json', {
        user: { email: 'a@example.org\u0000', password: 'x' },
      });
      assert.equal(answer.status, 422, answer.text);
      assert.deepEqual(answer.json, invalid('user', NUL_DETAIL));
    });

    it('answers 422 for a NUL in a parameter name, written \\0', async () => {
      const answer = await postJson(server, '/auth/sign_in', { 'em\u0000ail': 'x', password: 'x' });
      assert.equal(answer.status, 422, answer.text);
      assert.deepEqual(answer.json, invalid('em\\0ail', NUL_DETAIL));
    });

    it('POST /m (the PIN form) answers 422 naming the email', async () => {
      const answer = await form('/m', 'pin=123456&email=a%00b%40example.org');
      assert.equal(answer.status, 422, answer.text);
      assert.deepEqual(answer.json, invalid('email', NUL_DETAIL));
    });

    it('GET and POST /lti/login answer 422 naming the field', async () => {
      const get = await httpRequest({
        url: `${server.baseUrl}/lti/login?iss=https%3A%2F%2Fplatform.example%00&login_hint=1&target_link_uri=x`,
      });
      assert.equal(get.status, 422, get.text);
      assert.deepEqual(get.json, invalid('iss', NUL_DETAIL));
      const post = await form('/lti/login', 'iss=https%3A%2F%2Fp.example&login_hint=%00&target_link_uri=x');
      assert.equal(post.status, 422, post.text);
      assert.deepEqual(post.json, invalid('login_hint', NUL_DETAIL));
    });

    it('GET /lti/start-assessment/:token answers 422 naming the token', async () => {
      const answer = await httpRequest({ url: `${server.baseUrl}/lti/start-assessment/a%00b` });
      assert.equal(answer.status, 422, answer.text);
      assert.deepEqual(answer.json, invalid('token', NUL_DETAIL));
    });

    it('POST /lti/launch (LTI 1.1) answers 422 naming the field, a custom_ field with brackets included', async () => {
      const plain = await form(
        '/lti/launch',
        'oauth_consumer_key=key%00&lti_message_type=basic-lti-launch-request',
      );
      assert.equal(plain.status, 422, plain.text);
      assert.deepEqual(plain.json, invalid('oauth_consumer_key', NUL_DETAIL));
      const custom = await form('/lti/launch', 'oauth_consumer_key=key&custom_a%5Bb%5D=%00');
      assert.equal(custom.status, 422, custom.text);
      assert.deepEqual(custom.json, invalid('custom_a', NUL_DETAIL));
    });

    it('a signed V3 request answers 422 for a NUL in a query, a route parameter or a file name', async () => {
      const query = await user.client.v3('GET', '/exams', { name: 'a\u0000' });
      assert.equal(query.status, 422, query.text);
      assert.deepEqual(query.json, invalid('name', NUL_DETAIL));
      const route = await user.client.v3('GET', '/exams/:id', { id: '1\u0000' });
      assert.equal(route.status, 422, route.text);
      assert.deepEqual(route.json, invalid('id', NUL_DETAIL));
      const upload = await v3Multipart(user.client, 'POST', '/exams/:exam_id/attachments', { exam_id: 1 }, [
        { field: 'file', fileName: 'notes\u0000.pdf', contentType: 'application/pdf', bytes: SAMPLE.pdf },
      ]);
      assert.equal(upload.status, 422, upload.text);
      assert.deepEqual(upload.json, invalid('file', 'has a file name with a NUL character'));
    });

    it('V2 answers 400 with an empty body', async () => {
      const answer = await user.client.v2('GET', '/exams', { name: 'a\u0000' });
      assert.equal(answer.status, 400, answer.text);
      assert.equal(answer.text, '');
    });

    it('answers a very long word as any other wrong email (never a 500 from an index on PostgreSQL)', async () => {
      const word = crypto.randomBytes(6000).toString('base64url');
      const signIn = await postJson(server, '/auth/sign_in', { email: word, password: 'x' });
      assert.equal(signIn.status, 403, signIn.text);
      const compat = await postJson(server, '/users/sign_in.json', { user: { email: word, password: 'x' } });
      assert.equal(compat.status, 403, compat.text);
    });

    it('keeps other unusual characters: a refusal as for any wrong password', async () => {
      const answer = await postJson(server, '/auth/sign_in', {
        email: 'שלום\u0001@example.org',
        password: 'x',
      });
      assert.equal(answer.status, 403, answer.text);
    });
  });
}
