import type { Db } from '../../db/database.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/unique.ts';
import {
  decryptSecret,
  encryptSecret,
  hashToken,
  newCredentials,
  type ServerKeys,
} from '../../security/keys.ts';
import { type Actor, canGrantRole, canManageUser, usersStanding } from '../access.ts';
import type { Clock } from '../clock.ts';
import { DependentExists, Forbidden, Invalid, NotFound, Taken } from '../errors.ts';
import { parseId } from '../ids.ts';
import type { Params } from '../input.ts';
import { findInstitute } from '../institutes/institutes.repository.ts';
import { type Page, parseListQuery } from '../listing.ts';
import {
  type Credentials,
  type NewUser,
  readNewUser,
  readUserChanges,
  UNKNOWN_IDENTITY_PROVIDER,
  USER_LIST_FIELDS,
  type User,
} from './user.ts';
import {
  anyUserExists,
  deleteUser,
  findUser,
  findStoredCredentials,
  findUserByTokenHash,
  insertUser,
  listUsers,
  replaceCredentials,
  updateUser,
} from './users.repository.ts';
import { findIdentityProvider } from '../identity-providers/identity-providers.repository.ts';
import { deleteStaffSessionsOfUser, resetSignInOfUser } from '../staff-auth/staff-auth.repository.ts';

/** How many decrypted signing secrets are kept in memory (one per active user). */
const SECRET_CACHE_SIZE = 10_000;

export interface UsersService {
  /**
   * Creates a user in an institute from `email`, `name`, `role` (and `identity_provider_id`), with
   * no access check: for the CLI and tests. Returns the user with its one-time credentials; throws
   * NotFound (institute), ParamMissing, Invalid (role, email, identity provider) or Taken (email).
   */
  create(instituteId: number, params: Params): Promise<{ user: User; credentials: Credentials }>;
  /** Issues new credentials, invalidating the old. Throws NotFound when there is no such user. */
  rotateCredentials(id: number): Promise<{ user: User; credentials: Credentials }>;
  /**
   * The user's current credentials, decrypted. A user created before migration 0020 has
   * no recoverable token: it is issued new credentials once, stored encrypted from then on. Returns
   * the user and its credentials; throws NotFound when there is no such user.
   */
  currentCredentials(id: number): Promise<{ user: User; credentials: Credentials }>;
  /** True when there is at least one user: false on a new installation. Throws only what the database throws. */
  anyExists(): Promise<boolean>;
  /**
   * Looks up the active user holding `apiToken`. Returns the actor and its signing secret, or
   * undefined for an unknown token or a deactivated user.
   */
  authenticate(apiToken: string): Promise<{ actor: Actor; secretKey: string } | undefined>;

  /**
   * Creates a user in the institute for its administrators and superusers. Returns the user with its
   * one-time credentials; throws NotFound (institute), Forbidden (caller, or a role it may not grant),
   * ParamMissing, Invalid or Taken.
   */
  createAs(
    actor: Actor,
    instituteId: string | number,
    params: Params,
  ): Promise<{ user: User; credentials: Credentials }>;
  /** One page of the institute's users. Throws NotFound (institute), Forbidden or Invalid. */
  list(actor: Actor, instituteId: string | number, params: Params): Promise<Page<User>>;
  /** The user `id` names within the institute. Throws NotFound (institute or user) or Forbidden. */
  get(actor: Actor, instituteId: string | number, id: string | number): Promise<User>;
  /**
   * Applies the sent changes (`active: false` deactivates: the user's signed requests are refused
   * until it is true again, and its browser sessions end for good). A changed email of another user
   * removes that user's password and ends its sessions, so only an invitation to the new address
   * signs it in again; an administrator may not change another administrator's (or a superuser's)
   * email. Returns the user; throws NotFound, Forbidden, ParamMissing, Invalid (including a caller
   * deactivating itself or changing its own role) or Taken.
   */
  update(actor: Actor, instituteId: string | number, id: string | number, params: Params): Promise<User>;
  /**
   * Destroys the user with its nonces and co-manager rows. Throws NotFound, Forbidden, or
   * DependentExists (the caller itself, or a user who owns exams).
   */
  destroy(actor: Actor, instituteId: string | number, id: string | number): Promise<void>;
}

const OWNS_EXAMS = 'Cannot delete record because dependent exams exist';

export function createUsersService(deps: { db: Db; clock: Clock; keys: ServerKeys }): UsersService {
  const { db, clock, keys } = deps;

  /** Throws Invalid unless `id` (when set) names the institute's own or a global identity provider. */
  async function checkIdentityProvider(instituteId: number, id: number | null | undefined): Promise<void> {
    if (id === undefined || id === null) return;
    const provider = await findIdentityProvider(db, id);
    if (provider === undefined || (provider.instituteId !== null && provider.instituteId !== instituteId)) {
      throw new Invalid('identity_provider_id', UNKNOWN_IDENTITY_PROVIDER);
    }
  }

  /** How credentials are kept: the token hashed (the lookup key) and, like the secret, encrypted. */
  function stored(credentials: Credentials): {
    apiTokenHash: string;
    apiTokenEncrypted: string;
    secretKeyEncrypted: string;
  } {
    return {
      apiTokenHash: hashToken(credentials.apiToken),
      apiTokenEncrypted: encryptSecret(keys.encryption, credentials.apiToken),
      secretKeyEncrypted: encryptSecret(keys.encryption, credentials.secretKey),
    };
  }

  async function insert(
    instituteId: number,
    user: NewUser,
  ): Promise<{ user: User; credentials: Credentials }> {
    const credentials = newCredentials();
    try {
      const saved = await insertUser(
        db,
        {
          instituteId,
          ...user,
          ...stored(credentials),
        },
        clock.now(),
      );
      return { user: saved, credentials };
    } catch (error) {
      if (isUniqueViolation(error)) throw new Taken('email');
      throw error;
    }
  }

  /**
   * The institute of a `/institutes/:institute_id/users` path, when the actor may `need` its users.
   * Another institute answers as if it did not exist.
   */
  async function usersOf(
    actor: Actor,
    instituteId: string | number,
    need: 'read' | 'manage',
  ): Promise<number> {
    const numeric = parseId(instituteId);
    const standing = numeric === undefined ? 'hidden' : usersStanding(actor, numeric);
    if (numeric === undefined || standing === 'hidden') throw new NotFound('Institute', instituteId);
    if ((await findInstitute(db, numeric)) === undefined) throw new NotFound('Institute', instituteId);
    if (standing === 'forbidden' || (need === 'manage' && standing !== 'manage')) throw new Forbidden();
    return numeric;
  }

  /** The user `id` names, when it belongs to the institute; NotFound otherwise. */
  async function memberOf(instituteId: number, id: string | number): Promise<User> {
    const numeric = parseId(id);
    const user = numeric === undefined ? undefined : await findUser(db, numeric);
    if (user === undefined || user.instituteId !== instituteId) throw new NotFound('User', id);
    return user;
  }

  /** A user the actor may change: only whoever could grant its role (a superuser's account is a superuser's). */
  async function changeableMember(
    actor: Actor,
    instituteId: string | number,
    id: string | number,
  ): Promise<User> {
    const institute = await usersOf(actor, instituteId, 'manage');
    const user = await memberOf(institute, id);
    if (!canManageUser(actor, user)) throw new Forbidden();
    return user;
  }

  // Decrypting a secret on every signed request costs more than the rest of the signature check.
  // Entries are keyed by the ciphertext, which rotation replaces, so a stale entry is never found.
  const secrets = new Map<string, string>();
  function secretOf(encrypted: string): string {
    const cached = secrets.get(encrypted);
    if (cached !== undefined) return cached;
    const secret = decryptSecret(keys.encryption, encrypted);
    if (secrets.size >= SECRET_CACHE_SIZE) {
      const oldest = secrets.keys().next().value;
      if (oldest !== undefined) secrets.delete(oldest);
    }
    secrets.set(encrypted, secret);
    return secret;
  }

  async function currentCredentials(id: number): Promise<{ user: User; credentials: Credentials }> {
    const user = await findUser(db, id);
    const found = user === undefined ? undefined : await findStoredCredentials(db, id);
    if (user === undefined || found === undefined) throw new NotFound('User', id);
    if (found.apiTokenEncrypted !== null) {
      const apiToken = decryptSecret(keys.encryption, found.apiTokenEncrypted);
      return { user, credentials: { apiToken, secretKey: secretOf(found.secretKeyEncrypted) } };
    }
    // Created before 0020: the token was kept only as a hash, so a new set is issued once.
    const credentials = newCredentials();
    if (await replaceCredentials(db, id, stored(credentials), clock.now(), true))
      return { user, credentials };
    // Another first sign-in stored its set meanwhile: answer that one.
    return currentCredentials(id);
  }

  return {
    async create(instituteId, params) {
      const user = readNewUser(params);
      if ((await findInstitute(db, instituteId)) === undefined) throw new NotFound('Institute', instituteId);
      await checkIdentityProvider(instituteId, user.identityProviderId);
      return insert(instituteId, user);
    },

    async rotateCredentials(id) {
      const credentials = newCredentials();
      const done = await replaceCredentials(db, id, stored(credentials), clock.now());
      const user = done ? await findUser(db, id) : undefined;
      if (user === undefined) throw new NotFound('User', id);
      return { user, credentials };
    },

    currentCredentials,

    anyExists: () => anyUserExists(db),

    async authenticate(apiToken) {
      const found = await findUserByTokenHash(db, hashToken(apiToken));
      if (found === undefined || !found.user.active) return undefined;
      const { user } = found;
      return {
        actor: { id: user.id, instituteId: user.instituteId, role: user.role },
        secretKey: secretOf(found.secretKeyEncrypted),
      };
    },

    async createAs(actor, instituteId, params) {
      const institute = await usersOf(actor, instituteId, 'manage');
      const user = readNewUser(params);
      if (!canGrantRole(actor, user.role)) throw new Forbidden();
      await checkIdentityProvider(institute, user.identityProviderId);
      return insert(institute, user);
    },

    async list(actor, instituteId, params) {
      const institute = await usersOf(actor, instituteId, 'read');
      return listUsers(db, institute, parseListQuery(params, USER_LIST_FIELDS));
    },

    async get(actor, instituteId, id) {
      return memberOf(await usersOf(actor, instituteId, 'read'), id);
    },

    async update(actor, instituteId, id, params) {
      const user = await changeableMember(actor, instituteId, id);
      const changes = readUserChanges(params, 'update');
      if (changes.role !== undefined && !canGrantRole(actor, changes.role)) throw new Forbidden();
      if (user.id === actor.id) {
        // Locking oneself out is refused: another administrator or a superuser must do it.
        if (changes.active === false) throw new Invalid('active', 'cannot be false for the calling user');
        if (changes.role !== undefined && changes.role !== user.role) {
          throw new Invalid('role', 'cannot be changed by the calling user');
        }
      }
      await checkIdentityProvider(user.instituteId, changes.identityProviderId);
      // Someone else's email is how that account is reached (invitations, password resets), so a
      // change of it must not hand the account over (docs/staff-sign-in.md, "Changing a colleague's email").
      const emailChanged =
        user.id !== actor.id &&
        changes.email !== undefined &&
        changes.email.toLowerCase() !== user.email.toLowerCase();
      if (
        emailChanged &&
        actor.role === 'administrator' &&
        (user.role === 'administrator' || user.role === 'superuser')
      ) {
        throw new Forbidden("an administrator may not change another administrator's email");
      }
      let saved: User | undefined;
      try {
        const now = clock.now();
        saved = await db.transaction().execute(async (trx) => {
          const updated = await updateUser(trx, user.id, changes, now);
          if (updated !== undefined && emailChanged) await resetSignInOfUser(trx, user.id, now);
          return updated;
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw new Taken('email');
        throw error;
      }
      if (saved === undefined) throw new NotFound('User', id);
      // A deactivated user's browser sessions end now, not at their expiry (docs/staff-sign-in.md).
      if (!saved.active) await deleteStaffSessionsOfUser(db, saved.id);
      return saved;
    },

    async destroy(actor, instituteId, id) {
      const user = await changeableMember(actor, instituteId, id);
      if (user.id === actor.id) throw new DependentExists('Cannot delete the calling user');
      let outcome: Awaited<ReturnType<typeof deleteUser>>;
      try {
        outcome = await db.transaction().execute((trx) => deleteUser(trx, user.id));
      } catch (error) {
        if (isForeignKeyViolation(error)) throw new DependentExists(OWNS_EXAMS);
        throw error;
      }
      if (outcome === 'owns_exams') throw new DependentExists(OWNS_EXAMS);
      if (outcome === 'missing') throw new NotFound('User', id);
    },
  };
}
