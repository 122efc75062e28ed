import { listRouteSchema, nullableInteger, nullableString, time } from './common.schemas.ts';

export const auditEventRecord = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    institute_id: { ...nullableInteger, description: 'Null for a failed sign-in naming no known account' },
    user_id: {
      ...nullableInteger,
      description: 'Who acted; null for a failed sign-in naming no known account',
    },
    action: {
      type: 'string',
      description:
        'sign_in, sign_in_failed, sign_out, sign_out_everywhere, password_changed, ' +
        'api_credentials_issued, second_factor_enabled, second_factor_disabled, ' +
        'recovery_codes_regenerated, password_confirmation_failed, api_secret_revealed, ' +
        'api_credentials_rotated, or the method and route template of an API write ' +
        '(`POST /api/v3/exams`)',
    },
    email: { ...nullableString, description: 'The email typed into a sign-in; null for API writes' },
    target_type: { ...nullableString, description: 'The collection of the record the route names' },
    target_id: { ...nullableInteger, description: 'The id of the record the route names' },
    status: { type: 'integer', description: 'The HTTP status answered' },
    ip: { ...nullableString, description: 'The client address of the connection' },
    user_agent: { ...nullableString, description: 'The User-Agent header, cut to 256 characters' },
    created_at: time,
  },
} as const;

export const listAuditEventsSchema = listRouteSchema(
  {
    tags: ['audit'],
    summary: "List audit events: sign-ins and staff writes (an administrator's institute; superusers all)",
    description:
      'Filter/sort fields: id, institute_id, user_id, action, email, target_type, target_id, status, ip, ' +
      'created_at. Without a sort, the newest event comes first. Other roles are refused (403).',
  },
  'audit_events',
  auditEventRecord,
);
