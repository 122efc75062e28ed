import { decryptSecret, encryptSecret } from '../../security/keys.ts';
import { Invalid, ParamMissing } from '../errors.ts';

/**
 * The metadata of an OpenID Connect provider staff sign in with (docs/staff-sign-in.md, "OpenID
 * Connect"). Stored in `identity_providers.metadata` as JSON:
 *
 *   {"issuer": "https://login.example.org", "client_id": "invigil",
 *    "client_secret_encrypted": "v1:...", "scopes": ["openid", "email", "profile"]}
 *
 * The client secret is given in clear (`client_secret`) and stored encrypted under the server's
 * encryption key, as users' API secrets are. Pure: no database, no network.
 */

/** The scopes asked for when a configuration names none. */
export const DEFAULT_OIDC_SCOPES: readonly string[] = ['openid', 'email', 'profile'];

/** What an operator gives to add an OIDC provider to sign in with (CLI `idp create --issuer`). */
export interface NewOidcProvider {
  readonly instituteId: number;
  readonly name: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Undefined: DEFAULT_OIDC_SCOPES. */
  readonly scopes?: readonly string[] | undefined;
}

/** A usable sign-in configuration, the secret still encrypted. */
export interface OidcSignInConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecretEncrypted: string;
  readonly scopes: readonly string[];
}

const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
const MAX_FIELD = 2000;

/** True for a host name that names this machine (development providers may use plain http there). */
export function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}

/**
 * The reason an issuer is refused, or undefined when it is usable: an absolute https address (plain
 * http only on a loopback host), without query, fragment or credentials.
 */
export function issuerProblem(issuer: string): string | undefined {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'must be an https:// address';
  }
  const local = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !local) return 'must be an https:// address';
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    return 'must not have a query, a fragment or credentials';
  }
  return undefined;
}

/** The scopes of a space-separated list, `openid` required. Throws Invalid on `scopes`. */
export function parseScopes(text: string): string[] {
  const scopes = [...new Set(text.split(/\s+/).filter((scope) => scope !== ''))];
  if (scopes.some((scope) => !SCOPE.test(scope))) throw new Invalid('scopes', 'has an invalid scope');
  if (!scopes.includes('openid')) throw new Invalid('scopes', 'must include openid');
  return scopes;
}

/**
 * Checks a new sign-in provider and builds its stored metadata (the secret encrypted with `key`).
 * Returns the JSON text; throws ParamMissing or Invalid naming the first bad field.
 */
export function oidcMetadataFor(input: NewOidcProvider, key: Buffer): string {
  if (input.name.trim() === '') throw new ParamMissing('name');
  const issuer = input.issuer.trim();
  if (issuer === '') throw new ParamMissing('issuer');
  const problem = issuerProblem(issuer);
  if (problem !== undefined) throw new Invalid('issuer', problem);
  const clientId = input.clientId.trim();
  if (clientId === '') throw new ParamMissing('client_id');
  if (clientId.length > MAX_FIELD) throw new Invalid('client_id', 'is too long');
  if (input.clientSecret === '') throw new ParamMissing('client_secret');
  if (input.clientSecret.length > MAX_FIELD) throw new Invalid('client_secret', 'is too long');
  const scopes = input.scopes === undefined ? DEFAULT_OIDC_SCOPES : parseScopes(input.scopes.join(' '));
  return JSON.stringify({
    issuer,
    client_id: clientId,
    client_secret_encrypted: encryptSecret(key, input.clientSecret),
    scopes,
  });
}

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text.replace(/^\uFEFF/, ''));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * OIDC metadata as stored: a `client_secret` given in clear is replaced by `client_secret_encrypted`
 * (encrypted with `key`); anything else is kept as written. Returns the text to store (the input
 * itself when there is nothing to encrypt).
 */
export function sealOidcMetadata(metadata: string, key: Buffer): string {
  const document = jsonObject(metadata);
  if (document === undefined || typeof document.client_secret !== 'string') return metadata;
  const { client_secret: secret, ...rest } = document;
  return JSON.stringify({ ...rest, client_secret_encrypted: encryptSecret(key, secret) });
}

/**
 * The sign-in configuration in stored OIDC metadata, or undefined when it has none (a discovery
 * document kept for reference, say): it needs an acceptable issuer, a client_id and an encrypted
 * client secret; `scopes`, when present, must be a list of scopes including openid.
 */
export function oidcSignInConfig(metadata: string): OidcSignInConfig | undefined {
  const document = jsonObject(metadata);
  if (document === undefined) return undefined;
  const { issuer, client_id: clientId, client_secret_encrypted: secret, scopes } = document;
  if (typeof issuer !== 'string' || issuerProblem(issuer) !== undefined) return undefined;
  if (typeof clientId !== 'string' || clientId === '') return undefined;
  if (typeof secret !== 'string' || secret === '') return undefined;
  let list: readonly string[] = DEFAULT_OIDC_SCOPES;
  if (scopes !== undefined) {
    if (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === 'string')) return undefined;
    try {
      list = parseScopes(scopes.join(' '));
    } catch {
      return undefined;
    }
  }
  return { issuer, clientId, clientSecretEncrypted: secret, scopes: list };
}

/** The client secret of a configuration. Returns it; throws when another key encrypted it. */
export function clientSecretOf(config: OidcSignInConfig, key: Buffer): string {
  return decryptSecret(key, config.clientSecretEncrypted);
}
