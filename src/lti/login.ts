import crypto from 'node:crypto';
import type { Db } from '../db/database.ts';
import type { Clock } from '../domain/clock.ts';
import { addressGroup } from '../domain/staff-auth/sign-in-throttle.ts';
import { countInWindow } from '../domain/staff-auth/staff-auth.repository.ts';
import { hashToken } from '../security/keys.ts';
import { LaunchRefused } from '../domain/lti/launch.ts';

/**
 * LTI 1.3 third-party initiated login (the OIDC login initiation of 1EdTech Security Framework 5.1.1):
 * the platform sends the browser to /lti/login naming itself (`iss`, `client_id`,
 * `lti_deployment_id`) and the user (`login_hint`, `lti_message_hint`); Invigil keeps a pending
 * login (state, nonce, browser binding; single use, ten minutes) and sends the browser on to the
 * platform's authorization endpoint, which posts the `id_token` to /lti/launch.
 */

/** How long a pending login waits for its launch, in ms. */
export const LTI_LOGIN_MS = 10 * 60_000;
/**
 * Pending logins one client address (IPv6: its /64) may start in LTI_LOGIN_MS. A login needs no
 * credential, so without a bound anyone could fill the table; an exam hall behind one address
 * launches a few hundred students at once, which stays below.
 */
export const LTI_LOGINS_PER_ADDRESS = 500;
/**
 * Pending logins one platform (LTI 1.3 tool provider) may have started in LTI_LOGIN_MS, from all
 * addresses together: the bound on the table when many addresses send logins for one platform.
 */
export const LTI_LOGINS_PER_PLATFORM = 10_000;

/** Too many logins started from one address or for one platform: 429 with Retry-After. */
export class LoginThrottled extends LaunchRefused {
  override name = 'LoginThrottled';
  readonly retryAfterSeconds: number;
  constructor(waitMs: number, what: string) {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    super(
      'login_throttled',
      `Too many launches were started ${what} in the last few minutes. Wait a few minutes and try again.`,
      429,
    );
    this.retryAfterSeconds = seconds;
  }
}

/** Longest parameter value accepted from a login initiation. */
const PARAM_MAX = 2048;
/** The login initiation parameters kept to start the same login again top-level. */
const KEPT_PARAMS = [
  'iss',
  'login_hint',
  'target_link_uri',
  'lti_message_hint',
  'client_id',
  'lti_deployment_id',
  'lti_storage_target',
] as const;

/** A tool provider registered for LTI 1.3, as a launch needs it. */
export interface Lti13Provider {
  readonly id: number;
  readonly instituteId: number;
  readonly name: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly deploymentId: string | null;
  readonly authLoginUrl: string;
  readonly authTokenUrl: string | null;
  readonly jwksUrl: string;
}

/** A started login: where the browser goes and how its binding is kept. */
export interface StartedLogin {
  /** The platform's authorization address with the authentication request in its query. */
  readonly authUrl: string;
  /** The browser binding value (kept in a cookie, or in platform storage). */
  readonly binding: string;
  /** The short id naming the binding cookie and the platform-storage key (bindingName). */
  readonly bindingName: string;
  /** `lti_storage_target` when the platform offered its storage; else null. */
  readonly storageTarget: string | null;
  /** The origin of the platform's authorization address (platform-storage messages go there). */
  readonly platformOrigin: string;
  readonly toolProviderId: number;
}

/** The name of the binding cookie and storage key of the login with `state`. Returns it. */
export function bindingName(state: string): string {
  return `invigil_lti_${hashToken(state).slice(0, 16)}`;
}

type ProviderRow = {
  id: number;
  institute_id: number;
  name: string;
  issuer: string | null;
  client_id: string | null;
  deployment_id: string | null;
  auth_login_url: string | null;
  auth_token_url: string | null;
  jwks_url: string | null;
};

function providerFromRow(row: ProviderRow): Lti13Provider | undefined {
  if (row.issuer === null || row.client_id === null || row.auth_login_url === null || row.jwks_url === null) {
    return undefined;
  }
  return {
    id: Number(row.id),
    instituteId: Number(row.institute_id),
    name: row.name,
    issuer: row.issuer,
    clientId: row.client_id,
    deploymentId: row.deployment_id,
    authLoginUrl: row.auth_login_url,
    authTokenUrl: row.auth_token_url,
    jwksUrl: row.jwks_url,
  };
}

/**
 * The complete LTI 1.3 registrations of `issuer` (and `clientId` when given). Returns them, oldest
 * first (incomplete ones are left out).
 */
export async function findLti13Providers(
  db: Db,
  issuer: string,
  clientId: string | undefined,
): Promise<Lti13Provider[]> {
  let query = db
    .selectFrom('tool_providers')
    .select([
      'id',
      'institute_id',
      'name',
      'issuer',
      'client_id',
      'deployment_id',
      'auth_login_url',
      'auth_token_url',
      'jwks_url',
    ])
    .where('lti_version', '=', '1.3')
    .where('issuer', '=', issuer);
  if (clientId !== undefined) query = query.where('client_id', '=', clientId);
  const rows = await query.orderBy('id').execute();
  return rows.map(providerFromRow).filter((provider) => provider !== undefined);
}

/**
 * The registration among `providers` (one platform and client) that a deployment belongs to: the one
 * naming it, else one with no deployment id set (it accepts every deployment). Returns it or undefined.
 */
export function providerForDeployment(
  providers: readonly Lti13Provider[],
  deploymentId: string | undefined,
): Lti13Provider | undefined {
  if (deploymentId === undefined) return providers[0];
  return (
    providers.find((provider) => provider.deploymentId === deploymentId) ??
    providers.find((provider) => provider.deploymentId === null)
  );
}

function param(params: Readonly<Record<string, string>>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === '') return undefined;
  if (value.length > PARAM_MAX)
    throw new LaunchRefused('invalid_login', `The parameter ${name} is too long.`);
  return value;
}

/**
 * Counts a pending login about to be written against the client's address group and the platform,
 * each in one statement (countInWindow), before anything is written. Resolves when both allow it;
 * throws LoginThrottled (429) otherwise.
 */
async function countLogin(db: Db, now: number, clientIp: string, toolProviderId: number): Promise<void> {
  const byAddress = await countInWindow(
    db,
    `lti_login:${addressGroup(clientIp)}`,
    now,
    LTI_LOGINS_PER_ADDRESS,
    LTI_LOGIN_MS,
  );
  if (byAddress > 0) throw new LoginThrottled(byAddress, 'from your network');
  const byPlatform = await countInWindow(
    db,
    `lti_login_platform:${toolProviderId}`,
    now,
    LTI_LOGINS_PER_PLATFORM,
    LTI_LOGIN_MS,
  );
  if (byPlatform > 0) throw new LoginThrottled(byPlatform, 'for your learning platform');
}

/**
 * Starts a login from the initiation's parameters (query or form): finds the registration, stores
 * the pending login, builds the authentication request. `publicUrl` gives the redirect URI;
 * `clientIp` is counted (LTI_LOGINS_PER_ADDRESS), as is the platform (LTI_LOGINS_PER_PLATFORM).
 * Returns the started login; throws LaunchRefused (invalid_login 400 for a missing parameter or a
 * target elsewhere, unknown_platform 404, ambiguous_platform 400, LoginThrottled 429).
 */
export async function startLogin(
  deps: { db: Db; clock: Clock; publicUrl: string },
  params: Readonly<Record<string, string>>,
  clientIp: string,
): Promise<StartedLogin> {
  const { db, clock, publicUrl } = deps;
  const issuer = param(params, 'iss');
  const loginHint = param(params, 'login_hint');
  const target = param(params, 'target_link_uri');
  const missing = [
    ['iss', issuer],
    ['login_hint', loginHint],
    ['target_link_uri', target],
  ].find(([, value]) => value === undefined)?.[0];
  if (missing !== undefined || issuer === undefined || loginHint === undefined || target === undefined) {
    throw new LaunchRefused('invalid_login', `The login request has no ${missing ?? 'iss'} parameter.`);
  }
  if (!isOnOrigin(target, publicUrl)) {
    throw new LaunchRefused('invalid_login', 'The login request asks for a launch at another site.');
  }
  const clientId = param(params, 'client_id');
  const deploymentId = param(params, 'lti_deployment_id');
  const candidates = await findLti13Providers(db, issuer, clientId);
  if (candidates.length === 0) {
    throw new LaunchRefused(
      'unknown_platform',
      'This learning platform is not registered with Invigil (no LTI 1.3 tool provider has its issuer and client id).',
      404,
    );
  }
  if (clientId === undefined && new Set(candidates.map((each) => each.clientId)).size > 1) {
    throw new LaunchRefused(
      'ambiguous_platform',
      'This learning platform is registered more than once; it must send its client_id with the login.',
    );
  }
  const provider = providerForDeployment(candidates, deploymentId);
  if (provider === undefined) {
    throw new LaunchRefused(
      'unknown_deployment',
      'This deployment of the tool is not registered with Invigil (the tool provider names another deployment id).',
      403,
    );
  }
  const state = crypto.randomBytes(32).toString('base64url');
  const nonce = crypto.randomBytes(32).toString('base64url');
  const binding = crypto.randomBytes(32).toString('base64url');
  const storageTarget = param(params, 'lti_storage_target') ?? null;
  const kept: Record<string, string> = {};
  for (const name of KEPT_PARAMS) {
    const value = param(params, name);
    if (value !== undefined) kept[name] = value;
  }
  const now = clock.now();
  await countLogin(db, now, clientIp, provider.id);
  // Expired logins go here, so the table holds about the last ten minutes of logins.
  await db.deleteFrom('lti_logins').where('expires_at', '<', now).execute();
  await db
    .insertInto('lti_logins')
    .values({
      state_hash: hashToken(state),
      nonce,
      tool_provider_id: provider.id,
      binding_hash: hashToken(binding),
      binding_kind: storageTarget === null ? 'cookie' : 'storage',
      login_params: JSON.stringify(kept),
      created_at: now,
      expires_at: now + LTI_LOGIN_MS,
    })
    .execute();
  const auth = new URL(provider.authLoginUrl);
  const request: Record<string, string> = {
    scope: 'openid',
    response_type: 'id_token',
    response_mode: 'form_post',
    prompt: 'none',
    client_id: provider.clientId,
    redirect_uri: `${publicUrl}/lti/launch`,
    login_hint: loginHint,
    state,
    nonce,
  };
  const messageHint = param(params, 'lti_message_hint');
  if (messageHint !== undefined) request.lti_message_hint = messageHint;
  for (const [name, value] of Object.entries(request)) auth.searchParams.set(name, value);
  return {
    authUrl: auth.href,
    binding,
    bindingName: bindingName(state),
    storageTarget,
    platformOrigin: auth.origin,
    toolProviderId: provider.id,
  };
}

/** A pending login taken for its launch. */
export interface TakenLogin {
  readonly id: number;
  readonly toolProviderId: number;
  readonly nonce: string;
  readonly bindingHash: string;
  readonly bindingKind: 'cookie' | 'storage';
  /** The initiation's parameters, to start the same login again. */
  readonly loginParams: Readonly<Record<string, string>>;
}

/**
 * Takes the pending login of `state` for its launch: marks it used in the same statement that finds
 * it, so a second launch with the same state finds nothing. Returns it; throws LaunchRefused
 * (invalid_state 400: unknown, used or expired).
 */
export async function takeLogin(deps: { db: Db; clock: Clock }, state: string): Promise<TakenLogin> {
  const { db, clock } = deps;
  const now = clock.now();
  const row = await db
    .updateTable('lti_logins')
    .set({ used_at: now })
    .where('state_hash', '=', hashToken(state))
    .where('used_at', 'is', null)
    .returning([
      'id',
      'tool_provider_id',
      'nonce',
      'binding_hash',
      'binding_kind',
      'login_params',
      'expires_at',
    ])
    .executeTakeFirst();
  if (row === undefined) {
    throw new LaunchRefused(
      'invalid_state',
      'This launch was already used or was never started here. Open the activity again from your course.',
    );
  }
  if (now >= Number(row.expires_at)) {
    throw new LaunchRefused(
      'invalid_state',
      'This launch took too long. Open the activity again from your course.',
    );
  }
  let loginParams: Record<string, string>;
  try {
    loginParams = JSON.parse(row.login_params) as Record<string, string>;
  } catch {
    loginParams = {};
  }
  return {
    id: Number(row.id),
    toolProviderId: Number(row.tool_provider_id),
    nonce: row.nonce,
    bindingHash: row.binding_hash,
    bindingKind: row.binding_kind === 'storage' ? 'storage' : 'cookie',
    loginParams,
  };
}

/** True when `address` is an absolute URL on the origin of `publicUrl`. */
function isOnOrigin(address: string, publicUrl: string): boolean {
  try {
    return new URL(address).origin === new URL(publicUrl).origin;
  } catch {
    return false;
  }
}

/** True when `value` hashes to `hash` (compared in constant time). */
export function matchesHash(value: string | undefined, hash: string): boolean {
  if (value === undefined || value === '') return false;
  const left = Buffer.from(hashToken(value));
  const right = Buffer.from(hash);
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}
