import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { isoTime } from '../time.ts';
import { inviteUserSchema } from './user-invitations.schemas.ts';

type UserRoute = { Params: { institute_id: string; id: string } };

/**
 * `POST /institutes/:institute_id/users/:id/invite`: the invitation of `invigil user invite`, for the
 * institute's administrators and superusers (docs/api-v3-institutes-users.md, "Invitations").
 */
export function registerUserInvitationRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  app.post<UserRoute>(
    '/institutes/:institute_id/users/:id/invite',
    { schema: inviteUserSchema },
    async (request, reply) => {
      const { institute_id: instituteId, id } = request.params;
      const invitation = await services.invitations.inviteAs(actorOf(request), instituteId, id);
      // The link sets a password: no cache may keep it.
      reply.header('cache-control', 'no-store');
      return {
        invitation: {
          user_id: invitation.userId,
          invitation_url: invitation.url ?? null,
          expires_at: isoTime(invitation.expiresAt),
        },
      };
    },
  );
}
