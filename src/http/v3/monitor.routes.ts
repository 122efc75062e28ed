import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { presentMonitorSnapshotV3 } from './monitor.presenter.ts';
import { monitorSchema } from './monitor.schemas.ts';
import { type MonitorStream, runMonitorStream } from './monitor.stream.ts';

type IdRoute = { Params: { id: string } };

/**
 * True when an `Accept` header asks for `text/event-stream` (a range naming it exactly, with no
 * `q=0`). Wildcards do not count: the stream is asked for by name, the JSON answer is the default.
 */
export function acceptsEventStream(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((range) => {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim());
    if (type.toLowerCase() !== 'text/event-stream') return false;
    const quality = parameters.find((parameter) => /^q\s*=/i.test(parameter));
    return quality === undefined || Number(quality.split('=')[1]) > 0;
  });
}

/**
 * The live monitor of an exam (docs/live-monitor.md): `GET /exams/:id/monitor` answers the
 * snapshot as JSON, or, when Accept names text/event-stream, streams it and its changes. Every
 * failure that can be known before streaming (404, 503) is answered as JSON first. Streams still
 * open when the server closes end with `reconnect`, so a shutdown does not wait for them.
 */
export function registerMonitorRoutes(app: FastifyInstance, { services }: RouteDeps): void {
  const { monitor } = services;
  const streams = new Set<MonitorStream>();

  app.addHook('preClose', (done) => {
    for (const stream of streams) stream.stop('reconnect');
    done();
  });

  app.get<IdRoute>('/exams/:id/monitor', { schema: monitorSchema }, async (request, reply) => {
    const actor = actorOf(request);
    if (!acceptsEventStream(request.headers.accept)) {
      return { monitor: presentMonitorSnapshotV3(await monitor.read(actor, request.params.id)) };
    }
    const feed = await monitor.open(actor, request.params.id);
    const body = new PassThrough();
    const stream = runMonitorStream(feed, body, { log: request.log });
    streams.add(stream);
    // The response closes when the client goes (or once the stream ended): stop looking then.
    reply.raw.on('close', () => {
      stream.stop();
      streams.delete(stream);
    });
    return reply
      .header('cache-control', 'no-cache, no-transform')
      .header('x-accel-buffering', 'no')
      .type('text/event-stream; charset=utf-8')
      .send(body);
  });
}
