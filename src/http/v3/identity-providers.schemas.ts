import {
  commonErrors,
  errorBody,
  listQuery,
  nullableInteger,
  nullableTime,
  paginationHeaders,
  v3Headers,
} from './common.schemas.ts';

export const identityProviderRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    protocol: { type: 'string', enum: ['saml', 'oidc'] },
    institute_id: {
      ...nullableInteger,
      description: 'null: a global configuration, offered to every institute',
    },
    created_at: nullableTime,
  },
} as const;

export const listIdentityProvidersSchema = {
  tags: ['identity providers'],
  summary: 'List identity provider configurations (read-only; added with the CLI `invigil idp create`)',
  description:
    "The caller's institute's and the global ones (a superuser: every one); any role. Metadata is never " +
    'returned. Filter/sort fields: id, name, protocol, institute_id, created_at.',
  headers: v3Headers,
  querystring: listQuery,
  response: {
    200: {
      headers: paginationHeaders,
      type: 'object',
      properties: { identity_providers: { type: 'array', items: identityProviderRecord } },
    },
    422: errorBody,
    ...commonErrors,
  },
} as const;
