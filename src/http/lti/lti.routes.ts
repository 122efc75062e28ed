import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SIGN_IN_PAGE } from '../../domain/staff-auth/oidc-sign-in.ts';
import { verifyIdToken } from '../../lti/id-token.ts';
import { LaunchRefused, type LtiLaunch } from '../../domain/lti/launch.ts';
import {
  bindingName,
  LoginThrottled,
  LTI_LOGIN_MS,
  matchesHash,
  startLogin,
  type TakenLogin,
} from '../../lti/login.ts';
import { createPlatformKeys } from '../../lti/platform-keys.ts';
import { consumeTicket, createTicket } from '../../domain/lti/tickets.ts';
import { createOutboundHttp } from '../../security/outbound-http.ts';
import { parseFormParams } from '../request-params.ts';
import type { RouteDeps } from '../route-deps.ts';
import { cookieValue, isSecureOrigin, sessionCookie } from '../staff/session-cookie.ts';
import { clientOf } from '../staff/staff-requests.ts';
import type { Translator } from '../../i18n/translate.ts';
import {
  type LtiPage,
  messagePage,
  newWindowPage,
  pageTranslator,
  platformStoragePage,
  refusalText,
  sendPage,
} from './pages.ts';

/**
 * LMS launches over HTTP (docs/lti.md): the LTI 1.3 login initiation (GET and POST /lti/login), the
 * launch (POST /lti/launch: an LTI 1.3 `id_token`, or an LTI 1.1 OAuth-signed form), the
 * platform-storage check (POST /lti/launch/verify), the top-level continuation of a framed staff
 * launch (GET /lti/continue/<ticket>) and the tool's key set (GET /lti/jwks). The pages' scripts and
 * style sheet are the web build's (web/lti), served at /assets/*.
 *
 * The browser binding of an LTI 1.3 login: a cookie (SameSite=None, Partitioned, so it works in the
 * platform's iframe where the browser allows partitioned cookies), or the platform's own storage
 * through postMessage when the login offers `lti_storage_target`; when neither came back, the launch
 * starts again in a top-level window, where a first-party cookie works. Every refusal is a page that
 * says what went wrong and what to do, and one log line `lti launch refused` with its code.
 */

/** How long the ticket of a framed staff launch's "Open Invigil" link lasts, in ms. */
const CONTINUE_TICKET_MS = 5 * 60_000;

/**
 * True when cookies of `publicUrl` may say Secure: https, or a loopback host (browsers treat
 * http://localhost and 127.0.0.1 as secure contexts and keep Secure cookies from them).
 */
function canBeSecure(publicUrl: string): boolean {
  if (isSecureOrigin(publicUrl)) return true;
  const host = new URL(publicUrl).hostname;
  return host === 'localhost' || host === '127.0.0.1' || host === '[::1]';
}

/**
 * The binding cookie of a login: sent back only to /lti, for as long as the login waits. Where it
 * can be Secure it is SameSite=None and Partitioned (CHIPS), so a browser that blocks third-party
 * cookies still keeps it in the platform's iframe, in the platform's partition; over plain http
 * (development) SameSite=Lax, which only a top-level launch carries back.
 */
function bindingCookie(name: string, value: string, publicUrl: string): string {
  const cross = canBeSecure(publicUrl) ? ['SameSite=None', 'Secure', 'Partitioned'] : ['SameSite=Lax'];
  return [`${name}=${value}`, 'Path=/lti', 'HttpOnly', ...cross, `Max-Age=${LTI_LOGIN_MS / 1000}`].join('; ');
}

/** True when the browser says the request loads a frame (the platform shows the tool in an iframe). */
function isFramed(request: FastifyRequest): boolean {
  const dest = request.headers['sec-fetch-dest'];
  return dest === 'iframe' || dest === 'frame';
}

/** The request's parameters (query and form body) as single strings; arrays and objects dropped. */
function textParams(request: FastifyRequest): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.input.values)) {
    if (typeof value === 'string') params[name] = value;
  }
  return params;
}

/**
 * The form body's fields exactly as sent (every `name=value` pair decoded as a form, the last of
 * a repeated name kept), for the LTI 1.1 signature, which covers names such as `custom_a[b]` that
 * the shared parser would read as structures.
 */
function rawFormParams(request: FastifyRequest): Record<string, string> {
  const raw = (request.body as { raw?: unknown } | undefined)?.raw;
  if (typeof raw !== 'string') return textParams(request);
  return Object.fromEntries(new URLSearchParams(raw));
}

/** A heading for a refusal of `status`, in `t`'s language. */
function refusalTitle(t: Translator, status: number): string {
  if (status === 401) return t.t('server.lti.refusal.unverified');
  if (status === 403) return t.t('server.lti.refusal.notAllowed');
  if (status === 404) return t.t('server.lti.refusal.unknownPlatform');
  if (status >= 500) return t.t('server.lti.refusal.unreachable');
  return t.t('server.lti.refusal.unusable');
}

/**
 * The catalogue's words of each page a launch may end on instead of the room (LaunchOutcome
 * `message`), by the outcome's English title; a title not listed is shown as the outcome says it.
 */
const OUTCOME_KEYS: Readonly<Record<string, { readonly title: string; readonly message: string }>> = {
  'Exam finished': {
    title: 'server.lti.outcome.examFinished.title',
    message: 'server.lti.outcome.examFinished.message',
  },
  'Exam not ready': {
    title: 'server.lti.outcome.examNotReady.title',
    message: 'server.lti.outcome.examNotReady.message',
  },
  'Exam handed in': {
    title: 'server.lti.outcome.handedIn.title',
    message: 'server.lti.outcome.handedIn.message',
  },
};

/** What a binding ticket carries between the launch and its platform-storage check. */
interface BindingTicket {
  readonly launch: LtiLaunch;
  readonly bindingHash: string;
  readonly loginParams: Readonly<Record<string, string>>;
}

/** What a continue ticket carries: the staff user to sign in and where to. */
interface ContinueTicket {
  readonly userId: number;
  readonly path: string;
  readonly toolProviderId: number;
}

/** Registers the LTI routes (see the module comment). */
export async function registerLtiRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { services, config, clock } = deps;
  const { db } = deps.database;
  const { publicUrl } = config;
  const staffCookieSecure = isSecureOrigin(publicUrl);
  const platformKeys = createPlatformKeys({
    outbound: createOutboundHttp({ allowlist: config.outboundAllowlist }),
    clock,
  });
  const { ltiLaunch } = services;

  /**
   * Logs a refusal and answers its page, in the language the launch names (`launchLocale`, when it
   * was read before the refusal) or the browser's.
   */
  function refuse(
    request: FastifyRequest,
    reply: FastifyReply,
    error: unknown,
    toolProvider?: number,
    launchLocale?: string | null,
  ): FastifyReply {
    const t = pageTranslator(request, launchLocale);
    if (!(error instanceof LaunchRefused)) {
      request.log.error({ err: error, toolProvider }, 'lti launch failed');
      return sendPage(
        reply,
        messagePage(t.t('server.lti.failed.title'), t.t('server.lti.failed.message'), { status: 503, t }),
      );
    }
    request.log.warn({ code: error.code, toolProvider, reason: error.message }, 'lti launch refused');
    if (error instanceof LoginThrottled) reply.header('retry-after', String(error.retryAfterSeconds));
    return sendPage(
      reply,
      messagePage(refusalTitle(t, error.status), refusalText(t, error.code, error.message), {
        status: error.status,
        t,
      }),
    );
  }

  /** The page that starts the same login again in a top-level window, in `t`'s language. */
  function relaunchPage(loginParams: Readonly<Record<string, string>>, t: Translator): LtiPage {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(loginParams)) {
      // The top-level window has no platform frame to store in: the cookie works there.
      if (name !== 'lti_storage_target') query.set(name, value);
    }
    return newWindowPage({
      title: t.t('server.lti.relaunch.title'),
      message: t.t('server.lti.relaunch.message'),
      url: `${publicUrl}/lti/login?${query.toString()}`,
      button: t.t('server.lti.relaunch.button'),
      t,
    });
  }

  /** Signs a staff user in and sends the browser to `path` (or to the second-factor step). */
  async function signInAndGo(
    request: FastifyRequest,
    reply: FastifyReply,
    userId: number,
    path: string,
    toolProviderId: number,
  ): Promise<FastifyReply> {
    const result = await ltiLaunch.signIn(userId, clientOf(request), toolProviderId);
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    if (result.pending !== undefined) {
      // A user with a second factor gives a code first, as after an OIDC sign-in; the pending token
      // travels in the fragment, which no server and no Referer sees.
      const fragment = new URLSearchParams({
        pending_token: result.pending.token,
        expires_at: new Date(result.pending.expiresAt).toISOString(),
        return_to: path,
      });
      return reply.redirect(`${publicUrl}${SIGN_IN_PAGE}#${fragment.toString()}`, 303);
    }
    reply.header('set-cookie', sessionCookie(result.token, staffCookieSecure));
    return reply.redirect(`${publicUrl}${path}`, 303);
  }

  /** Carries out a verified launch and answers with what it leads to. */
  async function carryOut(
    request: FastifyRequest,
    reply: FastifyReply,
    launch: LtiLaunch,
  ): Promise<FastifyReply> {
    const outcome = await ltiLaunch.launch(launch, clientOf(request));
    const framed = isFramed(request);
    const t = pageTranslator(request, launch.locale);
    request.log.info(
      {
        toolProvider: launch.toolProvider.id,
        version: launch.version,
        kind: launch.messageKind,
        outcome: outcome.kind,
        framed,
      },
      'lti launch',
    );
    if (outcome.kind === 'message') {
      const keys = OUTCOME_KEYS[outcome.title];
      return sendPage(
        reply,
        messagePage(
          keys === undefined ? outcome.title : t.t(keys.title),
          keys === undefined ? outcome.message : t.t(keys.message),
          {
            status: outcome.status,
            returnUrl: launch.returnUrl,
            t,
          },
        ),
      );
    }
    if (outcome.kind === 'room') {
      const room = `${publicUrl}/room/${encodeURIComponent(outcome.token)}`;
      // The room refuses framing and needs the camera and screen capture: a top-level window.
      if (framed) {
        return sendPage(
          reply,
          newWindowPage({
            title: t.t('server.lti.room.title'),
            message: t.t('server.lti.room.message'),
            url: room,
            button: t.t('server.lti.room.button'),
            t,
          }),
        );
      }
      return reply
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .redirect(room, 303);
    }
    if (framed) {
      // The console refuses framing, and its Lax session cookie would not be kept in the frame.
      const payload: ContinueTicket = {
        userId: outcome.userId,
        path: outcome.path,
        toolProviderId: launch.toolProvider.id,
      };
      const ticket = await createTicket({ db, clock }, 'continue', payload, CONTINUE_TICKET_MS);
      return sendPage(
        reply,
        newWindowPage({
          title: t.t('server.lti.console.title'),
          message: t.t('server.lti.console.message'),
          url: `${publicUrl}/lti/continue/${ticket}`,
          button: t.t('server.lti.console.button'),
          t,
        }),
      );
    }
    return signInAndGo(request, reply, outcome.userId, outcome.path, launch.toolProvider.id);
  }

  /** After a verified LTI 1.3 token: the browser binding, then the launch. */
  async function checkBinding(
    request: FastifyRequest,
    reply: FastifyReply,
    launch: LtiLaunch,
    login: TakenLogin,
    state: string,
  ): Promise<FastifyReply> {
    const name = bindingName(state);
    if (matchesHash(cookieValue(request.headers, name), login.bindingHash)) {
      // Spent: the cookie has done its work.
      reply.header('set-cookie', `${name}=; Path=/lti; Max-Age=0`);
      return carryOut(request, reply, launch);
    }
    const storageTarget = login.loginParams.lti_storage_target;
    if (login.bindingKind === 'storage' && storageTarget !== undefined) {
      const provider = await db
        .selectFrom('tool_providers')
        .select('auth_login_url')
        .where('id', '=', login.toolProviderId)
        .executeTakeFirst();
      const origin =
        provider?.auth_login_url === null || provider === undefined
          ? undefined
          : new URL(provider.auth_login_url).origin;
      if (origin !== undefined) {
        const payload: BindingTicket = {
          launch,
          bindingHash: login.bindingHash,
          loginParams: login.loginParams,
        };
        const ticket = await createTicket({ db, clock }, 'binding', payload);
        return sendPage(
          reply,
          platformStoragePage(
            {
              mode: 'get',
              target: storageTarget,
              origin,
              key: name,
              verifyAction: '/lti/launch/verify',
              fields: { ticket },
            },
            pageTranslator(request, launch.locale),
          ),
        );
      }
    }
    request.log.info(
      { toolProvider: launch.toolProvider.id, code: 'binding_missing' },
      'lti launch needs a top-level window',
    );
    if (request.headers['sec-fetch-dest'] === 'document') {
      throw new LaunchRefused(
        'binding_missing',
        'Your browser did not keep Invigil’s cookie for this launch. Allow cookies for this site, then open the activity again from your course.',
        400,
      );
    }
    return sendPage(reply, relaunchPage(login.loginParams, pageTranslator(request, launch.locale)));
  }

  app.get('/lti/jwks', { schema: { hide: true } }, async (_request, reply) => {
    const keys = await services.ltiKeys.jwks();
    return reply
      .header('cache-control', 'public, max-age=300')
      .header('access-control-allow-origin', '*')
      .type('application/json; charset=utf-8')
      .send(keys);
  });

  const login = async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      const started = await startLogin({ db, clock, publicUrl }, textParams(request), request.ip);
      reply.header('set-cookie', bindingCookie(started.bindingName, started.binding, publicUrl));
      if (started.storageTarget !== null) {
        return sendPage(
          reply,
          platformStoragePage(
            {
              mode: 'put',
              target: started.storageTarget,
              origin: started.platformOrigin,
              key: started.bindingName,
              value: started.binding,
              next: started.authUrl,
            },
            pageTranslator(request),
          ),
        );
      }
      return reply
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .redirect(started.authUrl, 302);
    } catch (error) {
      return refuse(request, reply, error);
    }
  };

  // Form posts to these routes are read here with their raw text kept (see rawFormParams).
  await app.register((scope, _options, done) => {
    scope.removeContentTypeParser('application/x-www-form-urlencoded');
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: config.maxBodyBytes },
      (_request, body: string | Buffer, parsed) => {
        try {
          const text = body.toString();
          parsed(null, { ...parseFormParams(text), raw: text });
        } catch (error) {
          parsed(error as Error);
        }
      },
    );

    scope.get('/lti/login', { schema: { hide: true } }, login);
    scope.post('/lti/login', { schema: { hide: true } }, login);

    scope.post('/lti/launch', { schema: { hide: true } }, async (request, reply) => {
      const params = rawFormParams(request);
      let toolProvider: number | undefined;
      try {
        if (params.oauth_signature !== undefined && params.id_token === undefined) {
          const launch = await ltiLaunch.verifyLti11({ method: 'POST', params });
          toolProvider = launch.toolProvider.id;
          return await carryOut(request, reply, launch);
        }
        if (params.id_token === undefined && params.error !== undefined) {
          // The platform's authorization endpoint answered an error instead of a launch.
          throw new LaunchRefused(
            'platform_error',
            `Your learning platform refused the launch (${params.error.slice(0, 100)}). Open the activity again from your course.`,
          );
        }
        if (params.id_token === undefined && params.state === undefined) {
          throw new LaunchRefused(
            'invalid_launch',
            'This address expects a launch from a learning platform (an LTI 1.3 id_token or an LTI 1.1 signed form).',
          );
        }
        const verified = await verifyIdToken(
          { db, clock, platformKeys },
          { idToken: params.id_token, state: params.state },
        );
        toolProvider = verified.launch.toolProvider.id;
        return await checkBinding(request, reply, verified.launch, verified.login, params.state ?? '');
      } catch (error) {
        // An LTI 1.1 form names its locale even when it cannot be verified (it only picks words).
        return refuse(request, reply, error, toolProvider, params.launch_presentation_locale);
      }
    });

    scope.post('/lti/launch/verify', { schema: { hide: true } }, async (request, reply) => {
      const params = textParams(request);
      try {
        const payload = (await consumeTicket({ db, clock }, 'binding', params.ticket)) as
          BindingTicket | undefined;
        if (payload === undefined) {
          throw new LaunchRefused(
            'invalid_ticket',
            'This launch was already used or took too long. Open the activity again from your course.',
          );
        }
        if (matchesHash(params.binding, payload.bindingHash))
          return await carryOut(request, reply, payload.launch);
        if ((params.binding ?? '') === '') {
          // The platform's storage gave nothing back: a top-level window, where the cookie works.
          request.log.info(
            { toolProvider: payload.launch.toolProvider.id, code: 'storage_empty' },
            'lti launch needs a top-level window',
          );
          return sendPage(
            reply,
            relaunchPage(payload.loginParams, pageTranslator(request, payload.launch.locale)),
          );
        }
        throw new LaunchRefused(
          'binding_mismatch',
          'This launch was started in another browser window. Open the activity again from your course.',
          401,
        );
      } catch (error) {
        return refuse(request, reply, error);
      }
    });
    done();
  });

  app.get<{ Params: { ticket: string } }>(
    '/lti/continue/:ticket',
    { schema: { hide: true } },
    async (request, reply) => {
      try {
        const payload = (await consumeTicket({ db, clock }, 'continue', request.params.ticket)) as
          ContinueTicket | undefined;
        if (payload === undefined) {
          throw new LaunchRefused(
            'invalid_ticket',
            'This link was already used or has expired. Open the activity again from your course.',
          );
        }
        return await signInAndGo(request, reply, payload.userId, payload.path, payload.toolProviderId);
      } catch (error) {
        return refuse(request, reply, error);
      }
    },
  );
}
