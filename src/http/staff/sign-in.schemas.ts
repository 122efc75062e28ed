import { errorBody } from '../v3/common.schemas.ts';

/**
 * Schemas of the staff sign-in routes (docs/staff-sign-in.md). They document the routes in the
 * OpenAPI document; the service checks every value itself.
 */

export const failure = (description: string) => ({ description, ...errorBody }) as const;

const signedInUser = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    institute_id: { type: 'integer' },
    email: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string' },
    language: {
      type: ['string', 'null'],
      description: 'The console language the user picked (PUT /auth/language), or null to follow the browser',
    },
  },
  required: ['id', 'institute_id', 'email', 'name', 'role', 'language'],
} as const;

export const sessionAnswer = {
  type: 'object',
  properties: {
    user: signedInUser,
    csrf_token: {
      type: 'string',
      description: 'Send it as X-CSRF-Token on every request that is not GET or HEAD',
    },
    idle_expires_at: {
      type: 'string',
      format: 'date-time',
      description: 'The session ends then unless used',
    },
    expires_at: { type: 'string', format: 'date-time', description: 'The session ends then regardless' },
    second_factor_enabled: { type: 'boolean', description: 'The user has a second factor (TOTP)' },
    second_factor_enrolment_required: {
      type: 'boolean',
      description:
        'The institute requires a second factor of administrators and this one has none: until it is ' +
        'enrolled, the session may only enrol it (its /api/v3 calls answer 403)',
    },
    institute_name: {
      type: 'string',
      description: "GET /auth/session only: the name of the user's institute, for the console's header",
    },
  },
  required: [
    'user',
    'csrf_token',
    'idle_expires_at',
    'expires_at',
    'second_factor_enabled',
    'second_factor_enrolment_required',
  ],
} as const;

const passwordField = { type: 'string', minLength: 12, maxLength: 1024 } as const;

export const jsonOnly = failure('The body is not application/json (cross-site forms are refused)');
export const refused = failure(
  'Refused: a cross-origin request, or (sign-in) a wrong email or password, said alike',
);
export const throttled = {
  ...failure('Too many failed sign-ins for this account or address'),
  headers: { 'Retry-After': { type: 'integer', description: 'Seconds' } },
} as const;
export const noContent = (description: string) => ({ description, type: 'null' }) as const;
export const csrfHeaders = {
  type: 'object',
  properties: {
    'x-csrf-token': { type: 'string', description: 'The csrf_token of the session' },
  },
} as const;

export const signInSchema = {
  summary: 'Sign in with email and password',
  description: 'Opens a new session (always a new one) and sets the HttpOnly session cookie.',
  tags: ['staff sign-in'],
  body: {
    type: 'object',
    properties: { email: { type: 'string' }, password: { type: 'string', maxLength: 1024 } },
    required: ['email', 'password'],
  },
  response: {
    200: { description: 'Signed in; Set-Cookie carries the session', ...sessionAnswer },
    202: {
      description:
        'The password was right and the user has a second factor: no session yet. Send a code with ' +
        'pending_token to POST /auth/sign_in/second_factor within 5 minutes',
      type: 'object',
      properties: {
        second_factor_required: { type: 'boolean' },
        pending_token: { type: 'string' },
        expires_at: { type: 'string', format: 'date-time' },
      },
    },
    403: refused,
    415: jsonOnly,
    429: throttled,
  },
} as const;

export const sessionSchema = {
  summary: 'The signed-in user and the session’s CSRF token',
  tags: ['staff sign-in'],
  response: {
    200: { description: 'The session of the cookie', ...sessionAnswer },
    403: failure('No live session (none, signed out, expired, or the user was deactivated)'),
  },
} as const;

export const signOutSchema = {
  summary: 'Sign out this browser',
  tags: ['staff sign-in'],
  headers: csrfHeaders,
  response: {
    204: noContent('Signed out (also when there was no session); the cookie is removed'),
    403: failure('The session is live but X-CSRF-Token is missing or wrong'),
  },
} as const;

export const signOutEverywhereSchema = {
  summary: 'End every session of the signed-in user',
  tags: ['staff sign-in'],
  headers: csrfHeaders,
  response: {
    204: noContent('Every session of the user ended; the cookie is removed'),
    403: failure('No live session, or X-CSRF-Token is missing or wrong'),
  },
} as const;

export const forgotPasswordSchema = {
  summary: 'Ask for a password-reset email',
  description: 'Answers the same whether or not the email names an active user.',
  tags: ['staff sign-in'],
  body: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
  response: {
    202: {
      description: 'Noted; an email is on its way if the address names an active user',
      type: 'object',
      properties: { message: { type: 'string' } },
    },
    403: refused,
    415: jsonOnly,
    422: failure('email is missing'),
  },
} as const;

const redeemBody = {
  type: 'object',
  properties: {
    token: { type: 'string', description: 'The token of the emailed link' },
    password: passwordField,
  },
  required: ['token', 'password'],
} as const;

export const resetPasswordSchema = {
  summary: 'Choose a new password with a reset link’s token',
  description: 'The token works once; every session of the user ends. Sign in afterwards.',
  tags: ['staff sign-in'],
  body: redeemBody,
  response: {
    204: noContent('Password set'),
    403: refused,
    415: jsonOnly,
    422: failure('token unknown, used or expired; or password too short or too long'),
  },
} as const;

export const acceptInvitationSchema = {
  ...resetPasswordSchema,
  summary: 'Choose a first password with an invitation link’s token',
} as const;

export const compatSignInSchema = {
  summary: 'Compat: sign in for API credentials (the original service’s Go client)',
  description:
    'Checks email and password like /auth/sign_in, then answers the user’s existing api_token and ' +
    'secret_key; signing in again changes nothing (rotation is POST /auth/api_credentials/rotate). A user ' +
    'created before migration 0020 has no recoverable token: its first sign-in here issues new credentials once.',
  tags: ['staff sign-in'],
  body: {
    type: 'object',
    properties: {
      user: {
        type: 'object',
        properties: { email: { type: 'string' }, password: { type: 'string', maxLength: 1024 } },
        required: ['email', 'password'],
      },
    },
    required: ['user'],
  },
  response: {
    200: {
      description: 'The user’s current credentials',
      type: 'object',
      properties: {
        id: { type: 'integer' },
        email: { type: 'string' },
        api_token: { type: 'string' },
        secret_key: { type: 'string' },
      },
    },
    403: refused,
    415: jsonOnly,
    429: throttled,
  },
} as const;
