import crypto from 'node:crypto';
import type { Db } from '../../db/database.ts';
import type { JobQueue } from '../ports/jobs.ts';
import { createOutbox } from '../mail/outbox-writer.ts';
import { findInstitute } from '../institutes/institutes.repository.ts';
import { mailTranslator, staffMailLocale } from '../mail/mail-language.ts';
import { passwordResetMail, staffInvitationMail } from '../mail/templates.ts';
import { hashToken, type ServerKeys } from '../../security/keys.ts';
import {
  hashPassword,
  MAX_PASSWORD_LENGTH,
  needsRehash,
  passwordProblem,
  verifyAgainstNothing,
  verifyPassword,
} from '../../security/passwords.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Invalid, NotFound, RateLimited, Unauthorized } from '../errors.ts';
import type { User } from '../users/user.ts';
import { findUser } from '../users/users.repository.ts';
import type { Credentials } from '../users/user.ts';
import type { UsersService } from '../users/users.service.ts';
import {
  CHALLENGE_ATTEMPTS,
  CHALLENGE_MS,
  countChallengeAttempt,
  deleteChallenge,
  deleteChallengesOfUser,
  deleteSecondFactor,
  enableSecondFactor,
  findChallenge,
  hasSecondFactor,
  insertChallenge,
  looksLikeTotp,
  mustEnrol,
  replaceRecoveryCodes,
  startEnrolment,
  useRecoveryCode,
  useTotp,
} from './second-factor.ts';
import {
  ACCOUNT_FREE_FAILURES,
  accountKey,
  ADDRESS_FREE_FAILURES,
  addressKey,
  waitFor,
} from './sign-in-throttle.ts';
import {
  deleteEndedStaffSessions,
  deleteStaffSession,
  deleteStaffSessionsOfUser,
  deleteThrottle,
  findSignInUser,
  findStaffSession,
  findThrottle,
  hasRecentOneTimeLink,
  insertOneTimeLink,
  insertStaffSession,
  redeemOneTimeLink,
  releaseThrottle,
  reserveThrottle,
  spendOneTimeLinksOfUser,
  type StaffSessionRow,
  touchStaffSession,
  writePasswordHash,
} from './staff-auth.repository.ts';

/** A session ends this long after its last request. */
export const SESSION_IDLE_MS = 30 * 60 * 1000;
/** A session ends this long after sign-in, however active. */
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60 * 1000;
/** `last_seen_at` is written at most this often per session (one write a minute, not one a request). */
export const SESSION_TOUCH_MS = 60 * 1000;
/** An invitation link works this long. */
export const INVITATION_MS = 7 * 24 * 60 * 60 * 1000;
/** A password-reset link works this long. */
export const PASSWORD_RESET_MS = 60 * 60 * 1000;
/**
 * At most one reset email per user in this time: "forgot password" needs no credential, so without
 * it anyone could fill a colleague's mailbox.
 */
export const RESET_EMAIL_INTERVAL_MS = 5 * 60 * 1000;

export type LinkPurpose = 'invitation' | 'password_reset';

/** A signed-in browser, as the transports see it. */
export interface StaffSession {
  readonly actor: Actor;
  /** The signed-in user's email and name, for the console's header. */
  readonly email: string;
  readonly name: string;
  /** The console's language the user picked, or null to follow the browser. */
  readonly language: string | null;
  readonly csrfToken: string;
  readonly createdAt: number;
  /** When it ends if no request comes first. */
  readonly idleExpiresAt: number;
  /** When it ends regardless. */
  readonly expiresAt: number;
  /** Whether the user has an enabled second factor. */
  readonly secondFactor: boolean;
  /**
   * An administrator of an institute that requires a second factor, without one yet: the session
   * may enrol one and nothing else (its `/api/v3` calls are refused).
   */
  readonly enrolmentOnly: boolean;
}

/** A password sign-in: a session, or (the user has a second factor) the token of the pending second step. */
export type SignInResult =
  | { readonly token: string; readonly session: StaffSession; readonly pending?: undefined }
  | { readonly pending: { readonly token: string; readonly expiresAt: number } };

/** Where a sign-in comes from (kept on the session row, and the address is throttled). */
export interface ClientInfo {
  readonly ip: string;
  readonly userAgent: string | null;
}

/** A sign-in that must wait; `retryAfterSeconds` goes into Retry-After. */
export class SignInThrottled extends RateLimited {
  readonly retryAfterSeconds: number;
  constructor(waitMs: number) {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    super(`Too many failed sign-ins: try again in ${seconds} seconds`);
    this.retryAfterSeconds = seconds;
  }
}

/**
 * A wrong code at the second step of a sign-in. Answered as any refused sign-in (403, Unauthorized);
 * it names the account (never the code) so the refusal can be recorded for its institute.
 */
export class SecondStepRefused extends Unauthorized {
  readonly actor: Actor;
  readonly email: string;
  constructor(user: Pick<User, 'id' | 'instituteId' | 'role' | 'email'>) {
    super(`second step refused for user ${user.id}`);
    this.actor = { id: user.id, instituteId: user.instituteId, role: user.role };
    this.email = user.email;
  }
}

export interface StaffAuthService {
  /**
   * Signs a user in by email and password and opens a new session (never an existing one). Returns
   * the cookie's token, shown only now, with the session; throws SignInThrottled while the account or
   * the address must wait, and Unauthorized (one answer for every reason) otherwise. A user with a
   * second factor gets no session yet: the answer is the pending second step's token instead.
   */
  signIn(email: string, password: string, client: ClientInfo): Promise<SignInResult>;
  /**
   * Signs in a user whose identity another party vouched for (an institute's OpenID Connect
   * provider, docs/staff-sign-in.md): no password, the same rules after it. Returns a new session,
   * or the pending second step for a user with a second factor, as signIn does; throws
   * Unauthorized for an unknown or deactivated user.
   */
  signInVerified(userId: number, client: ClientInfo): Promise<SignInResult>;
  /**
   * The second step of a sign-in: a TOTP code or an unused recovery code for the pending token.
   * Returns the new session as signIn does; throws SignInThrottled, SecondStepRefused (an
   * Unauthorized) for a wrong code (counted by the throttle and by the pending step, which is spent
   * after CHALLENGE_ATTEMPTS), and Unauthorized for an unknown, spent or expired token.
   */
  completeSignIn(
    pendingToken: string,
    code: string,
    client: ClientInfo,
  ): Promise<{ token: string; session: StaffSession }>;
  /**
   * Starts enrolling a second factor: a new secret, pending until confirmed. Returns the base32
   * secret; throws Invalid when the user already has one enabled.
   */
  startSecondFactor(userId: number): Promise<string>;
  /**
   * Confirms enrolment with a code of the pending secret, enabling it. Returns the recovery codes
   * (shown only now); throws Invalid (`code`) for a wrong code or no pending enrolment.
   */
  confirmSecondFactor(userId: number, code: string): Promise<string[]>;
  /**
   * Removes the user's second factor after checking the password again (under the sign-in
   * throttle). Throws SignInThrottled, or Invalid (`password`) for a wrong one.
   */
  disableSecondFactor(userId: number, password: string, client: ClientInfo): Promise<void>;
  /**
   * Checks a signed-in user's password again before a sensitive change (under the sign-in throttle,
   * a wrong one counted as a failed sign-in). Returns the user; throws SignInThrottled, NotFound, or
   * Invalid (`field`, `is not correct`) for a wrong password or a user without one, said alike.
   */
  confirmPassword(userId: number, password: string, client: ClientInfo, field?: string): Promise<User>;
  /**
   * Replaces the recovery codes after checking a TOTP code, under the sign-in throttle (a wrong code
   * counts as a failed sign-in for the account and the address, so a browser left open is no place
   * to guess codes). Returns the new codes; throws SignInThrottled, NotFound, or Invalid (`code`) for
   * a wrong code or a user without a second factor.
   */
  regenerateRecoveryCodes(userId: number, code: string, client: ClientInfo): Promise<string[]>;
  /**
   * The compat sign-in of the original service's Go client: checks email and password as signIn
   * does, then answers the user's current API credentials, as the original service did (a user
   * created before migration 0020 is issued new ones once: its token was kept only as a
   * hash). Returns the user and the credentials; throws as signIn.
   */
  signInForCredentials(
    email: string,
    password: string,
    client: ClientInfo,
  ): Promise<{ user: User; credentials: Credentials }>;
  /**
   * The live session a cookie token names, its last activity moved forward (at most once a minute).
   * Returns undefined for an unknown, idle, expired or deactivated user's session.
   */
  session(token: string): Promise<StaffSession | undefined>;
  /** Ends the session a token names (nothing happens for an unknown one). */
  signOut(token: string): Promise<void>;
  /** Ends every session of the user. Returns how many were open. */
  signOutEverywhere(userId: number): Promise<number>;
  /**
   * Queues a password-reset email when `email` names an active user that was sent none in the last
   * RESET_EMAIL_INTERVAL_MS (an unused one); otherwise does nothing. Answers
   * the same either way (resolves with nothing); throws only what the database throws.
   */
  requestPasswordReset(email: string): Promise<void>;
  /**
   * Creates an invitation link for the user and queues the invitation email. Returns the link and its
   * expiry; throws NotFound for an unknown user and Invalid for a deactivated one.
   */
  invite(userId: number): Promise<{ url: string; expiresAt: number }>;
  /**
   * Redeems an invitation or reset token by setting the password; every session of the user ends and
   * every other unused link is spent. Throws Invalid (`password`: too short or long; `token`: unknown,
   * used, expired or of a deactivated user). Returns the user whose password was set (for the audit log).
   */
  redeem(purpose: LinkPurpose, token: string, password: string): Promise<Actor>;
  /**
   * Sets a user's password (the CLI), ending its sessions. Throws NotFound or Invalid (`password`).
   */
  setPassword(userId: number, password: string): Promise<void>;
}

function randomToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** The console page each link opens. */
const LINK_PAGES: Readonly<Record<LinkPurpose, string>> = {
  invitation: '/console/accept-invitation',
  password_reset: '/console/reset-password',
};

/** Builds the staff sign-in service. Returns it; throws nothing. */
export function createStaffAuthService(deps: {
  db: Db;
  clock: Clock;
  jobs: JobQueue;
  publicUrl: string;
  users: Pick<UsersService, 'currentCredentials'>;
  keys: Pick<ServerKeys, 'encryption'>;
}): StaffAuthService {
  const { db, clock, jobs, publicUrl, users } = deps;
  const key = deps.keys.encryption;
  const outbox = createOutbox({ clock, jobs });

  async function present(row: StaffSessionRow, user: User): Promise<StaffSession> {
    const [secondFactor, enrolmentOnly] = await Promise.all([
      hasSecondFactor(db, user.id),
      mustEnrol(db, user),
    ]);
    return {
      secondFactor,
      enrolmentOnly,
      actor: { id: user.id, instituteId: user.instituteId, role: user.role },
      email: user.email,
      name: user.name,
      language: user.language,
      csrfToken: row.csrfToken,
      createdAt: row.createdAt,
      idleExpiresAt: Math.min(row.lastSeenAt + SESSION_IDLE_MS, row.expiresAt),
      expiresAt: row.expiresAt,
    };
  }

  /**
   * Reserves one attempt for the account and the client address before anything is checked
   * (reserveThrottle: atomic in the database, so parallel requests and other processes count too).
   * The attempt stays counted as a failure unless `settle` gives it back. Returns `settle`, which
   * releases the address's attempt and, for a right answer, clears the account (`success`) or gives
   * its attempt back; throws SignInThrottled when either key is blocked (nothing kept reserved).
   */
  async function reserveAttempt(
    email: string,
    ip: string,
    now: number,
  ): Promise<(outcome: 'success' | 'unchecked') => Promise<void>> {
    const keys = [
      [accountKey(email), ACCOUNT_FREE_FAILURES],
      [addressKey(ip), ADDRESS_FREE_FAILURES],
    ] as const;
    const reserved: (readonly [string, number])[] = [];
    for (const [key, free] of keys) {
      if (await reserveThrottle(db, key, now, free)) {
        reserved.push([key, free]);
        continue;
      }
      for (const [done, doneFree] of reserved) await releaseThrottle(db, done, now, doneFree);
      throw new SignInThrottled(waitFor(await findThrottle(db, key), now));
    }
    return async (outcome) => {
      if (outcome === 'success') await deleteThrottle(db, accountKey(email));
      else await releaseThrottle(db, accountKey(email), now, ACCOUNT_FREE_FAILURES);
      await releaseThrottle(db, addressKey(ip), now, ADDRESS_FREE_FAILURES);
    };
  }

  /**
   * Runs `check` under a reserved attempt: a refusal it throws of one of `refusals` stays counted as
   * a failure; any other error (nothing was decided: the database, say) gives the attempt back.
   * Returns what `check` returns, the attempt not yet settled; throws what `check` throws.
   */
  async function underReservation<T>(
    settle: (outcome: 'success' | 'unchecked') => Promise<void>,
    check: () => Promise<T>,
  ): Promise<T> {
    try {
      return await check();
    } catch (error) {
      if (!(error instanceof Unauthorized || error instanceof Invalid)) {
        await settle('unchecked').catch(() => undefined);
      }
      throw error;
    }
  }

  /** Checks email and password under the throttle. Returns the user; throws SignInThrottled or Unauthorized. */
  async function checkPassword(email: string, password: string, client: ClientInfo): Promise<User> {
    const now = clock.now();
    const settle = await reserveAttempt(email, client.ip, now);
    const { user, found } = await underReservation(settle, async () => {
      const found = await findSignInUser(db, email.trim());
      // No password this long can have been set, so it is refused without hashing up to a megabyte.
      const tooLong = password.length > 4 * MAX_PASSWORD_LENGTH;
      // Every other refusal spends one scrypt verification, so the time taken does not say which it was.
      const matches = tooLong
        ? false
        : found?.passwordHash !== null && found?.passwordHash !== undefined
          ? await verifyPassword(password, found.passwordHash)
          : await verifyAgainstNothing(password);
      const user = matches && found !== undefined && found.active ? await findUser(db, found.id) : undefined;
      if (user === undefined || found === undefined) {
        throw new Unauthorized(
          found === undefined ? 'sign-in: unknown email' : `sign-in refused for user ${found.id}`,
        );
      }
      return { user, found };
    });
    await settle('success');
    if (found.passwordHash !== null && needsRehash(found.passwordHash)) {
      await writePasswordHash(db, user.id, await hashPassword(password), now);
    }
    return user;
  }

  async function writePassword(userId: number, password: string): Promise<void> {
    const hash = await hashPassword(password);
    const now = clock.now();
    const written = await db.transaction().execute(async (trx) => {
      if (!(await writePasswordHash(trx, userId, hash, now))) return false;
      await deleteStaffSessionsOfUser(trx, userId);
      await deleteChallengesOfUser(trx, userId);
      await spendOneTimeLinksOfUser(trx, userId, now);
      return true;
    });
    if (!written) throw new NotFound('User', userId);
  }

  /** See StaffAuthService.confirmPassword. */
  async function confirmPassword(
    userId: number,
    password: string,
    client: ClientInfo,
    field: string,
  ): Promise<User> {
    const user = await findUser(db, userId);
    const found = user === undefined ? undefined : await findSignInUser(db, user.email);
    if (user === undefined || found === undefined) throw new NotFound('User', userId);
    const now = clock.now();
    const settle = await reserveAttempt(user.email, client.ip, now);
    await underReservation(settle, async () => {
      // As at sign-in, a user without a password costs one scrypt verification too.
      const matches =
        password.length > 4 * MAX_PASSWORD_LENGTH
          ? false
          : found.passwordHash !== null
            ? await verifyPassword(password, found.passwordHash)
            : await verifyAgainstNothing(password);
      if (!matches) throw new Invalid(field, 'is not correct');
    });
    // A right password gives its attempt back, leaving earlier failures counted (it is no sign-in).
    await settle('unchecked');
    return user;
  }

  function checkNewPassword(password: string): void {
    const problem = passwordProblem(password);
    if (problem !== undefined) throw new Invalid('password', problem);
  }

  /** Writes a link and its email in one transaction. Returns the link's address and expiry. */
  async function issueLink(
    user: User,
    purpose: LinkPurpose,
    lifetimeMs: number,
  ): Promise<{ url: string; expiresAt: number }> {
    const token = randomToken();
    const now = clock.now();
    const expiresAt = now + lifetimeMs;
    const url = `${publicUrl}${LINK_PAGES[purpose]}?token=${token}`;
    await db.transaction().execute(async (trx) => {
      await insertOneTimeLink(trx, {
        id: hashToken(token),
        userId: user.id,
        purpose,
        createdAt: now,
        expiresAt,
      });
      const content = { name: user.name, email: user.email, url, expiresAt };
      // The user's own console language, else the institute's (mail-language.ts).
      const institute = await findInstitute(trx, user.instituteId);
      const locale = staffMailLocale(user.language, institute?.defaultLanguage);
      const t = await mailTranslator(trx, user.instituteId, locale);
      await outbox.write(trx, {
        kind: purpose === 'invitation' ? 'staff_invitation' : 'password_reset',
        to: user.email,
        message: purpose === 'invitation' ? staffInvitationMail(content, t) : passwordResetMail(content, t),
        studentSessionId: null,
        instituteId: user.instituteId,
      });
    });
    return { url, expiresAt };
  }

  /** Opens a new session for a user who passed every step. Returns its cookie token and the session. */
  async function openSession(
    user: User,
    client: ClientInfo,
  ): Promise<{ token: string; session: StaffSession }> {
    const now = clock.now();
    // Ended sessions of this user are removed here, so the table holds live sessions and a few stale ones.
    await deleteEndedStaffSessions(db, user.id, now, SESSION_IDLE_MS);
    const token = randomToken();
    const row: StaffSessionRow = {
      id: hashToken(token),
      userId: user.id,
      csrfToken: randomToken(),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now + SESSION_ABSOLUTE_MS,
    };
    await insertStaffSession(db, {
      ...row,
      ip: client.ip,
      userAgent: client.userAgent?.slice(0, 500) ?? null,
    });
    return { token, session: await present(row, user) };
  }

  /** A session, or the pending second step when the user has a second factor. Returns either. */
  async function afterFirstFactor(user: User, client: ClientInfo): Promise<SignInResult> {
    if (!(await hasSecondFactor(db, user.id))) return openSession(user, client);
    const token = randomToken();
    const now = clock.now();
    const expiresAt = now + CHALLENGE_MS;
    await insertChallenge(db, {
      id: hashToken(token),
      userId: user.id,
      expiresAt,
      attempts: 0,
      createdAt: now,
      ip: client.ip,
      userAgent: client.userAgent?.slice(0, 500) ?? null,
    });
    return { pending: { token, expiresAt } };
  }

  return {
    async signIn(email, password, client) {
      return afterFirstFactor(await checkPassword(email, password, client), client);
    },

    async signInVerified(userId, client) {
      const user = await findUser(db, userId);
      if (user === undefined || !user.active)
        throw new Unauthorized(`verified sign-in refused for user ${userId}`);
      return afterFirstFactor(user, client);
    },

    async completeSignIn(pendingToken, code, client) {
      const now = clock.now();
      const found = pendingToken.length > 200 ? undefined : await findChallenge(db, hashToken(pendingToken));
      if (found === undefined || now >= found.expiresAt) {
        if (found !== undefined) await deleteChallenge(db, found.id);
        throw new Unauthorized('second step: unknown or expired pending token');
      }
      const user = await findUser(db, found.userId);
      if (user === undefined || !user.active) throw new Unauthorized('second step: user gone');
      const settle = await reserveAttempt(user.email, client.ip, now);
      await underReservation(settle, async () => {
        const accepted = looksLikeTotp(code)
          ? await useTotp(db, key, user.id, code, now)
          : await useRecoveryCode(db, user.id, code, now);
        if (accepted) return;
        if (found.attempts + 1 >= CHALLENGE_ATTEMPTS) await deleteChallenge(db, found.id);
        else await countChallengeAttempt(db, found.id, found.attempts + 1);
        throw new SecondStepRefused(user);
      });
      await deleteChallenge(db, found.id);
      await settle('success');
      return openSession(user, client);
    },

    async startSecondFactor(userId) {
      const secret = await startEnrolment(db, key, userId, clock.now());
      if (secret === undefined) throw new Invalid('second_factor', 'is already enabled');
      return secret;
    },

    async confirmSecondFactor(userId, code) {
      if (!(await useTotp(db, key, userId, code, clock.now(), true))) {
        throw new Invalid('code', 'is not valid');
      }
      const now = clock.now();
      return db.transaction().execute(async (trx) => {
        await enableSecondFactor(trx, userId, now);
        return replaceRecoveryCodes(trx, userId);
      });
    },

    async disableSecondFactor(userId, password, client) {
      await confirmPassword(userId, password, client, 'password');
      await db.transaction().execute((trx) => deleteSecondFactor(trx, userId));
    },

    confirmPassword: (userId, password, client, field = 'password') =>
      confirmPassword(userId, password, client, field),

    async regenerateRecoveryCodes(userId, code, client) {
      const user = await findUser(db, userId);
      if (user === undefined) throw new NotFound('User', userId);
      const now = clock.now();
      const settle = await reserveAttempt(user.email, client.ip, now);
      await underReservation(settle, async () => {
        if (!looksLikeTotp(code) || !(await useTotp(db, key, userId, code, now))) {
          throw new Invalid('code', 'is not valid');
        }
      });
      await settle('unchecked');
      return db.transaction().execute((trx) => replaceRecoveryCodes(trx, userId));
    },

    async signInForCredentials(email, password, client) {
      const user = await checkPassword(email, password, client);
      // The Go client cannot answer a second step, so a user with a second factor cannot sign in here.
      if (await hasSecondFactor(db, user.id)) {
        throw new Unauthorized(`compat sign-in refused for user ${user.id}: second factor enabled`);
      }
      return users.currentCredentials(user.id);
    },

    async session(token) {
      if (token === '' || token.length > 200) return undefined;
      const found = await findStaffSession(db, hashToken(token));
      if (found === undefined || !found.userActive) return undefined;
      const { session } = found;
      const now = clock.now();
      if (now >= session.expiresAt || now >= session.lastSeenAt + SESSION_IDLE_MS) {
        await deleteStaffSession(db, session.id);
        return undefined;
      }
      const user = await findUser(db, session.userId);
      if (user === undefined) return undefined;
      if (now - session.lastSeenAt >= SESSION_TOUCH_MS) {
        await touchStaffSession(db, session.id, now);
        return present({ ...session, lastSeenAt: now }, user);
      }
      return present(session, user);
    },

    async signOut(token) {
      if (token === '' || token.length > 200) return;
      await deleteStaffSession(db, hashToken(token));
    },

    signOutEverywhere(userId) {
      return deleteStaffSessionsOfUser(db, userId);
    },

    async requestPasswordReset(email) {
      const found = await findSignInUser(db, email.trim());
      const user = found?.active === true ? await findUser(db, found.id) : undefined;
      if (user === undefined) return;
      const since = clock.now() - RESET_EMAIL_INTERVAL_MS;
      if (await hasRecentOneTimeLink(db, user.id, 'password_reset', since)) return;
      await issueLink(user, 'password_reset', PASSWORD_RESET_MS);
    },

    async invite(userId) {
      const user = await findUser(db, userId);
      if (user === undefined) throw new NotFound('User', userId);
      if (!user.active) throw new Invalid('id', 'names a deactivated user');
      return issueLink(user, 'invitation', INVITATION_MS);
    },

    async redeem(purpose, token, password) {
      checkNewPassword(password);
      const hash = await hashPassword(password);
      const now = clock.now();
      const done = await db.transaction().execute(async (trx) => {
        const userId = await redeemOneTimeLink(trx, hashToken(token), purpose, now);
        if (userId === undefined) return undefined;
        const user = await findUser(trx, userId);
        // A deactivated user's link redeems nothing; the transaction rolls the use back.
        if (user === undefined || !user.active) throw new Invalid('token', 'is invalid or has expired');
        await writePasswordHash(trx, userId, hash, now);
        await deleteStaffSessionsOfUser(trx, userId);
        await deleteChallengesOfUser(trx, userId);
        await spendOneTimeLinksOfUser(trx, userId, now);
        return user;
      });
      if (done === undefined) throw new Invalid('token', 'is invalid or has expired');
      return { id: done.id, instituteId: done.instituteId, role: done.role };
    },

    async setPassword(userId, password) {
      checkNewPassword(password);
      await writePassword(userId, password);
    },
  };
}
