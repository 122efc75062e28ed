import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import type { Exam } from '../../domain/exams/exam.ts';
import { demoPracticeUrl } from '../practice/practice-url.ts';
import { presentExamV3 } from './exams.presenter.ts';
import {
  createExamSchema,
  destroyExamSchema,
  listExamsSchema,
  showExamSchema,
  updateExamSchema,
} from './exams.schemas.ts';

type IdRoute = { Params: { id: string } };

export function registerExamRoutes(app: FastifyInstance, { services, config }: RouteDeps): void {
  const { exams } = services;
  const present = (exam: Exam) => presentExamV3(exam, demoPracticeUrl(config, exam));

  app.get('/exams', { schema: listExamsSchema }, async (request, reply) => {
    const page = await exams.list(actorOf(request), request.input.values);
    setPaginationHeaders(reply, page);
    return { exams: page.items.map(present) };
  });

  app.get<IdRoute>('/exams/:id', { schema: showExamSchema }, async (request) => ({
    exam: present(await exams.get(actorOf(request), request.params.id)),
  }));

  app.post('/exams', { schema: createExamSchema }, async (request, reply) =>
    reply.code(201).send({ exam: present(await exams.create(actorOf(request), request.input.values)) }),
  );

  app.route<IdRoute>({
    method: ['PATCH', 'PUT'],
    url: '/exams/:id',
    schema: updateExamSchema,
    handler: async (request) => ({
      exam: present(await exams.update(actorOf(request), request.params.id, request.input.values)),
    }),
  });

  app.delete<IdRoute>('/exams/:id', { schema: destroyExamSchema }, async (request) => {
    await exams.destroy(actorOf(request), request.params.id);
    return {};
  });
}
