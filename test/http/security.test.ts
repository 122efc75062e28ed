import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../src/domain/access.ts';
import type { Credentials } from '../helpers/client.ts';
import { type HttpAnswer, httpRequest } from '../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';
import {
  assertAuthenticated,
  assertNotAcceptable,
  assertRefused,
  createExam,
  formEncode,
  freshNonce,
  signatureOf,
  v3Headers,
} from './auth/support.ts';

/**
 * The shared security suite: every signed route the server documents in its OpenAPI document gets
 * the same checks, so a route added later is covered without touching this file.
 */

interface SignedRoute {
  readonly version: 'v3' | 'v2';
  readonly method: string;
  /** Fastify form, `/api/v3/exams/:id`. */
  readonly template: string;
  readonly pathParams: readonly string[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Paths under /api that are not the signed API: the candidate room and its phone (token in the path), docs. */
function isSignedApiPath(path: string): 'v3' | 'v2' | undefined {
  if (path.startsWith('/api/v3/')) return 'v3';
  if (!path.startsWith('/api/')) return undefined;
  if (
    path.startsWith('/api/room/') ||
    path.startsWith('/api/mobile/') ||
    path.startsWith('/api/docs') ||
    path === '/api/openapi.json'
  )
    return undefined;
  return 'v2';
}

/** Reads the routes from a live server's OpenAPI document and checks each is registered. */
async function discoverSignedRoutes(): Promise<SignedRoute[]> {
  const server = await startTestServer('sqlite');
  try {
    const answer = await fetch(`${server.baseUrl}/api/openapi.json`);
    assert.equal(answer.status, 200);
    const document = (await answer.json()) as { paths?: Record<string, Record<string, unknown>> };
    const routes: SignedRoute[] = [];
    for (const [path, operations] of Object.entries(document.paths ?? {})) {
      const version = isSignedApiPath(path);
      if (version === undefined) continue;
      const template = path.replace(/\{([A-Za-z_]+)\}/g, ':$1');
      const pathParams = [...template.matchAll(/:([A-Za-z_]+)/g)].map((match) => match[1] ?? '');
      for (const method of METHODS) {
        if (!(method in operations)) continue;
        const upper = method.toUpperCase();
        assert.ok(
          server.app.server.hasRoute({ method: upper, url: template }),
          `${upper} ${template} is documented but not registered`,
        );
        routes.push({ version, method: upper, template, pathParams });
      }
    }
    return routes;
  } finally {
    await server.close();
  }
}

const ROUTES = await discoverSignedRoutes();

describe('the security suite finds the signed routes', () => {
  it('covers V3 and V2 routes, the known ones among them', () => {
    const keys = ROUTES.map((route) => `${route.method} ${route.template}`);
    for (const known of [
      'GET /api/v3/exams',
      'POST /api/v3/exams',
      'GET /api/v3/exams/:id',
      'DELETE /api/v3/exams/:id',
      'GET /api/v3/student_sessions/:id/files',
      'GET /api/exams',
    ]) {
      assert.ok(keys.includes(known), `${known} missing from ${keys.join(', ')}`);
    }
    assert.ok(ROUTES.some((route) => route.version === 'v2'));
  });
});

/** One call to a route: the parameters signed, what is sent, and the headers. */
interface Probe {
  /** Values for every path parameter (they are signed though not sent). */
  readonly path: Readonly<Record<string, string>>;
  /** Path parameter values put in the URL when they differ from the signed ones. */
  readonly sentPath?: Readonly<Record<string, string>>;
  readonly params?: Readonly<Record<string, string>>;
  readonly sentParams?: Readonly<Record<string, string>>;
  readonly timestamp?: number;
  readonly nonce?: string;
  readonly signature?: string;
  readonly unsigned?: boolean;
  readonly withoutToken?: boolean;
  readonly accept?: string;
}

for (const dialect of DIALECTS) {
  describe(`security of every signed route [${dialect}]`, () => {
    let server: TestServer;
    let credentials: Credentials;
    let actor: Actor;

    before(async () => {
      server = await startTestServer(dialect);
      const instituteId = await server.institute();
      // A superuser may do everything, so an authenticated call is never refused for its role.
      const user = await server.user(instituteId, 'superuser');
      credentials = user.credentials;
      actor = { id: user.id, instituteId, role: 'superuser' };
    });
    after(async () => server.close());

    /** Sends a call shaped by `probe`: query string for GET and DELETE, a JSON body otherwise. */
    function send(route: SignedRoute, probe: Probe): Promise<HttpAnswer> {
      const signed: Record<string, string> = { ...probe.params };
      if (route.version === 'v2' && !probe.withoutToken) signed.api_token = credentials.apiToken;
      const sent: Record<string, string> = { ...signed, ...probe.sentParams };
      if (!probe.unsigned) {
        signed.timestamp = String(probe.timestamp ?? Date.now());
        signed.nonce = probe.nonce ?? freshNonce();
        sent.timestamp = signed.timestamp;
        sent.nonce = signed.nonce;
        sent.signature = probe.signature ?? signatureOf(credentials.secretKey, { ...signed, ...probe.path });
      }
      const urlPath = route.template.replace(/:([A-Za-z_]+)/g, (_match, name: string) =>
        encodeURIComponent(probe.sentPath?.[name] ?? probe.path[name] ?? ''),
      );
      const headers: Record<string, string> = {};
      if (route.version === 'v3') {
        Object.assign(headers, v3Headers(credentials.apiToken));
        if (probe.withoutToken) delete headers.authorization;
        if (probe.accept !== undefined) headers.accept = probe.accept;
      }
      const url = `${server.baseUrl}${urlPath}`;
      if (route.method === 'GET' || route.method === 'DELETE') {
        return httpRequest({ url: `${url}?${formEncode(sent)}`, method: route.method, headers });
      }
      headers['content-type'] = 'application/json';
      return httpRequest({ url, method: route.method, headers, body: JSON.stringify(sent) });
    }

    for (const route of ROUTES) {
      describe(`${route.method} ${route.template}`, () => {
        let path: Record<string, string> = {};

        before(async () => {
          // A real exam of the caller's institute fills every path parameter, so the signed call
          // reaches the handler; each route gets its own, as a DELETE consumes it.
          const examId = String(
            await createExam(server, actor, `Security ${route.method} ${route.template}`),
          );
          path = Object.fromEntries(route.pathParams.map((name) => [name, examId]));
        });

        it('authenticates a signed request once and refuses its identical replay', async () => {
          const probe: Probe = {
            path,
            params: { probe: 'signed' },
            timestamp: Date.now(),
            nonce: freshNonce(),
          };
          assertAuthenticated(await send(route, probe), 'the first request');
          assertRefused(await send(route, probe), 'the replay');
        });

        it('refuses an unsigned request', async () => {
          assertRefused(await send(route, { path, params: { probe: 'signed' }, unsigned: true }));
        });

        it(
          route.version === 'v3'
            ? 'refuses a signed request without the token header'
            : 'refuses a signed request without api_token',
          async () => {
            assertRefused(await send(route, { path, withoutToken: true }));
          },
        );

        it('refuses a bad signature', async () => {
          const other = crypto.randomBytes(24).toString('hex');
          const timestamp = Date.now();
          const nonce = freshNonce();
          const signed: Record<string, string> = { ...path, timestamp: String(timestamp), nonce };
          if (route.version === 'v2') signed.api_token = credentials.apiToken;
          assertRefused(await send(route, { path, timestamp, nonce, signature: signatureOf(other, signed) }));
        });

        it('refuses a parameter changed after signing', async () => {
          assertRefused(
            await send(route, { path, params: { probe: 'signed' }, sentParams: { probe: 'tampered' } }),
          );
        });

        if (route.pathParams.length > 0) {
          it('refuses a path parameter changed after signing', async () => {
            const sentPath = Object.fromEntries(
              route.pathParams.map((name) => [name, String(Number(path[name]) + 1000)]),
            );
            assertRefused(await send(route, { path, sentPath }));
          });
        }

        it('refuses a stale timestamp (older than the window)', async () => {
          assertRefused(await send(route, { path, timestamp: Date.now() - (86400 + 60) * 1000 }));
        });

        it('refuses a timestamp too far ahead (beyond the window)', async () => {
          assertRefused(await send(route, { path, timestamp: Date.now() + (86400 + 60) * 1000 }));
        });

        if (route.version === 'v3') {
          it('answers 406 to a correctly signed request with a wrong Accept', async () => {
            assertNotAcceptable(await send(route, { path, accept: 'application/json' }));
          });
        }
      });
    }
  });
}
