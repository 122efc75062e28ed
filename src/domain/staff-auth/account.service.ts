import type { Db } from '../../db/database.ts';
import { decryptSecret, hashToken, type ServerKeys } from '../../security/keys.ts';
import { hashPassword, passwordProblem } from '../../security/passwords.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Invalid, NotFound } from '../errors.ts';
import type { Params } from '../input.ts';
import { has } from '../input.ts';
import { readLanguage } from '../languages.ts';
import type { Credentials } from '../users/user.ts';
import type { UsersService } from '../users/users.service.ts';
import { deleteOtherStaffSessions, findApiSecret, writeUserLanguage } from './account.repository.ts';
import { deleteChallengesOfUser } from './second-factor.ts';
import { spendOneTimeLinksOfUser, writePasswordHash } from './staff-auth.repository.ts';
import type { ClientInfo, StaffAuthService } from './staff-auth.service.ts';

/**
 * "My account" (docs/staff-sign-in.md, "My account"): a signed-in user changes its own password and
 * reaches its own API credentials. Every change asks for the password again, under the sign-in
 * throttle, so a browser left open is not enough to take the account or its API access.
 */
export interface AccountService {
  /**
   * Sets a new password after checking the current one, and ends every other session of the user
   * (the one of `sessionToken` stays), its pending second steps and its unused one-time links.
   * Throws Invalid (`new_password`: too short or too long; `current_password`: not correct),
   * SignInThrottled, or NotFound for a user gone meanwhile.
   */
  changePassword(
    actor: Actor,
    sessionToken: string,
    passwords: { readonly current: string; readonly next: string },
    client: ClientInfo,
  ): Promise<void>;
  /**
   * What the user may do with its API credentials: the console never shows the token again (only
   * the compat sign-in answers it); the secret can be revealed, and both rotated, with the password
   * (so only by a user who has one). Returns that; throws NotFound for a user gone meanwhile.
   */
  credentials(actor: Actor): Promise<{ readonly secretKeyRevealable: boolean }>;
  /**
   * The user's current API secret (`secret_key`), after checking its password. Throws Invalid
   * (`password`: not correct), SignInThrottled or NotFound.
   */
  revealSecretKey(actor: Actor, password: string, client: ClientInfo): Promise<string>;
  /**
   * Issues the user new API credentials after checking its password; the old token and secret stop
   * working at once. Returns the new ones, shown only now; throws as revealSecretKey.
   */
  rotateCredentials(actor: Actor, password: string, client: ClientInfo): Promise<Credentials>;
  /**
   * Sets the console's language for the user (a supported tag, stored in canonical case), or clears it
   * (null: the console follows the browser). Throws Invalid (`language`) or NotFound.
   */
  setLanguage(actor: Actor, params: Params): Promise<string | null>;
}

/** Builds the account service over staff sign-in (password checks) and users (credentials). */
export function createAccountService(deps: {
  db: Db;
  clock: Clock;
  keys: Pick<ServerKeys, 'encryption'>;
  staffAuth: Pick<StaffAuthService, 'confirmPassword'>;
  users: Pick<UsersService, 'rotateCredentials'>;
}): AccountService {
  const { db, clock, staffAuth, users } = deps;
  const key = deps.keys.encryption;

  return {
    async setLanguage(actor, params) {
      if (!has(params, 'language')) throw new Invalid('language', "can't be blank");
      const language = params.language === null ? null : (readLanguage(params, 'language') ?? null);
      if (!(await writeUserLanguage(db, actor.id, language, clock.now())))
        throw new NotFound('User', actor.id);
      return language;
    },

    async changePassword(actor, sessionToken, passwords, client) {
      // The new password's rules say nothing about the account, so they are checked first.
      const problem = passwordProblem(passwords.next);
      if (problem !== undefined) throw new Invalid('new_password', problem);
      await staffAuth.confirmPassword(actor.id, passwords.current, client, 'current_password');
      const hash = await hashPassword(passwords.next);
      const now = clock.now();
      const written = await db.transaction().execute(async (trx) => {
        if (!(await writePasswordHash(trx, actor.id, hash, now))) return false;
        await deleteOtherStaffSessions(trx, actor.id, hashToken(sessionToken));
        await deleteChallengesOfUser(trx, actor.id);
        await spendOneTimeLinksOfUser(trx, actor.id, now);
        return true;
      });
      if (!written) throw new NotFound('User', actor.id);
    },

    async credentials(actor) {
      const found = await findApiSecret(db, actor.id);
      if (found === undefined) throw new NotFound('User', actor.id);
      return { secretKeyRevealable: found.hasPassword };
    },

    async revealSecretKey(actor, password, client) {
      await staffAuth.confirmPassword(actor.id, password, client, 'password');
      const found = await findApiSecret(db, actor.id);
      if (found === undefined) throw new NotFound('User', actor.id);
      return decryptSecret(key, found.secretKeyEncrypted);
    },

    async rotateCredentials(actor, password, client) {
      await staffAuth.confirmPassword(actor.id, password, client, 'password');
      return (await users.rotateCredentials(actor.id)).credentials;
    },
  };
}
