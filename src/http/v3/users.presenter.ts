import type { Db } from '../../db/database.ts';
import { findInstitute } from '../../domain/institutes/institutes.repository.ts';
import type { Credentials, User } from '../../domain/users/user.ts';
import { isoTime } from '../time.ts';

/** What a user record says about the user's institute (clients of the original service read it). */
export interface UserInstitute {
  readonly name: string;
  /** The address of the institute's logo; institutes have no logo in Invigil yet, so always null. */
  readonly logoImage: string | null;
}

/**
 * Looks up the institutes of user records, each at most once per call of the returned function.
 * A user's own institute name is part of every user record, so no access rule applies here. Returns
 * the lookup; it throws when the institute is gone (a user cannot outlive its institute).
 */
export function userInstitutes(db: Db): (instituteId: number) => Promise<UserInstitute> {
  const seen = new Map<number, Promise<UserInstitute>>();
  return (instituteId) => {
    let found = seen.get(instituteId);
    if (found === undefined) {
      found = findInstitute(db, instituteId).then((institute) => {
        if (institute === undefined) throw new Error(`institute ${instituteId} of a user is missing`);
        return { name: institute.name, logoImage: null };
      });
      seen.set(instituteId, found);
    }
    return found;
  };
}

/**
 * The V3 user record (contract §6, plus `active`, and `institute_name` and `logo_image` as the
 * original service's clients read them); `api_token` and `secret_key` only where they were just
 * issued (the create answer, the CLI). Returns it as a plain object.
 */
export function presentUserV3(
  user: User,
  institute: UserInstitute,
  credentials?: Credentials,
): Record<string, unknown> {
  const record: Record<string, unknown> = {
    id: user.id,
    institute_id: user.instituteId,
    institute_name: institute.name,
    logo_image: institute.logoImage,
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
