import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../../domain/access.ts';
import { actorOf } from '../actor.ts';
import { auditClientOf } from '../audit.ts';
import { setPaginationHeaders } from '../pagination.ts';
import type { RouteDeps } from '../route-deps.ts';
import type { Services } from '../../services.ts';
import { presentQueueEntryV3, presentReviewV3 } from './reviews.presenter.ts';
import { putReviewSchema, reviewableSchema, reviewQueueSchema, showReviewSchema } from './reviews.schemas.ts';
import { presentOneStudentSessionV3 } from './student-sessions.presenter.ts';

type IdRoute = { Params: { id: string } };
type ExamRoute = { Params: { exam_id: string } };

/** The audit action of a verdict change, whichever route carried it (docs/audit-log.md). */
export const VERDICT_AUDIT_ACTION = 'student_session_reviewed';

/**
 * Records a verdict change in the audit log by its own name, besides the route's own event, so an
 * administrator finds every verdict change (PUT review and PATCH reviewed alike) with one filter.
 * The verdict itself stays in the review history; a failed write is logged, never answered.
 */
export async function auditVerdictChange(
  services: Services,
  request: FastifyRequest,
  actor: Actor,
  sessionId: number,
): Promise<void> {
  try {
    await services.audit.recordWrite({
      actor,
      action: VERDICT_AUDIT_ACTION,
      targetType: 'student_sessions',
      targetId: sessionId,
      status: 200,
      client: auditClientOf(request),
    });
  } catch (error) {
    request.log.error({ err: error, action: VERDICT_AUDIT_ACTION }, 'audit event not recorded');
  }
}

/** The V3 review routes (docs/review.md): a session's verdict, the compat reviewable, the queue. */
export function registerReviewRoutes(app: FastifyInstance, { services, clock }: RouteDeps): void {
  const { reviews } = services;

  app.get<IdRoute>('/student_sessions/:id/review', { schema: showReviewSchema }, async (request) => ({
    review: presentReviewV3(await reviews.get(actorOf(request), request.params.id)),
  }));

  app.put<IdRoute>('/student_sessions/:id/review', { schema: putReviewSchema }, async (request) => {
    const actor = actorOf(request);
    const { review, changed } = await reviews.record(actor, request.params.id, request.input.values);
    if (changed) await auditVerdictChange(services, request, actor, review.studentSessionId);
    return { review: presentReviewV3(review) };
  });

  // ProctorExam's own clients put the session's room token in the `id` segment here and sign it as
  // `id=<token>` (the original route's parameter name), so the parameter is `id` though it is no id.
  app.get<IdRoute>('/student_sessions/:id/reviewable', { schema: reviewableSchema }, async (request) => ({
    student: await presentOneStudentSessionV3(
      services.studentSessions,
      await reviews.reviewable(actorOf(request), request.params.id),
      clock.now(),
    ),
  }));

  app.get<ExamRoute>(
    '/exams/:exam_id/review_queue',
    { schema: reviewQueueSchema },
    async (request, reply) => {
      const page = await reviews.queue(actorOf(request), request.params.exam_id, request.input.values);
      setPaginationHeaders(reply, page);
      return { review_queue: page.items.map(presentQueueEntryV3) };
    },
  );
}
