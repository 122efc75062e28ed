// Placeholder registered by v3/index.ts; the photos capability (step 4) fills it in.
import type { FastifyInstance } from 'fastify';
import type { ServerDeps } from '../server.ts';

export function registerPhotoRoutes(_app: FastifyInstance, _deps: ServerDeps): void {}
