// Placeholder registered by v3/index.ts; a step 4 capability fills it in.
import type { FastifyInstance } from 'fastify';
import type { ServerDeps } from '../server.ts';

export function registerExamActionRoutes(_app: FastifyInstance, _deps: ServerDeps): void {}
