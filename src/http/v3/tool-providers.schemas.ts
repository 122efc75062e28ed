import {
  commonErrors,
  emptyObject,
  errorBody,
  flag,
  idParam,
  listRouteSchema,
  nullableString,
  nullableTime,
  showRouteSchema,
  signedParams,
  signedQuery,
  updateRouteSchema,
  v3Headers,
} from './common.schemas.ts';

export const toolProviderRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    institute_id: { type: 'integer' },
    name: { type: 'string' },
    lti_version: { type: 'string', enum: ['1.1', '1.3'] },
    consumer_key: { ...nullableString, description: 'LTI 1.1; null for 1.3' },
    has_shared_secret: { ...flag, description: 'LTI 1.1: a shared secret is stored (it is never returned)' },
    issuer: { ...nullableString, description: 'LTI 1.3; null for 1.1' },
    client_id: { ...nullableString, description: 'LTI 1.3; null for 1.1' },
    deployment_id: { ...nullableString, description: 'LTI 1.3; null for 1.1' },
    auth_login_url: { ...nullableString, description: 'LTI 1.3 OIDC login initiation URL' },
    auth_token_url: { ...nullableString, description: 'LTI 1.3 OAuth2 token URL' },
    jwks_url: { ...nullableString, description: "LTI 1.3 platform's JWKS URL" },
    created_at: nullableTime,
    updated_at: nullableTime,
  },
} as const;

const toolProviderInput = {
  type: 'object',
  properties: {
    ...signedParams,
    institute_id: {
      type: 'integer',
      description: "Superusers only; default the caller's institute (create)",
    },
    name: { type: 'string' },
    lti_version: { type: 'string', enum: ['1.1', '1.3'] },
    consumer_key: { type: 'string', description: 'LTI 1.1, required; unique' },
    shared_secret: {
      type: 'string',
      description: 'LTI 1.1, required on create; write-only, stored encrypted',
    },
    issuer: { type: 'string', description: 'LTI 1.3, required' },
    client_id: {
      type: 'string',
      description: 'LTI 1.3, required; (issuer, client_id, deployment_id) unique',
    },
    deployment_id: { type: 'string', description: 'LTI 1.3, optional' },
    auth_login_url: { type: 'string', format: 'uri', description: 'LTI 1.3, required, http(s)' },
    auth_token_url: { type: 'string', format: 'uri', description: 'LTI 1.3, required, http(s)' },
    jwks_url: { type: 'string', format: 'uri', description: 'LTI 1.3, required, http(s)' },
  },
} as const;

const tags = ['tool providers'];
const one = { type: 'object', properties: { tool_provider: toolProviderRecord } } as const;

export const listToolProvidersSchema = listRouteSchema(
  {
    tags,
    summary: 'List tool providers',
    description:
      "The caller's institute's (a superuser: every institute's). Administrators, teachers and auditors. " +
      'Filter/sort fields: id, institute_id, name, lti_version, consumer_key, issuer, client_id, deployment_id, ' +
      'created_at, updated_at.',
  },
  'tool_providers',
  toolProviderRecord,
);

export const showToolProviderSchema = showRouteSchema(
  { tags, summary: 'Show a tool provider (also at the singular path /tool_provider/:id)' },
  one,
);

export const createToolProviderSchema = {
  tags,
  summary: 'Create a tool provider (administrators)',
  headers: v3Headers,
  body: { ...toolProviderInput, required: ['name', 'lti_version', 'timestamp', 'nonce', 'signature'] },
  response: { 201: one, 404: errorBody, 422: errorBody, ...commonErrors },
} as const;

export const updateToolProviderSchema = updateRouteSchema(
  { tags, summary: 'Update a tool provider (administrators); fields of the other LTI version are cleared' },
  one,
  toolProviderInput,
);

export const destroyToolProviderSchema = {
  tags,
  summary: 'Destroy a tool provider with its LTI resources; refused while one is linked to an exam',
  headers: v3Headers,
  params: idParam(),
  querystring: signedQuery,
  response: {
    200: emptyObject,
    404: errorBody,
    422: { description: 'Cannot delete record because dependent lti resources exist', ...errorBody },
    ...commonErrors,
  },
} as const;
