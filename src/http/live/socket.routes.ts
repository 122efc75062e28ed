import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Unauthorized } from '../../domain/errors.ts';
import { liveCandidate, livePhone, liveWatch } from '../../live/access.ts';
import type { LivePublisherIdentity } from '../../live/engine.ts';
import type { LiveProctor, LiveSocket } from '../../live/hub.ts';
import { MAX_CLIENT_FRAME_BYTES } from '../../live/protocol.ts';
import { registerRoomRateLimit } from '../room/rate-limit.ts';
import type { RouteDeps } from '../route-deps.ts';
import { requireSession } from '../staff/session-cookie.ts';

/** The answer to a plain (not WebSocket) request of a socket's address. */
export const UPGRADE_REQUIRED = 'Upgrade Required: open this address as a WebSocket';

type TokenRoute = { Params: { token: string } };
type ExamRoute = { Params: { examId: string } };

/** What the checks before the upgrade decided, for the socket handler of the same request. */
const candidates = new WeakMap<FastifyRequest, LivePublisherIdentity>();
const phones = new WeakMap<FastifyRequest, LivePublisherIdentity>();
const proctors = new WeakMap<FastifyRequest, LiveProctor>();

/** 426 with `Upgrade: websocket`, as a JSON error like every other refusal. Returns the reply. */
function upgradeRequired(reply: FastifyReply): FastifyReply {
  return reply
    .code(426)
    .header('upgrade', 'websocket')
    .type('application/json; charset=utf-8')
    .send({ error: UPGRADE_REQUIRED });
}

/**
 * A frame this large closes the socket (ws answers 1009) instead of being read: an oversized but
 * bounded one still gets the hub's non-fatal error.
 */
const MAX_PAYLOAD_BYTES = 4 * MAX_CLIENT_FRAME_BYTES;

/**
 * The live-proctoring WebSockets (docs/live-proctoring.md, "Sockets"), handed to the hub once open.
 * Registers @fastify/websocket first, so it must come before every other route: a handshake on a
 * path that serves no socket is then upgraded and closed at once. Closing the server closes the hub
 * (every socket told why) before the plugin's own WebSocket server. Each socket is judged before
 * the upgrade, so a refusal is the usual JSON error and no socket opens:
 *
 * - `GET /live/room/:token`: the candidate's room (the token is the credential, rate-limited with
 *   the room API); 404 unknown token, 409 finished session or an exam that is not live_proctoring.
 * - `GET /live/mobile/:token`: the candidate's phone in a `mobile_cam` exam (the pairing token is the
 *   credential, rate-limited with the phone API); 404 unknown or replaced token, 409 finished
 *   session, an exam without a phone or one that is not live_proctoring.
 * - `GET /live/exams/:examId`: a proctor's wall (the staff session cookie; `Origin` must be
 *   PUBLIC_URL's, as a cross-site page may open a WebSocket with the cookie); 403 without a session
 *   or from another origin, 404 an exam out of scope, 403 an actor who may not proctor in it, 409 an
 *   exam that is not live_proctoring.
 *
 * A request that is not a WebSocket handshake is answered 426. Both are left out of the OpenAPI
 * document (it describes HTTP operations). Returns once the routes are registered.
 */
export async function registerLiveSockets(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { config, services, database, hub } = deps;
  const ownOrigin = new URL(config.publicUrl).origin;

  await app.register(websocket, {
    options: { maxPayload: MAX_PAYLOAD_BYTES },
    // A browser going away mid-frame is routine, not an error of the service.
    errorHandler: (error, socket: LiveSocket, request) => {
      request.log.debug({ err: error }, 'live socket error');
      socket.terminate();
    },
    preClose: async () => {
      await hub.close();
      (app.websocketServer as { close(): void }).close();
    },
  });

  // Its own scope: the room's rate limit (one budget per token, shared with /api/room) applies here only.
  await app.register((scope, _options, done) => {
    registerRoomRateLimit(scope, deps);
    scope.route<TokenRoute>({
      method: 'GET',
      url: '/live/room/:token',
      schema: { hide: true },
      preHandler: async (request, reply) => {
        if (!request.ws) return upgradeRequired(reply);
        candidates.set(request, await liveCandidate(services.room, request.params.token));
        return undefined;
      },
      handler: (_request, reply) => upgradeRequired(reply),
      wsHandler: (socket: LiveSocket, request) => {
        const who = candidates.get(request);
        if (who === undefined) {
          socket.close(1011);
          return;
        }
        hub.candidate(socket, who);
      },
    });
    done();
  });

  // The phone's: its pairing token's budget, shared with the phone API (/api/mobile).
  await app.register((scope, _options, done) => {
    registerRoomRateLimit(scope, deps, 'phone');
    scope.route<TokenRoute>({
      method: 'GET',
      url: '/live/mobile/:token',
      schema: { hide: true },
      preHandler: async (request, reply) => {
        if (!request.ws) return upgradeRequired(reply);
        phones.set(request, await livePhone(services.mobile, request.params.token));
        return undefined;
      },
      handler: (_request, reply) => upgradeRequired(reply),
      wsHandler: (socket: LiveSocket, request) => {
        const who = phones.get(request);
        if (who === undefined) {
          socket.close(1011);
          return;
        }
        hub.phone(socket, who);
      },
    });
    done();
  });

  app.route<ExamRoute>({
    method: 'GET',
    url: '/live/exams/:examId',
    schema: { hide: true },
    preHandler: async (request, reply) => {
      if (!request.ws) return upgradeRequired(reply);
      const origin = request.headers.origin;
      if (origin !== ownOrigin) {
        throw new Unauthorized(`live socket from origin ${(origin ?? 'none').slice(0, 100)}`);
      }
      const { session, token } = await requireSession(services, request);
      if (session.enrolmentOnly) {
        throw new Unauthorized(`user ${session.actor.id} must enrol a second factor first`);
      }
      const watch = await liveWatch(database.db, session.actor, request.params.examId);
      proctors.set(request, {
        examId: watch.examId,
        userId: session.actor.id,
        name: session.name,
        watchesAll: watch.watchesAll,
        mayWatch: watch.mayWatch,
        stillAllowed: async () => (await services.staffAuth.session(token)) !== undefined,
      });
      return undefined;
    },
    handler: (_request, reply) => upgradeRequired(reply),
    wsHandler: (socket: LiveSocket, request) => {
      const who = proctors.get(request);
      if (who === undefined) {
        socket.close(1011);
        return;
      }
      hub.proctor(socket, who);
    },
  });
}
