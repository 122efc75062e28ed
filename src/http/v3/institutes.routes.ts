import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentInstituteV3 } from './institutes.presenter.ts';
import {
  createInstituteSchema,
  destroyInstituteSchema,
  listInstitutesSchema,
  showInstituteSchema,
  updateInstituteSchema,
} from './institutes.schemas.ts';

type IdRoute = { Params: { id: string } };

/** `/institutes[/:id]`: listing, creating and destroying are for superusers (api.md, Authentication 6). */
export function registerInstituteRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { institutes } = services;

  app.get('/institutes', { schema: listInstitutesSchema }, async (request, reply) => {
    const page = await institutes.list(actorOf(request), request.input.values);
    setPaginationHeaders(reply, page);
    return { institutes: page.items.map(presentInstituteV3) };
  });

  app.get<IdRoute>('/institutes/:id', { schema: showInstituteSchema }, async (request) => ({
    institute: presentInstituteV3(await institutes.get(actorOf(request), request.params.id)),
  }));

  app.post('/institutes', { schema: createInstituteSchema }, async (request, reply) =>
    reply.code(201).send({
      institute: presentInstituteV3(await institutes.createAs(actorOf(request), request.input.values)),
    }),
  );

  app.route<IdRoute>({
    method: ['PATCH', 'PUT'],
    url: '/institutes/:id',
    schema: updateInstituteSchema,
    handler: async (request) => ({
      institute: presentInstituteV3(
        await institutes.update(actorOf(request), request.params.id, request.input.values),
      ),
    }),
  });

  app.delete<IdRoute>('/institutes/:id', { schema: destroyInstituteSchema }, async (request) => {
    await institutes.destroy(actorOf(request), request.params.id);
    return {};
  });
}
