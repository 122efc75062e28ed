import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentToolProviderV3 } from './tool-providers.presenter.ts';
import {
  createToolProviderSchema,
  destroyToolProviderSchema,
  listToolProvidersSchema,
  showToolProviderSchema,
  updateToolProviderSchema,
} from './tool-providers.schemas.ts';

type IdRoute = { Params: { id: string } };

/** The V3 tool-provider routes (api.md's catalogue, the singular show path included; contract §6). */
export function registerToolProviderRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { toolProviders } = services;

  app.get('/tool_providers', { schema: listToolProvidersSchema }, async (request, reply) => {
    const page = await toolProviders.list(actorOf(request), request.input.values);
    setPaginationHeaders(reply, page);
    return { tool_providers: page.items.map(presentToolProviderV3) };
  });

  // api.md writes the show path in the singular; the plural one answers the same.
  for (const url of ['/tool_providers/:id', '/tool_provider/:id']) {
    app.get<IdRoute>(url, { schema: showToolProviderSchema }, async (request) => ({
      tool_provider: presentToolProviderV3(await toolProviders.get(actorOf(request), request.params.id)),
    }));
  }

  app.post('/tool_providers', { schema: createToolProviderSchema }, async (request, reply) =>
    reply.code(201).send({
      tool_provider: presentToolProviderV3(
        await toolProviders.create(actorOf(request), request.input.values),
      ),
    }),
  );

  app.route<IdRoute>({
    method: ['PATCH', 'PUT'],
    url: '/tool_providers/:id',
    schema: updateToolProviderSchema,
    handler: async (request) => ({
      tool_provider: presentToolProviderV3(
        await toolProviders.update(actorOf(request), request.params.id, request.input.values),
      ),
    }),
  });

  app.delete<IdRoute>('/tool_providers/:id', { schema: destroyToolProviderSchema }, async (request) => {
    await toolProviders.destroy(actorOf(request), request.params.id);
    return {};
  });
}
