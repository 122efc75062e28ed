import { commonErrors, errorBody, idParam, signedParams, time, v3Headers } from './common.schemas.ts';

/** Schemas of the webhook routes (docs/webhooks.md); the service checks every value itself. */

const webhookSecretRecord = {
  type: 'object',
  properties: {
    institute_id: { type: 'integer' },
    secret: {
      type: 'string',
      description:
        'whsec_ and 64 hex digits: the HMAC-SHA256 key of X-Invigil-Signature. Shown in this answer only',
    },
    created_at: time,
    replaced: {
      type: 'boolean',
      description: 'True when an earlier secret was replaced; it stopped working at once (no grace period)',
    },
  },
} as const;

export const rotateWebhookSecretSchema = {
  tags: ['institutes'],
  summary: "Generate or rotate the institute's webhook signing secret",
  description:
    "Generates a new secret for the signatures of the webhooks sent to the institute's `callback_url` " +
    '(header `X-Invigil-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`), replacing any earlier ' +
    'one at once, including for deliveries still being retried. The secret is stored encrypted and ' +
    "shown in this answer only. For the institute's administrators and superusers; 404 " +
    "`Couldn't find Institute with 'id'=ID` for a missing institute or another institute's.",
  headers: v3Headers,
  params: idParam(),
  body: { type: 'object', properties: { ...signedParams }, required: ['timestamp', 'nonce', 'signature'] },
  response: {
    200: { type: 'object', properties: { webhook_secret: webhookSecretRecord } },
    404: errorBody,
    ...commonErrors,
  },
} as const;
