import crypto from 'node:crypto';
import * as oidc from 'openid-client';
import type { Db } from '../../db/database.ts';
import { decryptSecret, encryptSecret, hashToken, type ServerKeys } from '../../security/keys.ts';
import { fetchThrough } from '../../security/outbound-fetch.ts';
import type { OutboundHttp } from '../../security/outbound-http.ts';
import type { Clock } from '../clock.ts';
import { Unauthorized } from '../errors.ts';
import {
  findProviderWithMetadata,
  listInstituteOidcProviders,
  type ProviderWithMetadata,
} from '../identity-providers/identity-providers.repository.ts';
import {
  clientSecretOf,
  type OidcSignInConfig,
  oidcSignInConfig,
} from '../identity-providers/oidc-config.ts';
import {
  deleteExpiredOidcLogins,
  findUserByEmailForSignIn,
  insertOidcLogin,
  takeOidcLogin,
} from './oidc-logins.repository.ts';
import {
  BROWSER_KEY_PATTERN,
  countsAsFailedSignIn,
  OIDC_DISCOVERY_TTL_MS,
  OIDC_LOGIN_MS,
  OidcSignInFailed,
  safeReturnTo,
} from './oidc-sign-in.ts';
import {
  ADDRESS_FREE_FAILURES,
  ADDRESS_STARTS_PER_WINDOW,
  addressKey,
  START_WINDOW_MS,
  startKey,
  waitFor,
} from './sign-in-throttle.ts';
import { countInWindow, findThrottle, releaseThrottle, reserveThrottle } from './staff-auth.repository.ts';
import type { ClientInfo, SignInResult, StaffAuthService, StaffSession } from './staff-auth.service.ts';

/** An OpenID Connect provider one can sign in with, as the sign-in page lists it. */
export interface SignInProvider {
  readonly id: number;
  readonly name: string;
  readonly instituteId: number;
  readonly instituteName: string;
}

/** Where a start sends the browser, and the browser-binding value to keep in its cookie. */
export interface OidcStart {
  readonly authorizationUrl: string;
  readonly browserKey: string;
}

/** A finished OIDC sign-in: a session, or (the user has a second factor) the pending second step. */
export type OidcSignInResult = {
  /** A path on PUBLIC_URL. */
  readonly returnTo: string;
  readonly providerId: number;
} & (
  | { readonly token: string; readonly session: StaffSession; readonly pending?: undefined }
  | { readonly pending: { readonly token: string; readonly expiresAt: number } }
);

export interface OidcSignInService {
  /** The providers the sign-in page offers: OIDC, of an institute, with a complete configuration. */
  providers(): Promise<SignInProvider[]>;
  /**
   * Starts a sign-in with provider `providerId` (the path's text): discovery (cached), PKCE (S256),
   * state and nonce, the pending login stored for OIDC_LOGIN_MS. `browserKey` is the binding
   * cookie's value, reused when well-formed. Every start counts against the client address group's
   * ADDRESS_STARTS_PER_WINDOW, and a refused one as a failed sign-in of the address. Returns the
   * provider's authorization address and the binding value; throws OidcSignInFailed (throttled
   * while the address is blocked or its starts are used up, unknown_provider, provider_unavailable).
   */
  start(
    providerId: string,
    returnTo: unknown,
    browserKey: string | undefined,
    client: ClientInfo,
  ): Promise<OidcStart>;
  /**
   * Finishes a sign-in from the callback's raw query string and the binding cookie: state (single
   * use, unexpired, this browser), the code exchanged with PKCE, the nonce, a verified email, an
   * active user of the provider's institute, then a session as a password sign-in opens one. A
   * refusal counts as a failed sign-in of the client address (countsAsFailedSignIn), in the throttle
   * password sign-in uses; while the address is blocked, nothing is checked (the state is not
   * spent). Returns the session; throws OidcSignInFailed for every refusal (throttled included),
   * and what the database throws.
   */
  finish(query: string, browserKey: string | undefined, client: ClientInfo): Promise<OidcSignInResult>;
}

/** Seconds a request to a provider may take. */
const PROVIDER_TIMEOUT_SECONDS = 10;
/** Longest state accepted from a callback (ours are 43 characters). */
const STATE_MAX = 200;

/** A provider that can sign in: its row and its parsed configuration. */
interface SignInProviderConfig {
  readonly provider: ProviderWithMetadata & { readonly instituteId: number };
  readonly config: OidcSignInConfig;
}

/** The sign-in configuration of a provider, or undefined when it cannot sign in. */
function signInConfigOf(provider: ProviderWithMetadata): SignInProviderConfig | undefined {
  if (provider.protocol !== 'oidc' || provider.instituteId === null) return undefined;
  const config = oidcSignInConfig(provider.metadata);
  if (config === undefined) return undefined;
  return { provider: { ...provider, instituteId: provider.instituteId }, config };
}

function equalHashes(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}

/** True for an error that says the provider was not reached (network, timeout, an unexpected answer). */
function unreachable(error: unknown): boolean {
  if (error instanceof TypeError && error.message === 'fetch failed') return true;
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return true;
  const code = error instanceof oidc.ClientError ? error.code : undefined;
  return code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' || code === 'OAUTH_RESPONSE_IS_NOT_JSON';
}

/** A short text for the log about an error of the provider exchange. */
function describe(error: unknown): string {
  if (error instanceof oidc.ResponseBodyError || error instanceof oidc.AuthorizationResponseError) {
    return `${error.error}${error.error_description === undefined ? '' : `: ${error.error_description}`}`;
  }
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${typeof code === 'string' ? `${code}: ` : ''}${error.message}`.slice(0, 300);
  }
  return String(error).slice(0, 300);
}

/** The failure a provider exchange (code grant, userinfo) ends in. Returns it. */
function exchangeFailure(error: unknown, providerId: number): OidcSignInFailed {
  const context = { providerId };
  if (error instanceof oidc.AuthorizationResponseError) {
    return new OidcSignInFailed('provider_error', `provider answered ${describe(error)}`, context);
  }
  if (unreachable(error)) {
    return new OidcSignInFailed('provider_unavailable', `provider not reached: ${describe(error)}`, context);
  }
  return new OidcSignInFailed('invalid_response', `provider response refused: ${describe(error)}`, context);
}

/**
 * The client authentication to use at the token endpoint: client_secret_basic (the OIDC default)
 * unless the provider lists only client_secret_post.
 */
function clientAuthFor(metadata: oidc.ServerMetadata, secret: string): oidc.ClientAuth {
  const supported = metadata.token_endpoint_auth_methods_supported;
  if (supported !== undefined && !supported.includes('client_secret_basic')) {
    if (supported.includes('client_secret_post')) return oidc.ClientSecretPost(secret);
  }
  return oidc.ClientSecretBasic(secret);
}

/** Builds the OIDC sign-in use cases. Returns the service; throws nothing. */
export function createOidcSignInService(deps: {
  db: Db;
  clock: Clock;
  keys: Pick<ServerKeys, 'encryption'>;
  publicUrl: string;
  staffAuth: Pick<StaffAuthService, 'signInVerified'>;
  /** The guarded client every request to a provider goes through (discovery, token, user info). */
  outbound: OutboundHttp;
}): OidcSignInService {
  const { db, clock, publicUrl, staffAuth } = deps;
  const providerFetch = fetchThrough(deps.outbound);
  const key = deps.keys.encryption;
  const redirectUri = `${publicUrl}/auth/oidc/callback`;
  /** Discovered configurations by provider id, with the metadata they were made from. */
  const discovered = new Map<
    number,
    { metadata: string; expiresAt: number; configuration: Promise<oidc.Configuration> }
  >();

  async function discoverNow(config: OidcSignInConfig, secret: string): Promise<oidc.Configuration> {
    const issuer = new URL(config.issuer);
    // Plain http is accepted for a loopback issuer only (oidc-config.ts: issuerProblem).
    const insecure = issuer.protocol === 'http:';
    const found = await oidc.discovery(issuer, config.clientId, secret, undefined, {
      timeout: PROVIDER_TIMEOUT_SECONDS,
      [oidc.customFetch]: providerFetch,
      ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
    const server = found.serverMetadata();
    const configuration = new oidc.Configuration(
      server,
      config.clientId,
      { client_secret: secret },
      clientAuthFor(server, secret),
    );
    configuration.timeout = PROVIDER_TIMEOUT_SECONDS;
    configuration[oidc.customFetch] = providerFetch;
    if (insecure) oidc.allowInsecureRequests(configuration);
    return configuration;
  }

  /**
   * The provider's configuration: discovered once per OIDC_DISCOVERY_TTL_MS (and again at once
   * when its metadata changed); concurrent starts share one discovery, and a failed one is not
   * kept. Returns it; throws OidcSignInFailed (unknown_provider, provider_unavailable).
   */
  async function configurationOf({ provider, config }: SignInProviderConfig): Promise<oidc.Configuration> {
    const now = clock.now();
    const cached = discovered.get(provider.id);
    if (cached !== undefined && cached.metadata === provider.metadata && now < cached.expiresAt) {
      return cached.configuration.catch((error: unknown) => {
        throw new OidcSignInFailed('provider_unavailable', `discovery failed: ${describe(error)}`, {
          providerId: provider.id,
        });
      });
    }
    let secret: string;
    try {
      secret = clientSecretOf(config, key);
    } catch {
      throw new OidcSignInFailed(
        'unknown_provider',
        `identity provider ${provider.id}: the client secret cannot be decrypted with this server's key`,
        { providerId: provider.id },
      );
    }
    const configuration = discoverNow(config, secret);
    discovered.set(provider.id, {
      metadata: provider.metadata,
      expiresAt: now + OIDC_DISCOVERY_TTL_MS,
      configuration,
    });
    try {
      return await configuration;
    } catch (error) {
      if (discovered.get(provider.id)?.configuration === configuration) discovered.delete(provider.id);
      throw new OidcSignInFailed('provider_unavailable', `discovery failed: ${describe(error)}`, {
        providerId: provider.id,
      });
    }
  }

  /** The provider a pending login or a start names, if it can sign in. Throws OidcSignInFailed. */
  async function signInProvider(id: number): Promise<SignInProviderConfig> {
    const provider = await findProviderWithMetadata(db, id);
    if (provider === undefined) {
      throw new OidcSignInFailed('unknown_provider', `no identity provider ${id}`);
    }
    const usable = signInConfigOf(provider);
    if (usable === undefined) {
      throw new OidcSignInFailed(
        'unknown_provider',
        `identity provider ${id} cannot sign in (${provider.protocol}, institute ${provider.instituteId ?? 'none'})`,
        { providerId: id },
      );
    }
    return usable;
  }

  /**
   * Refuses (throttled) while the client address is blocked by the sign-in throttle, the one password
   * sign-in uses. Resolves otherwise; throws OidcSignInFailed.
   */
  async function requireUnblocked(client: ClientInfo, now: number): Promise<void> {
    const wait = waitFor(await findThrottle(db, addressKey(client.ip)), now);
    if (wait > 0) {
      throw new OidcSignInFailed('throttled', `address ${client.ip} blocked for ${wait} ms more`);
    }
  }

  /**
   * Counts one more start of the client's address group; refuses (throttled) once the window's
   * starts are used up, writing nothing then. Resolves otherwise; throws OidcSignInFailed.
   */
  async function countStart(client: ClientInfo, now: number): Promise<void> {
    // Counted in one statement (startAllowed's rule), so parallel starts cannot share one count.
    const waitMs = await countInWindow(
      db,
      startKey(client.ip),
      now,
      ADDRESS_STARTS_PER_WINDOW,
      START_WINDOW_MS,
    );
    if (waitMs > 0) {
      throw new OidcSignInFailed(
        'throttled',
        `too many sign-ins started from ${client.ip}: ${waitMs} ms until the window ends`,
      );
    }
  }

  /**
   * Runs a start, counting a refusal the client could cause as a failed sign-in of its address
   * before rethrowing it. Returns what `run` returns.
   */
  async function countingFailures<T>(client: ClientInfo, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof OidcSignInFailed && countsAsFailedSignIn(error.code)) {
        await reserveThrottle(db, addressKey(client.ip), clock.now(), ADDRESS_FREE_FAILURES);
      }
      throw error;
    }
  }

  /**
   * Runs a callback under an attempt of the client address reserved before anything is checked (as
   * password sign-in does), so parallel forged callbacks get no more checks than sequential ones.
   * The attempt stays counted for a refusal the client could cause and is given back otherwise.
   * Returns what `run` returns; throws OidcSignInFailed (throttled while the address is blocked).
   */
  async function reservingAttempt<T>(client: ClientInfo, run: () => Promise<T>): Promise<T> {
    const key = addressKey(client.ip);
    const now = clock.now();
    if (!(await reserveThrottle(db, key, now, ADDRESS_FREE_FAILURES))) {
      const wait = waitFor(await findThrottle(db, key), now);
      throw new OidcSignInFailed('throttled', `address ${client.ip} blocked for ${wait} ms more`);
    }
    try {
      const result = await run();
      await releaseThrottle(db, key, now, ADDRESS_FREE_FAILURES);
      return result;
    } catch (error) {
      if (!(error instanceof OidcSignInFailed && countsAsFailedSignIn(error.code))) {
        await releaseThrottle(db, key, now, ADDRESS_FREE_FAILURES).catch(() => undefined);
      }
      throw error;
    }
  }

  /** The email and whether it is verified: from the ID token, else from the userinfo endpoint. */
  async function identityOf(
    configuration: oidc.Configuration,
    tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>,
    providerId: number,
  ): Promise<{ email: unknown; verified: unknown }> {
    const claims = tokens.claims();
    if (claims === undefined) {
      throw new OidcSignInFailed('invalid_response', 'no ID token', { providerId });
    }
    if (claims.email !== undefined) return { email: claims.email, verified: claims.email_verified };
    // Many providers put profile claims in the userinfo answer only (OIDC Core 5.4).
    try {
      const info = await oidc.fetchUserInfo(configuration, tokens.access_token, claims.sub);
      return { email: info.email, verified: info.email_verified };
    } catch (error) {
      throw exchangeFailure(error, providerId);
    }
  }

  /** The start once the address may start one (see OidcSignInService.start). */
  async function startCounted(
    providerIdText: string,
    returnTo: unknown,
    browserKey: string | undefined,
  ): Promise<OidcStart> {
    if (!/^\d{1,15}$/.test(providerIdText)) {
      throw new OidcSignInFailed('unknown_provider', 'the provider id is not a whole number');
    }
    const usable = await signInProvider(Number(providerIdText));
    const configuration = await configurationOf(usable);
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const verifier = oidc.randomPKCECodeVerifier();
    const binding =
      browserKey !== undefined && BROWSER_KEY_PATTERN.test(browserKey)
        ? browserKey
        : crypto.randomBytes(32).toString('base64url');
    const now = clock.now();
    // Expired pending logins go here, so the table holds about the last OIDC_LOGIN_MS of starts.
    await deleteExpiredOidcLogins(db, now);
    await insertOidcLogin(db, {
      id: hashToken(state),
      identityProviderId: usable.provider.id,
      browserHash: hashToken(binding),
      codeVerifierEncrypted: encryptSecret(key, verifier),
      nonce,
      returnTo: safeReturnTo(returnTo, publicUrl),
      createdAt: now,
      expiresAt: now + OIDC_LOGIN_MS,
    });
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: usable.config.scopes.join(' '),
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    return { authorizationUrl: url.href, browserKey: binding };
  }

  /** The callback once the address is not blocked (see OidcSignInService.finish). */
  async function finishUnblocked(
    query: string,
    browserKey: string | undefined,
    client: ClientInfo,
  ): Promise<OidcSignInResult> {
    const params = new URLSearchParams(query);
    const state = params.get('state');
    if (state === null || state === '' || state.length > STATE_MAX) {
      throw new OidcSignInFailed('invalid_state', 'callback without a state');
    }
    const login = await takeOidcLogin(db, hashToken(state));
    if (login === undefined) throw new OidcSignInFailed('invalid_state', 'unknown or used state');
    const providerId = login.identityProviderId;
    if (clock.now() >= login.expiresAt) {
      throw new OidcSignInFailed('invalid_state', 'expired state', { providerId });
    }
    if (browserKey === undefined || !equalHashes(hashToken(browserKey), login.browserHash)) {
      throw new OidcSignInFailed('invalid_state', 'state started in another browser', { providerId });
    }
    const usable = await signInProvider(providerId);
    const error = params.get('error');
    if (error !== null) {
      const detail = params.get('error_description');
      throw new OidcSignInFailed(
        'provider_error',
        `provider answered ${error.slice(0, 100)}${detail === null ? '' : `: ${detail.slice(0, 200)}`}`,
        { providerId },
      );
    }
    const configuration = await configurationOf(usable);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(configuration, new URL(`${redirectUri}?${query}`), {
        pkceCodeVerifier: decryptSecret(key, login.codeVerifierEncrypted),
        expectedState: state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
    } catch (failure) {
      throw exchangeFailure(failure, providerId);
    }
    const identity = await identityOf(configuration, tokens, providerId);
    const email = typeof identity.email === 'string' ? identity.email.trim() : '';
    if (email === '') throw new OidcSignInFailed('email_missing', 'no email claim', { providerId });
    if (identity.verified !== true) {
      throw new OidcSignInFailed('email_not_verified', 'email_verified is not true', { providerId, email });
    }
    const found = await findUserByEmailForSignIn(db, email);
    const refusal =
      found === undefined
        ? 'no user has this email'
        : found.instituteId !== usable.provider.instituteId
          ? `user ${found.id} belongs to institute ${found.instituteId}, not ${usable.provider.instituteId}`
          : !found.active
            ? `user ${found.id} is deactivated`
            : undefined;
    if (found === undefined || refusal !== undefined) {
      throw new OidcSignInFailed('no_matching_user', refusal ?? 'no user', { providerId, email });
    }
    let result: SignInResult;
    try {
      result = await staffAuth.signInVerified(found.id, client);
    } catch (failure) {
      // The user was deactivated between the two reads.
      if (failure instanceof Unauthorized) {
        throw new OidcSignInFailed('no_matching_user', failure.reason, { providerId, email });
      }
      throw failure;
    }
    return { ...result, returnTo: login.returnTo, providerId };
  }

  return {
    async providers() {
      const rows = await listInstituteOidcProviders(db);
      return rows
        .filter((row) => signInConfigOf(row) !== undefined)
        .map((row) => ({
          id: row.id,
          name: row.name,
          instituteId: row.instituteId,
          instituteName: row.instituteName,
        }));
    },

    async start(providerIdText, returnTo, browserKey, client) {
      const now = clock.now();
      await requireUnblocked(client, now);
      // Counted before anything else: every start costs a row, and may cost a discovery request.
      await countStart(client, now);
      return countingFailures(client, () => startCounted(providerIdText, returnTo, browserKey));
    },

    async finish(query, browserKey, client) {
      return reservingAttempt(client, () => finishUnblocked(query, browserKey, client));
    },
  };
}
