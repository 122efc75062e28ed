import { csrfHeaders, failure, noContent, throttled } from './sign-in.schemas.ts';

/**
 * Schemas of "my account" (docs/staff-sign-in.md, "My account"): a signed-in user's own password
 * and API credentials. They document the routes in the OpenAPI document; the service checks every
 * value itself.
 */

const tags = ['my account'];
const noSession = failure(
  'No live session, X-CSRF-Token missing or wrong, or a session limited to enrolling a second factor',
);
const passwordBody = {
  type: 'object',
  properties: { password: { type: 'string', maxLength: 1024, description: 'The current password, again' } },
  required: ['password'],
} as const;
const wrongPassword = failure(
  "The password is missing or not correct (`'password':['is not correct']`, whatever the reason)",
);

export const changePasswordSchema = {
  summary: 'Change my password (the current one again)',
  description:
    'Sets the new password and ends every other session of the user (this one stays signed in), its ' +
    'pending second-factor steps and its unused invitation and reset links. A wrong current password ' +
    'counts as a failed sign-in in the throttle.',
  tags,
  headers: csrfHeaders,
  body: {
    type: 'object',
    properties: {
      current_password: { type: 'string', maxLength: 1024 },
      new_password: { type: 'string', minLength: 12, maxLength: 1024 },
    },
    required: ['current_password', 'new_password'],
  },
  response: {
    204: noContent('Changed; the other sessions ended'),
    403: noSession,
    422: failure(
      "A field is missing, the new password is too short or too long, or `'current_password':['is not correct']`",
    ),
    429: throttled,
  },
} as const;

export const apiCredentialsSchema = {
  summary: 'My API credentials: what can be shown',
  description:
    'The console never shows the API token again after it was issued (api_token is always null here): ' +
    'rotate the credentials to get a new one. The secret key can be revealed with the password.',
  tags,
  response: {
    200: {
      description: 'What the user can do',
      type: 'object',
      properties: {
        api_token: {
          type: 'null',
          description:
            'Always null: the token is shown once, when issued (POST /auth/api_credentials/rotate)',
        },
        secret_key_revealable: {
          type: 'boolean',
          description:
            'True when the user has a password, which revealing the secret and rotating both ask for again',
        },
      },
    },
    403: noSession,
  },
} as const;

export const revealSecretKeySchema = {
  summary: 'Reveal my API secret key (the password again)',
  description: 'Throttled like a sign-in and recorded in the audit log.',
  tags,
  headers: csrfHeaders,
  body: passwordBody,
  response: {
    200: {
      description: 'The current secret key (the HMAC key for signing)',
      type: 'object',
      properties: { secret_key: { type: 'string' } },
    },
    403: noSession,
    422: wrongPassword,
    429: throttled,
  },
} as const;

export const rotateCredentialsSchema = {
  summary: 'Issue me new API credentials (the password again)',
  description:
    'The previous api_token and secret_key stop working at once; the new ones are shown only in this ' +
    'answer. Throttled like a sign-in and recorded in the audit log.',
  tags,
  headers: csrfHeaders,
  body: passwordBody,
  response: {
    200: {
      description: 'The new credentials, shown once',
      type: 'object',
      properties: { api_token: { type: 'string' }, secret_key: { type: 'string' } },
    },
    403: noSession,
    422: wrongPassword,
    429: throttled,
  },
} as const;

export const languageSchema = {
  summary: 'Set the console language of the signed-in user',
  description:
    'The console shows itself in this language on every browser the user signs in with; null clears ' +
    'the choice, and the console follows the browser’s languages again. Staff emails (invitations, ' +
    'password resets) use it too.',
  tags,
  headers: csrfHeaders,
  body: {
    type: 'object',
    properties: {
      language: {
        type: ['string', 'null'],
        maxLength: 64,
        description: 'A supported language (en, nl, de, fr, es, it, ar), or null',
      },
    },
    required: ['language'],
  },
  response: {
    200: {
      description: 'Saved',
      type: 'object',
      properties: { language: { type: ['string', 'null'] } },
      required: ['language'],
    },
    403: noSession,
    422: failure("`'language':['is not a valid language tag']` or `['is not included in the list']`"),
  },
} as const;
