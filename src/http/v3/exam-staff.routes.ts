// Placeholder registered by v3/index.ts; the step 3 capability fills it in.
import type { FastifyInstance } from 'fastify';
import type { ServerDeps } from '../server.ts';

export function registerExamStaffRoutes(_app: FastifyInstance, _deps: ServerDeps): void {}
