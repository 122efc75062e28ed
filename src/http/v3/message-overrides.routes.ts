import type { FastifyInstance } from 'fastify';
import type { WordedMessage } from '../../domain/message-overrides/message-overrides.service.ts';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { isoTime } from '../time.ts';
import { listMessageOverridesSchema, saveMessageOverrideSchema } from './message-overrides.schemas.ts';

type IdRoute = { Params: { id: string } };

/** A message as the wording screen shows it: `{key, english, catalogue, override, updated_at, updated_by}`. */
export function presentWordedMessage(message: WordedMessage): Record<string, unknown> {
  return {
    key: message.key,
    english: message.english,
    catalogue: message.catalogue,
    override: message.override?.message ?? null,
    updated_at: isoTime(message.override?.updatedAt ?? null),
    updated_by: message.override?.updatedBy ?? null,
  };
}

/**
 * `/institutes/:id/message_overrides`: an institute's own wording of the messages its candidates
 * read and its emails say (docs/languages.md), for its administrators. A save is audit-logged by the
 * scope's audit hook like every V3 write.
 */
export function registerMessageOverrideRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { messageOverrides } = services;

  app.get<IdRoute>(
    '/institutes/:id/message_overrides',
    { schema: listMessageOverridesSchema },
    async (request) => {
      const listed = await messageOverrides.list(actorOf(request), request.params.id, request.input.values);
      return { locale: listed.locale, messages: listed.messages.map(presentWordedMessage) };
    },
  );

  app.put<IdRoute>(
    '/institutes/:id/message_overrides',
    { schema: saveMessageOverrideSchema },
    async (request) => ({
      message: presentWordedMessage(
        await messageOverrides.save(actorOf(request), request.params.id, request.input.values),
      ),
    }),
  );
}
