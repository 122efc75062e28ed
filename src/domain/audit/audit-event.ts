import type { ListFields } from '../listing.ts';

/** One entry of the audit log (docs/audit-log.md). Times are epoch milliseconds. */
export interface AuditEvent {
  readonly id: number;
  /** Null for a failed sign-in naming no known account. */
  readonly instituteId: number | null;
  readonly userId: number | null;
  /** `sign_in`, `sign_in_failed`, `sign_out`, ... or `METHOD /api/v3/route/:template`. */
  readonly action: string;
  /** The email typed into a sign-in; null for everything else. */
  readonly email: string | null;
  readonly targetType: string | null;
  readonly targetId: number | null;
  readonly status: number;
  readonly ip: string | null;
  readonly userAgent: string | null;
  readonly createdAt: number;
}

/** An event to record (the id comes from the database). */
export type NewAuditEvent = Omit<AuditEvent, 'id'>;

/** The actions of staff sign-in; API writes are named by their method and route template instead. */
export type SignInAction =
  | 'sign_in'
  | 'sign_in_failed'
  | 'sign_out'
  | 'sign_out_everywhere'
  | 'password_changed'
  | 'api_credentials_issued'
  | 'second_factor_enabled'
  | 'second_factor_disabled'
  | 'recovery_codes_regenerated'
  | 'password_confirmation_failed'
  | 'api_secret_revealed'
  | 'api_credentials_rotated';

/** What a listing may filter and sort on. */
export const AUDIT_EVENT_LIST_FIELDS: ListFields = {
  id: { column: 'id', type: 'integer', notNull: true },
  institute_id: { column: 'institute_id', type: 'integer' },
  user_id: { column: 'user_id', type: 'integer' },
  action: { column: 'action', type: 'string', notNull: true },
  email: { column: 'email', type: 'string' },
  target_type: { column: 'target_type', type: 'string' },
  target_id: { column: 'target_id', type: 'integer' },
  status: { column: 'status', type: 'integer', notNull: true },
  ip: { column: 'ip', type: 'string' },
  created_at: { column: 'created_at', type: 'time', notNull: true },
};

/** Longest User-Agent kept: enough to tell browsers apart, too little to fill the table. */
export const USER_AGENT_MAX = 256;

/** Longest sign-in email kept (the longest valid address). */
export const EMAIL_MAX = 320;
