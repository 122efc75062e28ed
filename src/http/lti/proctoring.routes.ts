import type { FastifyInstance } from 'fastify';
import { buildStartAssessment, StartAssessmentRefused } from '../../lti/proctoring.ts';
import type { RouteDeps } from '../route-deps.ts';
import { autoSubmitPage, messagePage, pageTranslator, refusalText, sendPage } from './pages.ts';

type TokenRoute = { Params: { token: string } };

/**
 * LTI Proctoring Services routes (docs/lti.md, "Proctoring Services"):
 * `GET /lti/start-assessment/<room token>` is opened by the room, in a new tab, once the candidate
 * has pressed start; it answers a page that posts the signed `LtiStartAssessment` (form field `JWT`)
 * to the platform's `start_assessment_url`, where the assessment itself opens. A refusal is a clear
 * page with its status and one log line.
 */
export function registerLtiProctoringRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { services } = deps;

  app.get<TokenRoute>('/lti/start-assessment/:token', { schema: { hide: true } }, async (request, reply) => {
    // The room opens this page in the candidate's browser, whose languages it carries.
    const t = pageTranslator(request);
    try {
      const message = await buildStartAssessment(
        { db: deps.database.db, keys: services.ltiKeys },
        request.params.token,
      );
      request.log.info(
        { session: message.sessionId, toolProvider: message.toolProviderId },
        'lti start assessment sent',
      );
      return sendPage(
        reply,
        autoSubmitPage(
          message.action,
          { JWT: message.jwt },
          {
            title: t.t('server.lti.startAssessment.title'),
            message: t.t('server.lti.startAssessment.message'),
            t,
          },
        ),
      );
    } catch (error) {
      if (!(error instanceof StartAssessmentRefused)) throw error;
      request.log.warn({ code: error.code }, 'lti start assessment refused');
      return sendPage(
        reply,
        messagePage(
          t.t('server.lti.startAssessment.refusedTitle'),
          refusalText(t, error.code, error.message),
          {
            status: error.status,
            t,
          },
        ),
      );
    }
  });
}
