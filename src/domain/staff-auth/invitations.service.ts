import type { Db } from '../../db/database.ts';
import { type Actor, canManageUser, usersStanding } from '../access.ts';
import { Forbidden } from '../errors.ts';
import type { UsersService } from '../users/users.service.ts';
import { userHasPassword } from './account.repository.ts';
import type { StaffAuthService } from './staff-auth.service.ts';

/** An invitation as the API answers it: the link only where the caller may be given it. */
export interface IssuedInvitation {
  readonly userId: number;
  /** The one-time link; undefined when the email carries it and nobody else may see it. */
  readonly url: string | undefined;
  readonly expiresAt: number;
}

/** Invitations sent by an institute's administrators (docs/api-v3-institutes-users.md, "Invitations"). */
export interface InvitationsService {
  /**
   * Invites a user of the institute to choose a password, exactly as `invigil user invite` does: a
   * new one-time link, valid 7 days, and the `staff_invitation` email in the outbox. Returns the link's
   * expiry, and the link itself only when `showLink` was set (no SMTP server: the email is held, so the
   * administrator must pass the link on) and the user has no password yet (an account in use is
   * never handed to its administrator this way). Throws NotFound (institute or user, also outside the
   * caller's scope), Forbidden (a role that may not manage the institute's users, or a superuser's
   * account for anyone but a superuser) or Invalid (a deactivated user).
   */
  inviteAs(actor: Actor, instituteId: string | number, id: string | number): Promise<IssuedInvitation>;
}

/** Builds the invitations service. Returns it; throws nothing. */
export function createInvitationsService(deps: {
  db: Db;
  users: Pick<UsersService, 'get'>;
  staffAuth: Pick<StaffAuthService, 'invite'>;
  /** Whether the answer may carry the link: true when this installation sends no mail. */
  showLink: boolean;
}): InvitationsService {
  const { db, users, staffAuth, showLink } = deps;
  return {
    async inviteAs(actor, instituteId, id) {
      const user = await users.get(actor, instituteId, id);
      // Redeeming the link sets the user's password: only whoever may change the account may send it.
      if (usersStanding(actor, user.instituteId) !== 'manage' || !canManageUser(actor, user)) {
        throw new Forbidden();
      }
      const link = await staffAuth.invite(user.id);
      const firstPassword = showLink && !(await userHasPassword(db, user.id));
      return { userId: user.id, url: firstPassword ? link.url : undefined, expiresAt: link.expiresAt };
    },
  };
}
