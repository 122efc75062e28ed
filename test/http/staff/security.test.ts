import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NOT_AUTHORIZED } from '../../helpers/answers.ts';
import { V3_ACCEPT } from '../../helpers/client.ts';
import { httpRequest } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import { type Browser, signIn, staffUser } from './support.ts';

/**
 * The shared security cases of cookie sessions, run over every route the OpenAPI document lists, so a
 * route added later is covered: no V3 change goes through on a cookie without its CSRF token, no V3
 * route answers an ended session, and no sign-in route takes a cross-site form or origin.
 */

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** The changes of "my account": a session and its CSRF token, like enrolment. */
const ACCOUNT_CHANGES = [
  '/auth/password/change',
  '/auth/api_credentials/reveal',
  '/auth/api_credentials/rotate',
];

interface Route {
  readonly method: string;
  /** With every path parameter filled with 1. */
  readonly path: string;
}

async function documentedRoutes(server: TestServer): Promise<Route[]> {
  const answer = await httpRequest({ url: `${server.baseUrl}/api/openapi.json` });
  const document = answer.json as { paths: Record<string, Record<string, unknown>> };
  const routes: Route[] = [];
  for (const [template, operations] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      if (method in operations)
        routes.push({ method: method.toUpperCase(), path: template.replace(/\{[^}]+\}/g, '1') });
    }
  }
  return routes;
}

for (const dialect of DIALECTS) {
  describe(`cookie sessions on every route [${dialect}]`, () => {
    let server: TestServer;
    let routes: Route[];
    let live: Browser;
    let ended: Browser;

    before(async () => {
      server = await startTestServer(dialect);
      const instituteId = await server.institute();
      // A superuser reaches every route, so a refusal below is the cookie's, not the role's.
      const user = await staffUser(server, instituteId, 'superuser');
      live = await signIn(server, user.email);
      ended = await signIn(server, user.email);
      const out = await httpRequest({
        url: `${server.baseUrl}/auth/sign_out`,
        method: 'POST',
        headers: { cookie: ended.cookie, 'x-csrf-token': ended.csrf },
      });
      assert.equal(out.status, 204);
      routes = await documentedRoutes(server);
    });
    after(async () => {
      await server.close();
    });

    const v3 = () => routes.filter((route) => route.path.startsWith('/api/v3/'));

    it('finds the V3 routes and the sign-in routes in the document', () => {
      const keys = routes.map((route) => `${route.method} ${route.path}`);
      for (const known of [
        'POST /api/v3/exams',
        'GET /api/v3/exams',
        'POST /auth/sign_in',
        'POST /auth/sign_in/second_factor',
        'POST /auth/second_factor/start',
        'POST /users/sign_in.json',
      ]) {
        assert.ok(keys.includes(known), `${known} missing`);
      }
    });

    it('refuses every V3 change made with a live cookie but without X-CSRF-Token (403)', async () => {
      const writes = v3().filter((route) => route.method !== 'GET');
      assert.ok(writes.length > 20, `only ${writes.length} V3 writes`);
      for (const route of writes) {
        for (const csrf of [undefined, 'not-the-token']) {
          const answer = await httpRequest({
            url: `${server.baseUrl}${route.path}`,
            method: route.method,
            headers: {
              cookie: live.cookie,
              accept: V3_ACCEPT,
              'content-type': 'application/json',
              ...(csrf === undefined ? {} : { 'x-csrf-token': csrf }),
            },
            body: '{}',
          });
          assert.equal(answer.status, 403, `${route.method} ${route.path} (csrf ${String(csrf)})`);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        }
      }
    });

    it('refuses every V3 route to a signed-out cookie, even with its old CSRF token (403)', async () => {
      for (const route of v3()) {
        const answer = await httpRequest({
          url: `${server.baseUrl}${route.path}`,
          method: route.method,
          headers: { cookie: ended.cookie, accept: V3_ACCEPT, 'x-csrf-token': ended.csrf },
        });
        assert.equal(answer.status, 403, `${route.method} ${route.path}`);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      }
    });

    it('refuses every second-factor enrolment route to a live cookie without X-CSRF-Token, and to an ended session (403)', async () => {
      const enrolment = routes.filter((route) => route.path.startsWith('/auth/second_factor/'));
      assert.equal(enrolment.length, 4);
      for (const route of enrolment) {
        const cases: Record<string, string>[] = [
          { cookie: live.cookie },
          { cookie: live.cookie, 'x-csrf-token': 'not-the-token' },
          { cookie: ended.cookie, 'x-csrf-token': ended.csrf },
          {},
        ];
        for (const headers of cases) {
          const answer = await httpRequest({
            url: `${server.baseUrl}${route.path}`,
            method: route.method,
            headers: { 'content-type': 'application/json', ...headers },
            body: '{"code":"000000","password":"whatever it is"}',
          });
          assert.equal(answer.status, 403, `${route.method} ${route.path} ${JSON.stringify(headers)}`);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        }
      }
    });

    it('refuses a form post (415) and a foreign Origin (403) on every sign-in route that reads a body', async () => {
      const bodies = routes.filter(
        (route) =>
          route.method === 'POST' &&
          (route.path.startsWith('/auth/') || route.path === '/users/sign_in.json') &&
          !route.path.startsWith('/auth/sign_out') &&
          // Enrolment needs a session and its CSRF token (the case below), not the sign-in rules.
          !route.path.startsWith('/auth/second_factor/') &&
          // So does "my account" (the case after it).
          !ACCOUNT_CHANGES.includes(route.path),
      );
      assert.equal(bodies.length, 6);
      for (const route of bodies) {
        const form = await httpRequest({
          url: `${server.baseUrl}${route.path}`,
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'email=a%40example.org&password=whatever+it+is&token=x',
        });
        assert.equal(form.status, 415, route.path);
        const foreign = await httpRequest({
          url: `${server.baseUrl}${route.path}`,
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
          body: '{"email":"a@example.org","password":"whatever it is","token":"x"}',
        });
        assert.equal(foreign.status, 403, route.path);
        assert.deepEqual(foreign.json, NOT_AUTHORIZED);
      }
    });

    it('refuses every "my account" change to a live cookie without X-CSRF-Token, and to an ended session (403)', async () => {
      const account = routes.filter(
        (route) => route.method === 'POST' && ACCOUNT_CHANGES.includes(route.path),
      );
      assert.equal(account.length, ACCOUNT_CHANGES.length);
      for (const route of account) {
        const cases: Record<string, string>[] = [
          { cookie: live.cookie },
          { cookie: live.cookie, 'x-csrf-token': 'not-the-token' },
          { cookie: ended.cookie, 'x-csrf-token': ended.csrf },
          {},
        ];
        for (const headers of cases) {
          const answer = await httpRequest({
            url: `${server.baseUrl}${route.path}`,
            method: route.method,
            headers: { 'content-type': 'application/json', ...headers },
            body: '{"password":"whatever it is","current_password":"x","new_password":"long enough now"}',
          });
          assert.equal(answer.status, 403, `${route.method} ${route.path} ${JSON.stringify(headers)}`);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        }
      }
      const read = await httpRequest({
        url: `${server.baseUrl}/auth/api_credentials`,
        headers: { cookie: ended.cookie },
      });
      assert.equal(read.status, 403);
    });
  });
}
