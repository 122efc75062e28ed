import {
  csrfHeaders,
  failure,
  jsonOnly,
  noContent,
  refused,
  sessionAnswer,
  throttled,
} from './sign-in.schemas.ts';

/**
 * Schemas of the second-factor routes (docs/staff-sign-in.md, "Second factor"). They document the
 * routes in the OpenAPI document; the service checks every value itself.
 */

const tags = ['staff sign-in'];
const noSession = failure('No live session, or X-CSRF-Token is missing or wrong');
const codeField = {
  type: 'string',
  maxLength: 100,
  description: 'The 6 digits of the authenticator app',
} as const;
const recoveryCodes = {
  type: 'object',
  properties: {
    recovery_codes: {
      type: 'array',
      items: { type: 'string' },
      description: 'Single-use codes for when the phone is lost; shown only now',
    },
  },
} as const;

export const secondStepSchema = {
  summary: 'Complete a sign-in with a second-factor code',
  description:
    'The second step of POST /auth/sign_in for a user with a second factor: a TOTP code or an unused ' +
    'recovery code. Opens the session as a sign-in without a second factor does.',
  tags,
  body: {
    type: 'object',
    properties: {
      pending_token: { type: 'string', maxLength: 200 },
      code: { type: 'string', maxLength: 100, description: 'A TOTP code or a recovery code' },
    },
    required: ['pending_token', 'code'],
  },
  response: {
    200: { description: 'Signed in; Set-Cookie carries the session', ...sessionAnswer },
    403: refused,
    415: jsonOnly,
    422: failure('pending_token or code is missing'),
    429: throttled,
  },
} as const;

export const startSecondFactorSchema = {
  summary: 'Start enrolling a second factor (TOTP)',
  description:
    'Answers a new secret, pending until confirmed with a code. Starting again replaces a pending secret.',
  tags,
  headers: csrfHeaders,
  response: {
    200: {
      description: 'The secret for the authenticator app',
      type: 'object',
      properties: {
        secret: { type: 'string', description: 'Base32 (RFC 4648)' },
        otpauth_uri: { type: 'string', description: 'For a QR code' },
      },
    },
    403: noSession,
    422: failure('The user already has a second factor'),
  },
} as const;

export const confirmSecondFactorSchema = {
  summary: 'Confirm enrolment with a code, enabling the second factor',
  tags,
  headers: csrfHeaders,
  body: { type: 'object', properties: { code: codeField }, required: ['code'] },
  response: {
    200: { description: 'Enabled', ...recoveryCodes },
    403: noSession,
    422: failure('The code is missing or wrong, or no enrolment was started'),
  },
} as const;

export const disableSecondFactorSchema = {
  summary: 'Remove the second factor (the password again)',
  tags,
  headers: csrfHeaders,
  body: {
    type: 'object',
    properties: { password: { type: 'string', maxLength: 1024 } },
    required: ['password'],
  },
  response: {
    204: noContent('Removed, with its recovery codes'),
    403: noSession,
    422: failure('The password is missing or wrong'),
    429: throttled,
  },
} as const;

export const recoveryCodesSchema = {
  summary: 'Replace the recovery codes (a TOTP code again)',
  tags,
  headers: csrfHeaders,
  body: { type: 'object', properties: { code: codeField }, required: ['code'] },
  response: {
    200: { description: 'The new codes; the old ones stop working', ...recoveryCodes },
    403: noSession,
    422: failure('The code is missing or wrong, or the user has no second factor'),
    429: throttled,
  },
} as const;
