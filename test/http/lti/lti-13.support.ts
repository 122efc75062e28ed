import { Writable } from 'node:stream';
import pino from 'pino';
import { type App, createApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config/config.ts';
import type { Clock } from '../../../src/domain/clock.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { freePort } from '../../helpers/processes.ts';
import { createTestDatabase, type DialectName, type TestDatabase } from '../../helpers/server.ts';
import { type FakePlatform, startFakePlatform, toolProviderFields } from '../../lti/fake-platform.ts';
import { registerServerClock } from '../../helpers/client.ts';

/**
 * The world of an LTI 1.3 test: the service (PUBLIC_URL = its own address, loopback allowed for
 * outbound requests, every log line kept), the fake platform, an institute and the tool provider
 * registering the platform; and the three HTTP legs of a launch a browser would make.
 */
export interface LtiWorld {
  readonly app: App;
  readonly baseUrl: string;
  readonly database: TestDatabase;
  readonly platform: FakePlatform;
  readonly instituteId: number;
  readonly toolProviderId: number;
  /** Every log line the service wrote (JSON). */
  readonly lines: string[];
  close(): Promise<void>;
}

/** Starts the world. Returns it; the caller closes it. */
export async function startLtiWorld(
  dialect: DialectName,
  options: {
    clock?: Clock;
    env?: Record<string, string>;
    /** The host name of PUBLIC_URL (a browser test uses `localhost`: another site than the platform's 127.0.0.1). */
    publicHost?: string;
  } = {},
): Promise<LtiWorld> {
  const database = await createTestDatabase(dialect);
  const port = await freePort();
  const baseUrl = `http://${options.publicHost ?? '127.0.0.1'}:${port}`;
  const config = loadConfig({
    DATABASE_URL: database.url,
    DATA_DIR: database.dataDir,
    LOG_LEVEL: 'info',
    PORT: String(port),
    PUBLIC_URL: baseUrl,
    OUTBOUND_ALLOWLIST: '127.0.0.1',
    ...options.env,
  });
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const app = await createApp(config, {
    logger: pino({ level: 'info' }, sink),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  await app.server.listen({ port, host: '127.0.0.1' });
  const unregister = registerServerClock(baseUrl, () => app.clock.now(), config.signatureWindowSeconds);
  const platform = await startFakePlatform({
    toolUrl: baseUrl,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  const institute = await app.services.institutes.create({ name: `LTI ${port}`, short_name: `L${port}` });
  const now = Date.now();
  const row = await app.database.db
    .insertInto('tool_providers')
    .values({
      institute_id: institute.id,
      name: 'Fake LMS',
      consumer_key: null,
      shared_secret_encrypted: null,
      ...toolProviderFields(platform),
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return {
    app,
    baseUrl,
    database,
    platform,
    instituteId: institute.id,
    toolProviderId: Number(row.id),
    lines,
    async close() {
      unregister();
      await platform.close();
      await app.close();
      await database.drop();
    },
  };
}

/** The login initiation parameters the platform sends for `loginHint`. */
export function loginParams(
  world: LtiWorld,
  loginHint: string,
  extra: Record<string, string> = {},
): URLSearchParams {
  return new URLSearchParams({
    iss: world.platform.issuer,
    login_hint: loginHint,
    target_link_uri: `${world.baseUrl}/lti/launch`,
    client_id: world.platform.clientId,
    lti_deployment_id: world.platform.deploymentId,
    lti_message_hint: 'message-hint',
    ...extra,
  });
}

/** The `name=value` of each Set-Cookie of an answer, joined as a Cookie header ('' when none). */
export function cookiesOf(answer: HttpAnswer): string {
  const header = answer.headers['set-cookie'];
  const lines = Array.isArray(header) ? header : header === undefined ? [] : [header];
  return lines.map((line) => line.split(';')[0] ?? '').join('; ');
}

/** A started login: the binding cookie and the authentication request sent to the platform. */
export interface StartedLogin {
  readonly answer: HttpAnswer;
  readonly cookie: string;
  readonly authUrl: URL;
  readonly state: string;
  readonly nonce: string;
}

/** GET /lti/login for `loginHint`. Returns what the browser holds afterwards; throws when not a 302. */
export async function startLogin(
  world: LtiWorld,
  loginHint: string,
  extra: Record<string, string> = {},
): Promise<StartedLogin> {
  const answer = await httpRequest({
    url: `${world.baseUrl}/lti/login?${loginParams(world, loginHint, extra).toString()}`,
  });
  if (answer.status !== 302) throw new Error(`login answered ${answer.status}: ${answer.text}`);
  const authUrl = new URL(String(answer.headers.location));
  return {
    answer,
    cookie: cookiesOf(answer),
    authUrl,
    state: authUrl.searchParams.get('state') ?? '',
    nonce: authUrl.searchParams.get('nonce') ?? '',
  };
}

/** Follows the login to the platform's auth endpoint (JSON form). Returns the id_token and state. */
export async function authorize(login: StartedLogin): Promise<{ idToken: string; state: string }> {
  const answer = await httpRequest({ url: login.authUrl.href, headers: { accept: 'application/json' } });
  if (answer.status !== 200) throw new Error(`platform auth answered ${answer.status}: ${answer.text}`);
  const body = answer.json as { id_token: string; state: string };
  return { idToken: body.id_token, state: body.state };
}

/** POST /lti/launch with an id_token and state, as the platform's auto-posting form does. */
export function postLaunch(
  world: LtiWorld,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return httpRequest({
    url: `${world.baseUrl}/lti/launch`,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/**
 * A whole launch of `loginHint` (whose claims the platform must know): login, auth, launch with the
 * binding cookie. Returns the launch's answer.
 */
export async function launchAs(
  world: LtiWorld,
  loginHint: string,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const login = await startLogin(world, loginHint);
  const { idToken, state } = await authorize(login);
  return postLaunch(world, { id_token: idToken, state }, { cookie: login.cookie, ...headers });
}

/**
 * A whole top-level launch from a login initiation address the platform links to (`loginUrl`,
 * e.g. FakePlatform.loginUrl or a link on one of its pages): login, auth, launch with the binding
 * cookie. Returns the launch's answer; throws when the login is not a 302.
 */
export async function launchAt(world: LtiWorld, loginUrl: string): Promise<HttpAnswer> {
  const answer = await httpRequest({ url: loginUrl });
  if (answer.status !== 302) throw new Error(`login answered ${answer.status}: ${answer.text}`);
  const authUrl = new URL(String(answer.headers.location));
  const login: StartedLogin = {
    answer,
    cookie: cookiesOf(answer),
    authUrl,
    state: authUrl.searchParams.get('state') ?? '',
    nonce: authUrl.searchParams.get('nonce') ?? '',
  };
  const { idToken, state } = await authorize(login);
  return postLaunch(world, { id_token: idToken, state }, { cookie: login.cookie });
}

/** The parsed log lines with message `msg`. */
export function logged(world: LtiWorld, msg: string): Record<string, unknown>[] {
  return world.lines
    .flatMap((line) => line.split('\n'))
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry.msg === msg);
}
