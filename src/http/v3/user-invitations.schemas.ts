import { commonErrors, errorBody, signedParams, time, v3Headers } from './common.schemas.ts';
import { pathIds } from './documents.schemas.ts';

/**
 * Schema of `POST /institutes/:institute_id/users/:id/invite` (docs/api-v3-institutes-users.md,
 * "Invitations"). It documents the route in the OpenAPI document; the service checks every value.
 */
export const inviteUserSchema = {
  tags: ['users'],
  summary: 'Invite a user to choose a password (emails a one-time link)',
  description:
    'Queues the invitation email exactly as `invigil user invite` does: a new link to ' +
    '{PUBLIC_URL}/console/accept-invitation, valid 7 days. The answer carries the link only when the ' +
    'service has no SMTP_URL (the email is then held, so the administrator passes the link on) and the ' +
    'user has no password yet; otherwise invitation_url is null and the email carries it. Only a ' +
    'superuser invites a superuser (403); a deactivated user: 422.',
  headers: v3Headers,
  params: pathIds('institute_id', 'id'),
  body: { type: 'object', properties: { ...signedParams }, required: ['timestamp', 'nonce', 'signature'] },
  response: {
    200: {
      description: 'The invitation email is queued',
      type: 'object',
      properties: {
        invitation: {
          type: 'object',
          properties: {
            user_id: { type: 'integer' },
            invitation_url: {
              type: ['string', 'null'],
              description: 'The one-time link, only without SMTP and for a user with no password yet',
            },
            expires_at: { ...time, description: 'When the link stops working' },
          },
        },
      },
    },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;
