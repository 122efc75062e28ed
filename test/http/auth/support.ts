import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config/config.ts';
import type { Actor } from '../../../src/domain/access.ts';
import { type Credentials, registerServerClock } from '../../helpers/client.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { createTestDatabase, type DialectName, type TestServer } from '../../helpers/server.ts';
import { canonical, hmac, nextNonce, type Scalar } from '../../helpers/signing.ts';

/** The one body every authentication failure answers, in both versions, byte for byte. */
export const REFUSED_TEXT = '{"error":"You are not authorized to access this page."}';

/** The V3 answer to an Accept header that names no V3 media type, byte for byte. */
export const NOT_ACCEPTABLE_TEXT = '{"error":"Not Acceptable: send Accept: application/vnd.procwise.v3"}';

/** Asserts the exact 403 answer of a refused request. */
export function assertRefused(answer: HttpAnswer, what = 'the request'): void {
  assert.equal(answer.status, 403, `${what}: expected 403, got ${answer.status} ${answer.text}`);
  assert.equal(answer.text, REFUSED_TEXT, `${what}: body`);
  assert.match(String(answer.headers['content-type']), /^application\/json/, `${what}: content type`);
}

/** Asserts the exact 406 answer of a V3 request without a V3 Accept. */
export function assertNotAcceptable(answer: HttpAnswer, what = 'the request'): void {
  assert.equal(answer.status, 406, `${what}: expected 406, got ${answer.status} ${answer.text}`);
  assert.equal(answer.text, NOT_ACCEPTABLE_TEXT, `${what}: body`);
}

/** Asserts that a request passed authentication: neither refused (403) nor turned away (406). */
export function assertAuthenticated(answer: HttpAnswer, what = 'the request'): void {
  assert.notEqual(answer.status, 403, `${what}: refused: ${answer.text}`);
  assert.notEqual(answer.status, 406, `${what}: not acceptable: ${answer.text}`);
  assert.ok(answer.status < 500, `${what}: server error ${answer.status} ${answer.text}`);
}

/** A time-derived nonce that no other call in this process uses. */
export const freshNonce = nextNonce;

/** HMAC-SHA256 hex of the canonical message of `signed` (every name but `signature`, sorted, `?`-joined). */
export function signatureOf(secretKey: string, signed: Readonly<Record<string, Scalar>>): string {
  return hmac(secretKey, canonical(signed));
}

/** The headers of a V3 call: the token header and the V3 media type. */
export function v3Headers(apiToken: string, extra: Record<string, string> = {}): Record<string, string> {
  return { accept: 'application/vnd.procwise.v3', authorization: `Token token=${apiToken}`, ...extra };
}

/** `name=value&...` percent-encoded the ordinary way. */
export function formEncode(params: Readonly<Record<string, Scalar>>): string {
  return new URLSearchParams(
    Object.entries(params).map(([name, value]): [string, string] => [
      name,
      value === null ? '' : String(value),
    ]),
  ).toString();
}

/**
 * The signed parameters of one call, as strings: `params` plus timestamp, nonce and the signature
 * over them and `route` (route parameters are signed though not sent). Returns what goes on the wire.
 */
export function signedParams(
  credentials: Credentials,
  params: Readonly<Record<string, string>>,
  options: { route?: Readonly<Record<string, string>>; timestamp?: number | string; nonce?: string } = {},
): Record<string, string> {
  const sent: Record<string, string> = {
    ...params,
    timestamp: String(options.timestamp ?? Date.now()),
    nonce: options.nonce ?? freshNonce(),
  };
  sent.signature = signatureOf(credentials.secretKey, { ...sent, ...options.route });
  return sent;
}

/** Sets users.active directly in the database (no API deactivates a user yet). */
export async function setUserActive(server: TestServer, userId: number, active: boolean): Promise<void> {
  await server.app.database.db.updateTable('users').set({ active }).where('id', '=', userId).execute();
}

/** Creates an exam straight through the service as `actor`, for routes that need a real id. */
export async function createExam(
  server: Pick<TestServer, 'app'>,
  actor: Actor,
  name = 'Security probe',
): Promise<number> {
  const exam = await server.app.services.exams.create(actor, {
    name,
    type: 'record_review',
    duration_minutes: 60,
  });
  return exam.id;
}

/** A running service whose log lines (every level) are kept in memory. */
export interface LoggedServer {
  readonly baseUrl: string;
  readonly server: Pick<TestServer, 'app' | 'baseUrl'>;
  /** Every log line written so far. */
  readonly lines: string[];
  close(): Promise<void>;
}

/**
 * Starts the real service like startTestServer does, but with a pino logger at `trace` that writes
 * into memory and redacts nothing, so a test can read exactly what the server code itself logs.
 */
export async function startLoggedServer(dialect: DialectName): Promise<LoggedServer> {
  const database = await createTestDatabase(dialect);
  const config = loadConfig({
    DATABASE_URL: database.url,
    DATA_DIR: database.dataDir,
    LOG_LEVEL: 'trace',
    PORT: '0',
  });
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const app = await createApp(config, { logger: pino({ level: 'trace' }, sink) });
  await app.server.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const unregister = registerServerClock(baseUrl, () => app.clock.now(), config.signatureWindowSeconds);
  return {
    baseUrl,
    server: { app, baseUrl },
    lines,
    async close() {
      unregister();
      await app.close();
      await database.drop();
    },
  };
}
