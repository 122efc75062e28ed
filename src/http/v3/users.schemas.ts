import {
  commonErrors,
  destroyRouteSchema,
  errorBody,
  flag,
  listRouteSchema,
  nullableInteger,
  nullableTime,
  showRouteSchema,
  signedParams,
  updateRouteSchema,
  v3Headers,
} from './common.schemas.ts';
import { pathIds } from './documents.schemas.ts';

const ROLE_VALUES = [
  'superuser',
  'administrator',
  'teacher',
  'proctor',
  'reviewer',
  'auditor',
  'global_proctor',
  'global_reviewer',
] as const;

export const userRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    institute_id: { type: 'integer' },
    institute_name: { type: 'string', description: "The name of the user's institute" },
    logo_image: {
      type: ['string', 'null'],
      description: "The address of the institute's logo; always null (institutes have no logo yet)",
    },
    email: { type: 'string', description: 'Unique across every institute' },
    name: { type: 'string' },
    role: { type: 'string', enum: ROLE_VALUES },
    identity_provider_id: nullableInteger,
    active: { ...flag, description: 'False: the user is deactivated and its signed requests are refused' },
    created_at: nullableTime,
    updated_at: nullableTime,
  },
} as const;

/** The create answer alone carries the credentials; they are never shown again. */
const createdUserRecord = {
  type: 'object',
  properties: {
    ...userRecord.properties,
    api_token: { type: 'string', description: 'Shown once' },
    secret_key: { type: 'string', description: 'Shown once; the HMAC key for signing' },
  },
} as const;

const userInput = {
  type: 'object',
  properties: {
    ...signedParams,
    email: { type: 'string', minLength: 1 },
    name: { type: 'string', minLength: 1 },
    role: userRecord.properties.role,
    identity_provider_id: {
      type: ['integer', 'null'],
      description: 'An identity provider of the institute, or a global one; null clears it',
    },
  },
} as const;

const tags = ['users'];
const one = { type: 'object', properties: { user: userRecord } } as const;

export const listUsersSchema = listRouteSchema(
  {
    tags,
    summary: "List an institute's users (its administrators and superusers)",
    description:
      'Filter/sort fields: id, email, name, role, identity_provider_id, active, created_at, updated_at. ' +
      'Deactivated users are listed too (filter on active to leave them out).',
  },
  'users',
  userRecord,
  pathIds('institute_id'),
);

export const showUserSchema = showRouteSchema(
  { tags, summary: 'Show a user' },
  one,
  pathIds('institute_id', 'id'),
);

export const createUserSchema = {
  tags,
  summary: 'Create a user; the answer alone carries its api_token and secret_key',
  description: 'Only a superuser may create a superuser (403 otherwise).',
  headers: v3Headers,
  params: pathIds('institute_id'),
  body: { ...userInput, required: ['email', 'name', 'role', 'timestamp', 'nonce', 'signature'] },
  response: {
    201: { type: 'object', properties: { user: createdUserRecord } },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;

export const updateUserSchema = updateRouteSchema(
  {
    tags,
    summary: 'Update, deactivate or reactivate a user',
    description:
      'active: false deactivates (its signed requests answer 403), true reactivates. A caller may not ' +
      'deactivate itself or change its own role (422). Only a superuser grants or changes a superuser (403).',
  },
  one,
  {
    ...userInput,
    properties: { ...userInput.properties, active: { type: 'boolean' } },
  },
  pathIds('institute_id', 'id'),
);

export const destroyUserSchema = destroyRouteSchema(
  {
    tags,
    summary: 'Destroy a user',
    description:
      'Its nonces and co-manager rows go with it. A user who owns exams (any status): 422 ' +
      '`Cannot delete record because dependent exams exist`; deactivate it instead. A caller may not destroy itself (422).',
  },
  { params: pathIds('institute_id', 'id'), refusable: true },
);
