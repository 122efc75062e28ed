/**
 * The rules of OpenID Connect staff sign-in that need no database and no network
 * (docs/staff-sign-in.md, "OpenID Connect"): how long a pending login lives, which return addresses
 * are accepted, and the closed set of failure codes the console is sent.
 */

/** A pending login (start to callback) lives this long: time to sign in at the provider, MFA included. */
export const OIDC_LOGIN_MS = 10 * 60 * 1000;
/** A provider's discovered configuration is reused this long before it is fetched again. */
export const OIDC_DISCOVERY_TTL_MS = 60 * 60 * 1000;
/** The console page a sign-in returns to when the start names none (or one that is refused). */
export const DEFAULT_RETURN_TO = '/console';
/** The console page every failure is sent to, with `?error=<code>`. */
export const SIGN_IN_PAGE = '/console/sign-in';
/** Longest return address kept. */
const RETURN_TO_MAX = 1000;

/**
 * Why an OIDC sign-in failed, as the console is told in `/console/sign-in?error=<code>`. A closed
 * set: the console has a message for each, and the server's log has the detail.
 */
export const OIDC_FAILURES = [
  /** No such identity provider, or one that cannot sign in (SAML, global, incomplete configuration). */
  'unknown_provider',
  /** The provider could not be reached, or its discovery document is unusable. */
  'provider_unavailable',
  /** The provider sent the browser back with an error (the user cancelled, consent refused, ...). */
  'provider_error',
  /** No pending login for the callback's state: unknown, used, expired, or started in another browser. */
  'invalid_state',
  /** The provider refused the code, or its tokens failed a check (signature, issuer, audience, nonce). */
  'invalid_response',
  /** The provider named no email address for the user. */
  'email_missing',
  /** The provider did not say the email address is verified (`email_verified` is not true). */
  'email_not_verified',
  /** No active user of the provider's institute has that email address. */
  'no_matching_user',
  /** Invigil itself failed (its database, say); trying again later may work. */
  'unavailable',
  /**
   * Too many failed sign-ins from this address (the throttle shared with password sign-in), or too
   * many sign-ins started from it: try again later. Nothing was checked.
   */
  'throttled',
] as const;
export type OidcFailureCode = (typeof OIDC_FAILURES)[number];

/**
 * Whether a failure counts as a failed sign-in of the client address in the sign-in throttle: every
 * refusal a client can cause does; the provider or Invigil being down does not (the client did
 * nothing wrong), nor does a throttled attempt (nothing was checked). Returns the answer.
 */
export function countsAsFailedSignIn(code: OidcFailureCode): boolean {
  return code !== 'provider_unavailable' && code !== 'unavailable' && code !== 'throttled';
}

/**
 * An OIDC sign-in that ends at the console's sign-in page. Not a DomainError: it is never an HTTP
 * error answer but a redirect, and `reason` (for the log) is never shown to the user.
 */
export class OidcSignInFailed extends Error {
  override name = 'OidcSignInFailed';
  readonly code: OidcFailureCode;
  readonly reason: string;
  /** The identity provider involved, when known (for the audit log). */
  readonly providerId: number | undefined;
  /** The email the provider named, when it named one (for the audit log). */
  readonly email: string | undefined;
  constructor(
    code: OidcFailureCode,
    reason: string,
    context: { providerId?: number | undefined; email?: string | undefined } = {},
  ) {
    super(`OIDC sign-in failed (${code}): ${reason}`);
    this.code = code;
    this.reason = reason;
    this.providerId = context.providerId;
    this.email = context.email;
  }
}

/**
 * The return address a start asked for, if it is a path on PUBLIC_URL: it starts with one `/`, is
 * visible ASCII without a backslash, and is at most 1000 characters. Anything else (another
 * origin, `//host`, a scheme) gives DEFAULT_RETURN_TO. Returns the path to store.
 */
export function safeReturnTo(value: unknown, publicUrl: string): string {
  if (typeof value !== 'string' || value.length > RETURN_TO_MAX) return DEFAULT_RETURN_TO;
  if (!value.startsWith('/') || value.startsWith('//')) return DEFAULT_RETURN_TO;
  // A backslash is a slash to browsers (`/\evil.example`). Only visible ASCII: anything else is
  // sent percent-encoded by a well-behaved caller, and could not go into a Location header as it is.
  if (/[^\x21-\x7e]|\\/.test(value)) return DEFAULT_RETURN_TO;
  const base = new URL(publicUrl);
  let resolved: URL;
  try {
    resolved = new URL(`${publicUrl}${value}`);
  } catch {
    return DEFAULT_RETURN_TO;
  }
  return resolved.origin === base.origin ? value : DEFAULT_RETURN_TO;
}

/** A random URL-safe value and its SHA-256 are used for state and the browser binding alike. */
export const BROWSER_KEY_PATTERN = /^[A-Za-z0-9_-]{43}$/;
