import type { Credentials, User } from '../../domain/users/user.ts';
import { isoTime } from '../time.ts';

/**
 * The V3 user record (contract §6, plus `active`); `api_token` and `secret_key` only where they were
 * just issued (the create answer, the CLI).
 */
export function presentUserV3(user: User, credentials?: Credentials): Record<string, unknown> {
  const record: Record<string, unknown> = {
    id: user.id,
    institute_id: user.instituteId,
    email: user.email,
    name: user.name,
    role: user.role,
    identity_provider_id: user.identityProviderId,
    active: user.active,
    created_at: isoTime(user.createdAt),
    updated_at: isoTime(user.updatedAt),
  };
  if (credentials !== undefined) {
    record.api_token = credentials.apiToken;
    record.secret_key = credentials.secretKey;
  }
  return record;
}
