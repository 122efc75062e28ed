import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import type { ServerDeps } from '../server.ts';
import { presentExamV2 } from './exams.presenter.ts';

const v2Signed = {
  type: 'object',
  properties: {
    api_token: { type: 'string' },
    timestamp: { type: 'string' },
    nonce: { type: 'string' },
    signature: { type: 'string' },
  },
  required: ['api_token', 'timestamp', 'nonce', 'signature'],
} as const;

export function registerV2ExamRoutes(app: FastifyInstance, { services }: ServerDeps): void {
  app.get(
    '/exams',
    {
      schema: {
        tags: ['v2'],
        summary: 'V2: the exams the caller owns or co-manages',
        querystring: v2Signed,
      },
    },
    async (request) => ({ exams: (await services.exams.listOwned(actorOf(request))).map(presentExamV2) }),
  );

  app.get<{ Params: { id: string } }>(
    '/exams/:id',
    {
      schema: {
        tags: ['v2'],
        summary: 'V2: one exam (404 with an empty body when missing or out of scope)',
        params: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
        querystring: v2Signed,
      },
    },
    async (request) => ({
      exam: presentExamV2(await services.exams.get(actorOf(request), request.params.id)),
    }),
  );
}
