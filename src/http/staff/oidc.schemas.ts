import { OIDC_FAILURES } from '../../domain/staff-auth/oidc-sign-in.ts';
import { ADDRESS_STARTS_PER_WINDOW, START_WINDOW_MS } from '../../domain/staff-auth/sign-in-throttle.ts';

/**
 * Schemas of OpenID Connect staff sign-in (docs/staff-sign-in.md, "OpenID Connect"). They document
 * the routes in the OpenAPI document; the service checks every value itself.
 */

const failureCodes = OIDC_FAILURES.join(', ');
const throttling =
  ' A failure counts as a failed sign-in of the client address, in the throttle POST /auth/sign_in uses; ' +
  `while the address is blocked, and after ${ADDRESS_STARTS_PER_WINDOW} starts from it in ` +
  `${START_WINDOW_MS / 60_000} minutes, the redirect is to error=throttled and nothing is checked.`;

const redirect = (description: string, cookie?: string) =>
  ({
    description,
    type: 'null',
    headers: {
      Location: { type: 'string', description: 'Where the browser goes next' },
      ...(cookie === undefined ? {} : { 'Set-Cookie': { type: 'string', description: cookie } }),
    },
  }) as const;

export const listSignInProvidersSchema = {
  summary: 'The identity providers staff can sign in with (OpenID Connect)',
  description:
    'Public: for the sign-in page’s "Sign in with …" buttons. OpenID Connect providers of an institute with ' +
    'a complete sign-in configuration; SAML and global configurations are not listed. A button leads to ' +
    'GET /auth/oidc/{id}/start.',
  tags: ['staff sign-in'],
  response: {
    200: {
      description: 'The providers, by institute name and provider name',
      type: 'object',
      properties: {
        identity_providers: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              id: { type: 'integer' },
              name: { type: 'string' },
              institute_id: { type: 'integer' },
              institute_name: { type: 'string' },
            },
          },
        },
      },
    },
  },
} as const;

export const startOidcSchema = {
  summary: 'Start signing in with an OpenID Connect provider (a browser navigation, not a fetch)',
  description:
    'Redirects the browser to the provider (authorization code flow with PKCE S256, state and nonce) ' +
    'and sets a short-lived cookie binding the pending login to this browser. Every failure redirects ' +
    `to /console/sign-in?error=<code> (one of ${failureCodes}).${throttling}`,
  tags: ['staff sign-in'],
  querystring: {
    type: 'object',
    properties: {
      return_to: {
        type: 'string',
        description:
          'A path on this service to come back to after sign-in (default /console); anything else is ignored',
      },
    },
  },
  response: {
    302: redirect(
      "To the provider's authorization endpoint, or to /console/sign-in?error=<code>",
      'invigil_oidc: the browser binding of the pending login (10 minutes, HttpOnly, Path=/auth/oidc)',
    ),
  },
} as const;

export const oidcCallbackSchema = {
  summary: 'Where the OpenID Connect provider sends the browser back (the redirect URI)',
  description:
    'Checks the state (single use, unexpired, this browser), exchanges the code with PKCE, checks the ' +
    'nonce, requires email_verified true and an active user of the provider’s institute with that email, ' +
    'then opens a session as POST /auth/sign_in does and redirects to the start’s return_to. A user with a ' +
    'second factor is sent to /console/sign-in#pending_token=…&expires_at=…&return_to=… to give a code to ' +
    `POST /auth/sign_in/second_factor. Every failure redirects to /console/sign-in?error=<code> (one of ${failureCodes}).` +
    throttling,
  tags: ['staff sign-in'],
  querystring: {
    type: 'object',
    properties: {
      state: { type: 'string' },
      code: { type: 'string' },
      iss: { type: 'string' },
      error: { type: 'string' },
      error_description: { type: 'string' },
    },
  },
  response: {
    302: redirect(
      'To return_to (signed in), to the second-factor step, or to /console/sign-in?error=<code>',
      'invigil_session: the session cookie, as POST /auth/sign_in sets it (on success only)',
    ),
  },
} as const;
