import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditClient, AuditedSignIn } from '../domain/audit/audit.service.ts';
import { Unauthorized } from '../domain/errors.ts';
import type { Services } from '../services.ts';

/** Where a request came from, for the audit log: the connection's address and its User-Agent. */
export function auditClientOf(request: FastifyRequest): AuditClient {
  const agent = request.headers['user-agent'];
  return { ip: request.ip, userAgent: typeof agent === 'string' ? agent : null };
}

/** Ids in paths are whole numbers; anything else in a path parameter is not kept (see below). */
const ID_PATTERN = /^\d{1,15}$/;

/**
 * The record a route template acts on: the last path parameter and the path segment naming its
 * collection (`/api/v3/exams/:exam_id/documents/:id` → documents, `/api/v3/exams/:id/add_comanager`
 * → exams). Only a numeric id is kept: a parameter that is not one (an LMS id, say) is a value the
 * client chose, and values stay out of the log. Returns nulls when the route names no record.
 */
export function auditTarget(
  template: string,
  params: unknown,
): { targetType: string | null; targetId: number | null } {
  const segments = template.split('/').filter((segment) => segment !== '');
  for (let index = segments.length - 1; index > 0; index -= 1) {
    const segment = segments[index] ?? '';
    if (!segment.startsWith(':')) continue;
    const collection = segments[index - 1] ?? '';
    if (collection.startsWith(':')) break;
    const values = typeof params === 'object' && params !== null ? (params as Record<string, unknown>) : {};
    const name = segment.slice(1);
    const value = Object.hasOwn(values, name) ? values[name] : undefined;
    return {
      targetType: collection,
      targetId: typeof value === 'string' && ID_PATTERN.test(value) ? Number(value) : null,
    };
  }
  return { targetType: null, targetId: null };
}

/**
 * Records every successful (2xx) state-changing request of an authenticated staff caller in the
 * scope (V3, V2): the actor, `METHOD /route/:template`, the target, the status and where it came from.
 * Reads (GET, HEAD) cost nothing. It runs in onSend, before the answer leaves, so a client that has
 * its answer finds the event already written; a failed write is logged and the answer still goes
 * (the change it records has happened, and an error answer would say otherwise).
 */
export function registerAuditHook(app: FastifyInstance, services: Services): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const { actor } = request;
    const status = reply.statusCode;
    if (actor === undefined || request.method === 'GET' || request.method === 'HEAD') return payload;
    if (status < 200 || status > 299) return payload;
    const template = request.routeOptions.url;
    if (template === undefined) return payload;
    try {
      await services.audit.recordWrite({
        actor,
        action: `${request.method} ${template}`,
        ...auditTarget(template, request.params),
        status,
        client: auditClientOf(request),
      });
    } catch (error) {
      request.log.error({ err: error, action: `${request.method} ${template}` }, 'audit event not recorded');
    }
    return payload;
  });
}

/**
 * Records a sign-in outcome, sign-out or password change of this request. A failed write is logged,
 * never answered: the sign-in itself happened. Resolves when written (or logged).
 */
export async function recordSignInEvent(
  services: Services,
  request: FastifyRequest,
  event: Omit<AuditedSignIn, 'client'>,
): Promise<void> {
  try {
    await services.audit.recordSignIn({ ...event, client: auditClientOf(request) });
  } catch (error) {
    request.log.error({ err: error, action: event.action }, 'audit event not recorded');
  }
}

/**
 * Runs a password check, recording a refusal (403) as `sign_in_failed` with the email typed, then
 * rethrowing it. A throttled attempt (429) is not recorded: its password was never checked, and
 * recording each would let anyone fill the log at no cost. Returns what `attempt` returns.
 */
export async function recordingRefusal<T>(
  services: Services,
  request: FastifyRequest,
  email: string,
  attempt: () => Promise<T>,
): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    if (error instanceof Unauthorized) {
      await recordSignInEvent(services, request, { action: 'sign_in_failed', email, status: 403 });
    }
    throw error;
  }
}
