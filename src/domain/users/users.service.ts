import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/unique.ts';
import {
  decryptSecret,
  encryptSecret,
  hashToken,
  newCredentials,
  type ServerKeys,
} from '../../security/keys.ts';
import { type Actor, ROLES } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Invalid, NotFound, Taken } from '../errors.ts';
import { optionalEnum, type Params, requiredString } from '../input.ts';
import { findInstitute } from '../institutes/institutes.repository.ts';
import type { Credentials, User } from './user.ts';
import { findUser, findUserByTokenHash, insertUser, replaceCredentials } from './users.repository.ts';

export interface UsersService {
  /**
   * Creates a user in an institute from `email`, `name`, `role`. Returns the user with its one-time
   * credentials; throws NotFound (institute), ParamMissing, Invalid (role, email) or Taken (email).
   */
  create(instituteId: number, params: Params): Promise<{ user: User; credentials: Credentials }>;
  /** Issues new credentials, invalidating the old. Throws NotFound when there is no such user. */
  rotateCredentials(id: number): Promise<{ user: User; credentials: Credentials }>;
  /**
   * Looks up the active user holding `apiToken`. Returns the actor and its signing secret, or
   * undefined for an unknown token or a deactivated user.
   */
  authenticate(apiToken: string): Promise<{ actor: Actor; secretKey: string } | undefined>;
}

export function createUsersService(deps: { db: Db; clock: Clock; keys: ServerKeys }): UsersService {
  const { db, clock, keys } = deps;
  return {
    async create(instituteId, params) {
      const email = requiredString(params, 'email').trim();
      const name = requiredString(params, 'name');
      requiredString(params, 'role');
      const role = optionalEnum(params, 'role', ROLES);
      if (role === undefined) throw new Invalid('role', 'is not included in the list');
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new Invalid('email', 'is invalid');
      if ((await findInstitute(db, instituteId)) === undefined) throw new NotFound('Institute', instituteId);
      const credentials = newCredentials();
      try {
        const user = await insertUser(
          db,
          {
            instituteId,
            email,
            name,
            role,
            apiTokenHash: hashToken(credentials.apiToken),
            secretKeyEncrypted: encryptSecret(keys.encryption, credentials.secretKey),
          },
          clock.now(),
        );
        return { user, credentials };
      } catch (error) {
        if (isUniqueViolation(error)) throw new Taken('email');
        throw error;
      }
    },

    async rotateCredentials(id) {
      const credentials = newCredentials();
      const done = await replaceCredentials(
        db,
        id,
        hashToken(credentials.apiToken),
        encryptSecret(keys.encryption, credentials.secretKey),
        clock.now(),
      );
      const user = done ? await findUser(db, id) : undefined;
      if (user === undefined) throw new NotFound('User', id);
      return { user, credentials };
    },

    async authenticate(apiToken) {
      const found = await findUserByTokenHash(db, hashToken(apiToken));
      if (found === undefined || !found.user.active) return undefined;
      const { user } = found;
      return {
        actor: { id: user.id, instituteId: user.instituteId, role: user.role },
        secretKey: decryptSecret(keys.encryption, found.secretKeyEncrypted),
      };
    },
  };
}
