import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentIdentityProviderV3 } from './identity-providers.presenter.ts';
import { listIdentityProvidersSchema } from './identity-providers.schemas.ts';

/** The V3 identity-provider route: a read-only listing (configurations are added with the CLI). */
export function registerIdentityProviderRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { identityProviders } = services;

  app.get('/identity_providers', { schema: listIdentityProvidersSchema }, async (request, reply) => {
    const page = await identityProviders.list(actorOf(request), request.input.values);
    setPaginationHeaders(reply, page);
    return { identity_providers: page.items.map(presentIdentityProviderV3) };
  });
}
