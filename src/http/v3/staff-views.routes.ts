import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { StaffViewKind } from '../../domain/candidate-data/candidate-data.ts';
import { SESSION_FILE_KINDS } from '../../domain/student-sessions/session-file.ts';
import { actorOf } from '../actor.ts';
import { auditClientOf } from '../audit.ts';
import type { RouteDeps } from '../route-deps.ts';
import { isoTime } from '../time.ts';
import { commonErrors, errorBody, idParam, signedParams, v3Headers } from './common.schemas.ts';

type IdRoute = { Params: { id: string } };

/**
 * What each staff read of a candidate's data counts as (docs/candidate-data.md, "Who looked"): the
 * route template and, for the files listing, the kinds it answered. Handing out the expiring
 * addresses is the look: the addresses carry no identity (with S3 they lead straight to the
 * bucket), so the moment staff receive them is the last one Invigil knows who asked.
 */
function viewedKinds(request: FastifyRequest): readonly StaffViewKind[] {
  const template = request.routeOptions.url ?? '';
  switch (template) {
    case '/api/v3/student_sessions/:id/recordings':
      return ['recordings'];
    case '/api/v3/student_sessions/:id/face_photo':
    case '/api/v3/student_sessions/:id/id_card':
      return ['photos'];
    case '/api/v3/student_sessions/:id/report.pdf':
      return ['report'];
    case '/api/v3/exams/:id/download_exam_documents_zip':
      return ['exam_zip'];
    case '/api/v3/student_sessions/:id/files': {
      const kind = request.input.values.kind;
      if (kind === 'upload') return ['uploads'];
      if (typeof kind === 'string' && (SESSION_FILE_KINDS as readonly string[]).includes(kind))
        return ['recordings'];
      return ['uploads', 'recordings'];
    }
    default:
      return [];
  }
}

const staffViewRecord = {
  type: 'object',
  properties: {
    user_id: { type: ['integer', 'null'] },
    name: {
      type: ['string', 'null'],
      description: 'The user’s name as it is now; null once the account is gone',
    },
    role: { type: ['string', 'null'] },
    what: { type: 'string', enum: ['recordings', 'photos', 'uploads', 'report', 'exam_zip'] },
    at: { type: 'string', format: 'date-time' },
  },
} as const;

const staffViewsSchema = {
  tags: ['student sessions'],
  summary: 'Who of the staff looked at a student session’s data',
  description:
    'Every staff view or download of the session’s recordings (finalised files and chunks), photos, ' +
    'handed-in files and report, and of its exam’s documents zip, oldest first: one entry per user, ' +
    'session and kind per 10 minutes (docs/candidate-data.md). The candidate’s own data download ' +
    'lists the same entries. Readable by whoever may read the session.',
  headers: v3Headers,
  params: idParam(),
  querystring: {
    type: 'object',
    properties: { ...signedParams },
    required: ['timestamp', 'nonce', 'signature'],
  },
  response: {
    200: { type: 'object', properties: { staff_views: { type: 'array', items: staffViewRecord } } },
    404: errorBody,
    ...commonErrors,
  },
} as const;

/**
 * Part 6 of step 19: records the staff reads of a candidate's data as audit events (in onSend, before
 * the answer leaves, like every audit write; a failed write is logged, the answer still goes), and
 * `GET /student_sessions/:id/staff_views` lists them. Returns once registered.
 */
export function registerStaffViewRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const { actor } = request;
    if (actor === undefined || request.method !== 'GET') return payload;
    if (reply.statusCode < 200 || reply.statusCode > 299) return payload;
    const kinds = viewedKinds(request);
    const targetId = Number((request.params as { id?: string }).id);
    if (kinds.length === 0 || !Number.isSafeInteger(targetId)) return payload;
    try {
      for (const kind of kinds) {
        await services.candidateData.recordStaffView({
          actor,
          kind,
          targetId,
          status: reply.statusCode,
          client: auditClientOf(request),
        });
      }
    } catch (error) {
      request.log.error({ err: error }, 'staff view not recorded');
    }
    return payload;
  });

  app.get<IdRoute>('/student_sessions/:id/staff_views', { schema: staffViewsSchema }, async (request) => {
    const views = await services.candidateData.whoLooked(actorOf(request), request.params.id);
    return {
      staff_views: views.map((view) => ({
        user_id: view.userId,
        name: view.name,
        role: view.role,
        what: view.kind,
        at: isoTime(view.at),
      })),
    };
  });
}
