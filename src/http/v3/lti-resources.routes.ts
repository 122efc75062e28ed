import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentLtiResourceV3 } from './lti-resources.presenter.ts';
import {
  createLtiResourceSchema,
  destroyLtiResourceSchema,
  listLtiResourcesSchema,
  showLtiResourceSchema,
  showLtiStudentSchema,
  updateLtiResourceSchema,
} from './lti-resources.schemas.ts';
import { presentOneStudentSessionV3 } from './student-sessions.presenter.ts';

type IdRoute = { Params: { id: string } };

/** The V3 LTI-resource routes and `GET /exams/:id/show_lti_student` (api.md's catalogue; contract §6, §7). */
export function registerLtiResourceRoutes(app: FastifyInstance, { services, clock }: RouteDeps): void {
  const { ltiResources } = services;

  app.get('/lti_resources', { schema: listLtiResourcesSchema }, async (request, reply) => {
    const page = await ltiResources.list(actorOf(request), request.input.values);
    setPaginationHeaders(reply, page);
    return { lti_resources: page.items.map(presentLtiResourceV3) };
  });

  app.get<IdRoute>('/lti_resources/:id', { schema: showLtiResourceSchema }, async (request) => ({
    lti_resource: presentLtiResourceV3(await ltiResources.get(actorOf(request), request.params.id)),
  }));

  app.post('/lti_resources', { schema: createLtiResourceSchema }, async (request, reply) =>
    reply.code(201).send({
      lti_resource: presentLtiResourceV3(await ltiResources.create(actorOf(request), request.input.values)),
    }),
  );

  app.route<IdRoute>({
    method: ['PATCH', 'PUT'],
    url: '/lti_resources/:id',
    schema: updateLtiResourceSchema,
    handler: async (request) => ({
      lti_resource: presentLtiResourceV3(
        await ltiResources.update(actorOf(request), request.params.id, request.input.values),
      ),
    }),
  });

  app.delete<IdRoute>('/lti_resources/:id', { schema: destroyLtiResourceSchema }, async (request) => {
    await ltiResources.destroy(actorOf(request), request.params.id);
    return {};
  });

  app.get<IdRoute>('/exams/:id/show_lti_student', { schema: showLtiStudentSchema }, async (request) => ({
    student: await presentOneStudentSessionV3(
      services.studentSessions,
      await ltiResources.findStudent(actorOf(request), request.params.id, request.input.values),
      clock.now(),
    ),
  }));
}
