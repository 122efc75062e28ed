import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';

/**
 * An in-process OpenID Connect provider (the `oidc-provider` package) on a random loopback port, for
 * the sign-in tests: one confidential client (code flow, PKCE), accounts the test defines, and an
 * interaction endpoint that signs in whichever account the test names next, or refuses.
 */

/** The claims an account of the test provider has. */
export interface TestAccount {
  readonly email?: string;
  readonly email_verified?: unknown;
}

export interface TestProvider {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The provider's accounts by id (the `sub`); a test adds its own. */
  readonly accounts: Map<string, TestAccount>;
  /** What the next login interaction does: sign in an account, or answer access_denied. */
  next: { readonly accountId: string } | 'deny';
  /** How many times the discovery document was fetched. */
  readonly discoveries: number;
  close(): Promise<void>;
}

/** The cookies a browser holds for one origin, by name. */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  /** Keeps the cookies of an answer's Set-Cookie headers (a removed one is forgotten). */
  take(answer: HttpAnswer): void {
    const header = answer.headers['set-cookie'];
    for (const line of Array.isArray(header) ? header : header === undefined ? [] : [header]) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      if (at === -1) continue;
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const removed = /;\s*max-age=0/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line) || value === '';
      if (removed) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  /** The `Cookie` header to send, or undefined when there are none. */
  header(): string | undefined {
    if (this.#cookies.size === 0) return undefined;
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }
}

/** A GET with the jar's cookies; the answer's cookies go into the jar. Returns the answer. */
export async function getWith(jar: CookieJar, url: string): Promise<HttpAnswer> {
  const cookie = jar.header();
  const answer = await httpRequest({ url, headers: cookie === undefined ? {} : { cookie } });
  jar.take(answer);
  return answer;
}

/**
 * Follows the provider's redirects from `authorizationUrl`, as a browser with its own (fresh) cookies
 * for the provider would, until one leaves for `callbackPrefix`. Returns that address; fails the
 * test when the provider answers anything but a redirect.
 */
export async function throughProvider(authorizationUrl: string, callbackPrefix: string): Promise<string> {
  const jar = new CookieJar();
  let url = authorizationUrl;
  for (let hop = 0; hop < 10; hop += 1) {
    const answer = await getWith(jar, url);
    const location = answer.headers.location;
    assert.ok(
      answer.status >= 300 && answer.status < 400 && location !== undefined,
      `the provider answered ${answer.status} at ${url}: ${answer.text.slice(0, 300)}`,
    );
    const next = new URL(location, url).href;
    if (next.startsWith(callbackPrefix)) return next;
    url = next;
  }
  assert.fail('the provider never redirected back');
}

/**
 * Starts the provider. `redirectUri` is the only redirect URI its client accepts. Returns it
 * listening on 127.0.0.1; close() stops it.
 */
export async function startTestProvider(redirectUri: string): Promise<TestProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'invigil-test';
  const clientSecret = crypto.randomBytes(24).toString('base64url');
  const accounts = new Map<string, TestAccount>();
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256', kid: 'test' };

  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: false } },
    ttl: {
      AuthorizationCode: 60,
      AccessToken: 600,
      IdToken: 600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, sub) => {
      const account = accounts.get(sub);
      if (account === undefined) return undefined;
      return { accountId: sub, claims: () => ({ sub, ...account }) };
    },
  };
  const provider = new Provider(issuer, configuration);
  const state: { next: TestProvider['next']; discoveries: number } = { next: 'deny', discoveries: 0 };
  const oidcCallback = provider.callback();

  /** The login and consent steps, decided by the test instead of a person at a form. */
  async function interact(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(request, response);
    if (details.prompt.name === 'login') {
      const result =
        state.next === 'deny'
          ? { error: 'access_denied', error_description: 'The user cancelled' }
          : { login: { accountId: state.next.accountId } };
      await provider.interactionFinished(request, response, result, { mergeWithLastSubmission: false });
      return;
    }
    const accountId = details.session?.accountId;
    const grant = new provider.Grant({ accountId, clientId });
    const scope = details.params.scope;
    grant.addOIDCScope(typeof scope === 'string' ? scope : 'openid');
    const grantId = await grant.save();
    await provider.interactionFinished(
      request,
      response,
      { consent: { grantId } },
      { mergeWithLastSubmission: true },
    );
  }

  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    if (request.url?.startsWith('/interaction/') === true) {
      interact(request, response).catch((error: unknown) => {
        response.statusCode = 500;
        response.end(String(error));
      });
      return;
    }
    if (request.url === '/.well-known/openid-configuration') state.discoveries += 1;
    void oidcCallback(request, response);
  });

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    get next() {
      return state.next;
    },
    set next(value) {
      state.next = value;
    },
    get discoveries() {
      return state.discoveries;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
