import assert from 'node:assert/strict';
import { V3_ACCEPT } from '../../helpers/client.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import type { TestServer } from '../../helpers/server.ts';

/** A password long enough for the rules (12 characters or more). */
export const GOOD_PASSWORD = 'correct horse battery staple';

/** A browser's session: the cookie to send back and the CSRF token the session answered. */
export interface Browser {
  readonly cookie: string;
  readonly csrf: string;
}

/** POSTs JSON to the server as a same-origin page does. Returns the answer. */
export function postJson(
  server: Pick<TestServer, 'baseUrl'>,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return httpRequest({
    url: `${server.baseUrl}${path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** The `name=value` of the session cookie an answer sets, or undefined. */
export function setCookieOf(answer: HttpAnswer): string | undefined {
  const header = answer.headers['set-cookie'];
  const first = Array.isArray(header) ? header[0] : header;
  return first?.split(';')[0];
}

/** Signs in and returns the browser's cookie and CSRF token; fails the test unless it worked. */
export async function signIn(
  server: Pick<TestServer, 'baseUrl'>,
  email: string,
  password = GOOD_PASSWORD,
  headers: Record<string, string> = {},
): Promise<Browser> {
  const answer = await postJson(server, '/auth/sign_in', { email, password }, headers);
  assert.equal(answer.status, 200, answer.text);
  const cookie = setCookieOf(answer);
  assert.ok(cookie !== undefined && cookie.startsWith('invigil_session='), 'no session cookie');
  return { cookie, csrf: (answer.json as { csrf_token: string }).csrf_token };
}

/** A V3 call as the console makes it: the cookie, V3 Accept, JSON, and the CSRF header if given. */
export function consoleV3(
  server: Pick<TestServer, 'baseUrl'>,
  browser: Browser,
  method: string,
  path: string,
  options: { body?: unknown; csrf?: string | undefined } = {},
): Promise<HttpAnswer> {
  const headers: Record<string, string> = { cookie: browser.cookie, accept: V3_ACCEPT };
  if (options.csrf !== undefined) headers['x-csrf-token'] = options.csrf;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return httpRequest({
    url: `${server.baseUrl}/api/v3${path}`,
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
}

/** A staff user with a password set (through the service, as `invigil user set-password` does). */
export async function staffUser(
  server: TestServer,
  instituteId: number,
  role: Parameters<TestServer['user']>[1] = 'teacher',
): Promise<Awaited<ReturnType<TestServer['user']>> & { email: string }> {
  const user = await server.user(instituteId, role);
  await server.app.services.staffAuth.setPassword(user.id, GOOD_PASSWORD);
  const found = await server.app.database.db
    .selectFrom('users')
    .select('email')
    .where('id', '=', user.id)
    .executeTakeFirstOrThrow();
  return { ...user, email: found.email };
}

/** The token of the newest one-time link emailed to `to`, read from the outbox's text body. */
export async function linkTokenFor(server: TestServer, to: string): Promise<{ url: string; token: string }> {
  const row = await server.app.database.db
    .selectFrom('outbox')
    .select(['text_body'])
    .where('to_address', '=', to)
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  const match = /(https?:\/\/\S+\?token=([A-Za-z0-9_-]+))/.exec(row.text_body);
  assert.ok(match?.[1] !== undefined && match[2] !== undefined, `no link in ${row.text_body}`);
  return { url: match[1], token: match[2] };
}
