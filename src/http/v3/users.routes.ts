import type { FastifyInstance } from 'fastify';
import type { Credentials, User } from '../../domain/users/user.ts';
import { actorOf } from '../actor.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentUserV3, userInstitutes } from './users.presenter.ts';
import {
  createUserSchema,
  destroyUserSchema,
  listUsersSchema,
  showUserSchema,
  updateUserSchema,
} from './users.schemas.ts';

type InstituteRoute = { Params: { institute_id: string } };
type UserRoute = { Params: { institute_id: string; id: string } };

/** `/institutes/:institute_id/users[/:id]`: an institute's users, for its administrators and superusers. */
export function registerUserRoutes(app: FastifyInstance, { services, database }: RouteDeps): void {
  const { users } = services;
  // Each user record names its institute; one lookup per request and institute.
  const present = async (user: User, credentials?: Credentials) =>
    presentUserV3(user, await userInstitutes(database.db)(user.instituteId), credentials);

  app.get<InstituteRoute>(
    '/institutes/:institute_id/users',
    { schema: listUsersSchema },
    async (request, reply) => {
      const page = await users.list(actorOf(request), request.params.institute_id, request.input.values);
      setPaginationHeaders(reply, page);
      const institutes = userInstitutes(database.db);
      const records = [];
      for (const user of page.items) records.push(presentUserV3(user, await institutes(user.instituteId)));
      return { users: records };
    },
  );

  app.get<UserRoute>('/institutes/:institute_id/users/:id', { schema: showUserSchema }, async (request) => ({
    user: await present(await users.get(actorOf(request), request.params.institute_id, request.params.id)),
  }));

  app.post<InstituteRoute>(
    '/institutes/:institute_id/users',
    { schema: createUserSchema },
    async (request, reply) => {
      const { user, credentials } = await users.createAs(
        actorOf(request),
        request.params.institute_id,
        request.input.values,
      );
      return reply.code(201).send({ user: await present(user, credentials) });
    },
  );

  app.route<UserRoute>({
    method: ['PATCH', 'PUT'],
    url: '/institutes/:institute_id/users/:id',
    schema: updateUserSchema,
    handler: async (request) => ({
      user: await present(
        await users.update(
          actorOf(request),
          request.params.institute_id,
          request.params.id,
          request.input.values,
        ),
      ),
    }),
  });

  app.delete<UserRoute>(
    '/institutes/:institute_id/users/:id',
    { schema: destroyUserSchema },
    async (request) => {
      await users.destroy(actorOf(request), request.params.institute_id, request.params.id);
      return {};
    },
  );
}
