import type { FastifyRequest } from 'fastify';
import type { Actor } from '../domain/access.ts';
import { Unauthorized } from '../domain/errors.ts';

/** The authenticated caller of a request. Throws Unauthorized if a route was reached without the auth hook. */
export function actorOf(request: FastifyRequest): Actor {
  if (request.actor === undefined) throw new Unauthorized('route reached without authentication');
  return request.actor;
}
