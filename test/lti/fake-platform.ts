import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createRemoteJWKSet,
  exportJWK,
  generateKeyPair,
  type CryptoKey,
  type JWK,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from 'jose';

/**
 * An in-process LTI 1.3 platform (an LMS) on a random loopback port, for the LTI tests (docs/lti.md):
 * its RSA key pair and key set, signed `id_token`s, the OIDC authorization endpoint that checks the
 * tool's authentication request and answers with the launch, a token endpoint that checks the tool's
 * client assertion against the tool's own /lti/jwks, and recorders for what the tool sends back
 * (Assessment Control Service calls, LtiStartAssessment posts, deep-linking responses). A course
 * page frames a launch, with platform storage (1EdTech postMessage) when asked, or links to it
 * top-level, for browser tests. Proctoring Services end to end: the start-assessment endpoint
 * verifies the tool's LtiStartAssessment and shows "the assessment", whose submit link is the
 * LtiEndAssessment launch of the same attempt.
 *
 * The service under test must run with OUTBOUND_ALLOWLIST naming 127.0.0.1.
 */

/** The claim names of LTI 1.3, shortened. */
export const CLAIM = {
  messageType: 'https://purl.imsglobal.org/spec/lti/claim/message_type',
  version: 'https://purl.imsglobal.org/spec/lti/claim/version',
  deploymentId: 'https://purl.imsglobal.org/spec/lti/claim/deployment_id',
  targetLinkUri: 'https://purl.imsglobal.org/spec/lti/claim/target_link_uri',
  resourceLink: 'https://purl.imsglobal.org/spec/lti/claim/resource_link',
  roles: 'https://purl.imsglobal.org/spec/lti/claim/roles',
  context: 'https://purl.imsglobal.org/spec/lti/claim/context',
  custom: 'https://purl.imsglobal.org/spec/lti/claim/custom',
  launchPresentation: 'https://purl.imsglobal.org/spec/lti/claim/launch_presentation',
  deepLinkingSettings: 'https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings',
  attemptNumber: 'https://purl.imsglobal.org/spec/lti-ap/claim/attempt_number',
  startAssessmentUrl: 'https://purl.imsglobal.org/spec/lti-ap/claim/start_assessment_url',
  sessionData: 'https://purl.imsglobal.org/spec/lti-ap/claim/session_data',
  acs: 'https://purl.imsglobal.org/spec/lti-ap/claim/acs',
  verifiedUser: 'https://purl.imsglobal.org/spec/lti-ap/claim/verified_user',
} as const;

export const ROLE = {
  learner: 'http://purl.imsglobal.org/vocab/lis/v2/membership#Learner',
  instructor: 'http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor',
  administrator: 'http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator',
} as const;

/** A request the platform received from the tool, as recorded. */
export interface Recorded {
  readonly headers: http.IncomingHttpHeaders;
  /** A form body's fields, or a JSON body's top-level string fields. */
  readonly fields: Readonly<Record<string, string>>;
  /** A JSON body, parsed; undefined for a form. */
  readonly json: unknown;
}

/** What a test sets for a user the platform launches (by login_hint). */
export type LaunchClaims = Record<string, unknown>;

export interface FakePlatform {
  /** http://127.0.0.1:<port>; also the issuer. */
  readonly url: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly deploymentId: string;
  readonly authLoginUrl: string;
  readonly authTokenUrl: string;
  readonly jwksUrl: string;
  readonly acsUrl: string;
  readonly startAssessmentUrl: string;
  readonly deepLinkReturnUrl: string;
  /** The claims the auth endpoint signs for each login_hint (merged over launchClaims' defaults). */
  readonly launches: Map<string, LaunchClaims>;
  /** Cache-Control of the key set (null: none sent). Default `max-age=300`. */
  jwksCacheControl: string | null;
  /** How many times the key set was fetched (a 304 counts too). */
  readonly jwksFetches: number;
  /** The authentication requests the auth endpoint accepted (their query), in order. */
  readonly authRequests: readonly URLSearchParams[];
  /** Why the auth endpoint refused requests, in order. */
  readonly authRefusals: readonly string[];
  /** Client-credentials grants: the verified client assertion's claims and the scope asked for. */
  readonly tokenGrants: readonly { readonly assertion: JWTPayload; readonly scope: string }[];
  /** Status the ACS answers with next (default 200). */
  acsStatus: number;
  readonly acsCalls: readonly Recorded[];
  readonly startAssessmentPosts: readonly Recorded[];
  /**
   * The LtiStartAssessment messages the start-assessment endpoint verified against the tool's key
   * set (a post that does not verify is answered 401 and appears only in startAssessmentPosts).
   */
  readonly startAssessments: readonly JWTPayload[];
  readonly deepLinkReturns: readonly Recorded[];
  /**
   * The default claims of a resource-link launch of user `sub` (learner), overridden by `overrides`
   * (a key set to undefined is left out). Returns them.
   */
  launchClaims(sub: string, overrides?: LaunchClaims): LaunchClaims;
  /**
   * The claims of an `LtiStartProctoring` launch of `sub` (Proctoring Services): start_assessment_url
   * the platform's recorder, `sessionData`, `attemptNumber` (default 1) and, unless `acsActions` is
   * null, the platform's Assessment Control Service offering those actions (default terminate and
   * flag); `overrides` as for launchClaims. Returns them.
   */
  startProctoringClaims(
    sub: string,
    options?: {
      attemptNumber?: number;
      sessionData?: string;
      acsActions?: readonly string[] | null;
      overrides?: LaunchClaims;
    },
  ): LaunchClaims;
  /**
   * The claims of the `LtiEndAssessment` launch that ends the attempt an LtiStartProctoring launch
   * (`started`) began: same user, resource link, context and attempt. Returns them.
   */
  endAssessmentClaims(started: LaunchClaims): LaunchClaims;
  /**
   * The tool's login initiation address for a top-level launch of `loginHint` (what a course page's
   * link or the assessment's submit button opens). Returns it.
   */
  loginUrl(loginHint: string): string;
  /**
   * Signs `claims` as the platform (RS256, the current key; iss, aud, iat, exp added unless given).
   * `key: 'stranger'` signs with a key the platform never published (a bad signature).
   */
  idToken(claims: LaunchClaims, options?: { key?: 'current' | 'stranger'; kid?: string }): Promise<string>;
  /** A new key pair: the key set publishes only the new key from now on. */
  rotateKey(): Promise<void>;
  /** The kid of the current key. */
  readonly kid: string;
  /** Verifies a JWT the tool signed (start assessment, deep-linking response) against the tool's /lti/jwks. */
  verifyToolJwt(jwt: string, audience?: string): Promise<JWTPayload>;
  /** The address of a course page framing a launch of `loginHint` (browser tests). */
  /**
   * The address of a course page launching `loginHint` (browser tests): in an iframe by default, or
   * with `topLevel` a link that opens the launch in the page's own window.
   */
  coursePageUrl(loginHint: string, options?: { storage?: boolean; topLevel?: boolean }): string;
  close(): Promise<void>;
}

interface KeyPair {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

async function newKeyPair(): Promise<KeyPair> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = `platform-${crypto.randomBytes(6).toString('hex')}`;
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function record(request: http.IncomingMessage, body: string): Recorded {
  const type = request.headers['content-type'] ?? '';
  if (type.includes('json')) {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    const fields: Record<string, string> = {};
    if (typeof json === 'object' && json !== null) {
      for (const [name, value] of Object.entries(json)) if (typeof value === 'string') fields[name] = value;
    }
    return { headers: request.headers, fields, json };
  }
  return { headers: request.headers, fields: Object.fromEntries(new URLSearchParams(body)), json: undefined };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function send(response: http.ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  response.end(body);
}

/** The course page's platform storage: answers lti.capabilities, lti.put_data and lti.get_data. */
const STORAGE_SCRIPT = `
const store = new Map();
window.addEventListener('message', (event) => {
  const data = event.data;
  if (typeof data !== 'object' || data === null || typeof data.subject !== 'string') return;
  const reply = { message_id: data.message_id };
  if (data.subject === 'lti.capabilities') {
    reply.subject = 'lti.capabilities.response';
    reply.supported_messages = [{ subject: 'lti.put_data', frame: '_parent' }, { subject: 'lti.get_data', frame: '_parent' }];
  } else if (data.subject === 'lti.put_data') {
    store.set(event.origin + ' ' + data.key, data.value);
    reply.subject = 'lti.put_data.response'; reply.key = data.key; reply.value = data.value;
  } else if (data.subject === 'lti.get_data') {
    reply.subject = 'lti.get_data.response'; reply.key = data.key; reply.value = store.get(event.origin + ' ' + data.key);
  } else return;
  window.__ltiStorage = (window.__ltiStorage || []).concat([data.subject]);
  event.source.postMessage(reply, event.origin);
});
`;

/**
 * Starts the platform. `toolUrl` is the tool's PUBLIC_URL (its redirect URI and key set are derived
 * from it); `clock` the time its tokens are issued at. Returns the running platform.
 */
export async function startFakePlatform(options: {
  toolUrl: string;
  clientId?: string;
  deploymentId?: string;
  /** The time its tokens are issued at (the service's test clock); the real time by default. */
  clock?: { now(): number };
}): Promise<FakePlatform> {
  const toolUrl = options.toolUrl.replace(/\/$/, '');
  const clientId = options.clientId ?? `client-${crypto.randomBytes(4).toString('hex')}`;
  const deploymentId = options.deploymentId ?? 'deployment-1';
  let current = await newKeyPair();
  const stranger = await newKeyPair();
  const launches = new Map<string, LaunchClaims>();
  const authRequests: URLSearchParams[] = [];
  const authRefusals: string[] = [];
  const tokenGrants: { assertion: JWTPayload; scope: string }[] = [];
  const issuedTokens = new Set<string>();
  const seenJtis = new Set<string>();
  const acsCalls: Recorded[] = [];
  const startAssessmentPosts: Recorded[] = [];
  const startAssessments: JWTPayload[] = [];
  const deepLinkReturns: Recorded[] = [];
  const toolKeySet = createRemoteJWKSet(new URL(`${toolUrl}/lti/jwks`), {
    cacheMaxAge: 0,
    cooldownDuration: 0,
  });
  let jwksFetches = 0;

  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const platform: FakePlatform = {
    url,
    issuer: url,
    clientId,
    deploymentId,
    authLoginUrl: `${url}/auth`,
    authTokenUrl: `${url}/token`,
    jwksUrl: `${url}/jwks`,
    acsUrl: `${url}/acs`,
    startAssessmentUrl: `${url}/start-assessment`,
    deepLinkReturnUrl: `${url}/deep-link-return`,
    launches,
    jwksCacheControl: 'max-age=300',
    get jwksFetches() {
      return jwksFetches;
    },
    authRequests,
    authRefusals,
    tokenGrants,
    acsStatus: 200,
    acsCalls,
    startAssessmentPosts,
    startAssessments,
    deepLinkReturns,
    get kid() {
      return current.kid;
    },

    launchClaims(sub, overrides = {}) {
      const claims: LaunchClaims = {
        sub,
        name: `Student ${sub}`,
        email: `${sub}@students.example.org`,
        [CLAIM.messageType]: 'LtiResourceLinkRequest',
        [CLAIM.version]: '1.3.0',
        [CLAIM.deploymentId]: deploymentId,
        [CLAIM.targetLinkUri]: `${toolUrl}/lti/launch`,
        [CLAIM.resourceLink]: { id: 'resource-link-1', title: 'Final exam' },
        [CLAIM.roles]: [ROLE.learner],
        [CLAIM.context]: { id: 'course-1', title: 'Course One' },
        ...overrides,
      };
      for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
      return claims;
    },

    startProctoringClaims(sub, proctoring = {}) {
      const actions = proctoring.acsActions === undefined ? ['terminate', 'flag'] : proctoring.acsActions;
      return platform.launchClaims(sub, {
        [CLAIM.messageType]: 'LtiStartProctoring',
        [CLAIM.attemptNumber]: proctoring.attemptNumber ?? 1,
        [CLAIM.startAssessmentUrl]: `${url}/start-assessment`,
        [CLAIM.sessionData]: proctoring.sessionData ?? `session-data-${sub}`,
        [CLAIM.acs]: actions === null ? undefined : { assessment_control_url: `${url}/acs`, actions },
        ...proctoring.overrides,
      });
    },

    endAssessmentClaims(started) {
      return platform.launchClaims(String(started.sub), {
        name: started.name,
        email: started.email,
        [CLAIM.messageType]: 'LtiEndAssessment',
        [CLAIM.resourceLink]: started[CLAIM.resourceLink],
        [CLAIM.context]: started[CLAIM.context],
        [CLAIM.custom]: started[CLAIM.custom],
        [CLAIM.attemptNumber]: started[CLAIM.attemptNumber],
      });
    },

    loginUrl(loginHint) {
      const login = new URLSearchParams({
        iss: url,
        login_hint: loginHint,
        target_link_uri: `${toolUrl}/lti/launch`,
        client_id: clientId,
        lti_deployment_id: deploymentId,
        lti_message_hint: 'message-hint',
      });
      return `${toolUrl}/lti/login?${login.toString()}`;
    },

    async idToken(claims, signOptions = {}) {
      const pair = signOptions.key === 'stranger' ? stranger : current;
      const now = Math.floor((options.clock?.now() ?? Date.now()) / 1000);
      return new SignJWT({ iss: url, aud: clientId, iat: now, exp: now + 300, ...claims })
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: signOptions.kid ?? pair.kid })
        .sign(pair.privateKey);
    },

    async rotateKey() {
      current = await newKeyPair();
    },

    async verifyToolJwt(jwt, audience = url) {
      const { payload } = await jwtVerify(jwt, toolKeySet, {
        issuer: clientId,
        audience,
        currentDate: new Date(options.clock?.now() ?? Date.now()),
      });
      return payload;
    },

    coursePageUrl(loginHint, pageOptions = {}) {
      const query = new URLSearchParams({ login_hint: loginHint });
      if (pageOptions.storage === true) query.set('storage', '1');
      if (pageOptions.topLevel === true) query.set('top', '1');
      return `${url}/course?${query.toString()}`;
    },

    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  /** Checks the tool's OIDC authentication request. Returns the problems found (none: accepted). */
  function authProblems(query: URLSearchParams): string[] {
    const expected: Record<string, string> = {
      scope: 'openid',
      response_type: 'id_token',
      response_mode: 'form_post',
      prompt: 'none',
      client_id: clientId,
      redirect_uri: `${toolUrl}/lti/launch`,
    };
    const problems = Object.entries(expected)
      .filter(([name, value]) => query.get(name) !== value)
      .map(([name, value]) => `${name} is ${JSON.stringify(query.get(name))}, not ${JSON.stringify(value)}`);
    for (const name of ['state', 'nonce', 'login_hint']) {
      if ((query.get(name) ?? '') === '') problems.push(`${name} is missing`);
    }
    return problems;
  }

  async function authorize(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    query: URLSearchParams,
  ) {
    const problems = authProblems(query);
    const loginHint = query.get('login_hint') ?? '';
    const claims = launches.get(loginHint);
    if (claims === undefined) problems.push(`no launch for login_hint ${JSON.stringify(loginHint)}`);
    if (problems.length > 0 || claims === undefined) {
      authRefusals.push(problems.join('; '));
      send(response, 400, 'application/json', JSON.stringify({ error: 'invalid_request', problems }));
      return;
    }
    authRequests.push(query);
    const idToken = await platform.idToken({ ...claims, nonce: query.get('nonce') });
    const action = query.get('redirect_uri') ?? '';
    const state = query.get('state') ?? '';
    if ((request.headers.accept ?? '').includes('application/json')) {
      send(response, 200, 'application/json', JSON.stringify({ action, id_token: idToken, state }));
      return;
    }
    send(
      response,
      200,
      'text/html; charset=utf-8',
      `<!DOCTYPE html><html><head><title>Platform</title></head><body>
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="id_token" value="${escapeHtml(idToken)}">
<input type="hidden" name="state" value="${escapeHtml(state)}">
<button type="submit">Continue</button></form>
<script>document.forms[0].submit();</script></body></html>`,
    );
  }

  async function token(request: http.IncomingMessage, response: http.ServerResponse, body: string) {
    const form = new URLSearchParams(body);
    const refuse = (description: string) =>
      send(
        response,
        400,
        'application/json',
        JSON.stringify({ error: 'invalid_client', error_description: description }),
      );
    if (form.get('grant_type') !== 'client_credentials')
      return refuse('grant_type is not client_credentials');
    if (form.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer') {
      return refuse('client_assertion_type is not jwt-bearer');
    }
    let assertion: JWTPayload;
    try {
      ({ payload: assertion } = await jwtVerify(form.get('client_assertion') ?? '', toolKeySet, {
        issuer: clientId,
        subject: clientId,
        audience: platform.authTokenUrl,
        currentDate: new Date(options.clock?.now() ?? Date.now()),
      }));
    } catch (error) {
      return refuse(`client assertion refused: ${(error as Error).message}`);
    }
    if (typeof assertion.jti !== 'string' || seenJtis.has(assertion.jti))
      return refuse('jti missing or reused');
    seenJtis.add(assertion.jti);
    const scope = form.get('scope') ?? '';
    tokenGrants.push({ assertion, scope });
    const accessToken = crypto.randomBytes(16).toString('hex');
    issuedTokens.add(accessToken);
    void request;
    send(
      response,
      200,
      'application/json',
      JSON.stringify({ access_token: accessToken, token_type: 'Bearer', expires_in: 3600, scope }),
    );
  }

  /**
   * The platform's side of LtiStartAssessment: verifies the tool's message (its key set, iss = the
   * client, aud = the platform, the message type), then opens "the assessment": a page with a button
   * that submits it, which is an LtiEndAssessment launch of the same attempt (registered under the
   * login hint `<hint of the LtiStartProctoring launch>.end`, found by the echoed session_data).
   */
  async function startAssessment(response: http.ServerResponse, posted: Recorded) {
    let claims: JWTPayload;
    try {
      claims = await platform.verifyToolJwt(posted.fields.JWT ?? '');
      if (claims[CLAIM.messageType] !== 'LtiStartAssessment') throw new Error('not an LtiStartAssessment');
    } catch (error) {
      send(
        response,
        401,
        'text/html; charset=utf-8',
        `<!DOCTYPE html><html lang="en"><head><title>Assessment refused</title></head><body><main>
<h1>Assessment refused</h1><p>${escapeHtml((error as Error).message)}</p></main></body></html>`,
      );
      return;
    }
    startAssessments.push(claims);
    const started = [...launches.entries()].find(
      ([, launch]) =>
        launch[CLAIM.messageType] === 'LtiStartProctoring' &&
        launch[CLAIM.sessionData] === claims[CLAIM.sessionData] &&
        launch[CLAIM.attemptNumber] === claims[CLAIM.attemptNumber],
    );
    let submit = '';
    if (started !== undefined) {
      const endHint = `${started[0]}.end`;
      launches.set(endHint, platform.endAssessmentClaims(started[1]));
      submit = `<p><a id="submit-assessment" href="${escapeHtml(platform.loginUrl(endHint))}">Submit the assessment</a></p>`;
    }
    send(
      response,
      200,
      'text/html; charset=utf-8',
      `<!DOCTYPE html><html lang="en"><head><title>Assessment</title></head><body><main>
<h1>Assessment started</h1>
<p>Attempt ${escapeHtml(String(claims[CLAIM.attemptNumber]))}: answer the questions, then submit.</p>
${submit}
</main></body></html>`,
    );
  }

  function coursePage(response: http.ServerResponse, query: URLSearchParams) {
    const login = new URLSearchParams({
      iss: url,
      login_hint: query.get('login_hint') ?? '',
      target_link_uri: `${toolUrl}/lti/launch`,
      client_id: clientId,
      lti_deployment_id: deploymentId,
      lti_message_hint: 'message-hint',
    });
    const storage = query.get('storage') === '1';
    if (storage) login.set('lti_storage_target', '_parent');
    if (query.get('top') === '1') {
      // Some platforms open a tool in the whole window: a plain link, no frame.
      send(
        response,
        200,
        'text/html; charset=utf-8',
        `<!DOCTYPE html><html lang="en"><head><title>Course One</title></head><body><main>
<h1>Course One</h1>
<p><a id="launch" href="${escapeHtml(`${toolUrl}/lti/login?${login.toString()}`)}">Final exam</a></p>
</main></body></html>`,
      );
      return;
    }
    send(
      response,
      200,
      'text/html; charset=utf-8',
      `<!DOCTYPE html><html><head><title>Course One</title></head><body>
<h1>Course One</h1>
<iframe id="tool" title="Exam" src="${escapeHtml(`${toolUrl}/lti/login?${login.toString()}`)}"
 width="800" height="500" allow="camera; microphone; display-capture"></iframe>
${storage ? `<script>${STORAGE_SCRIPT}</script>` : ''}
</body></html>`,
    );
  }

  server.on('request', (request, response) => {
    void (async () => {
      const address = new URL(request.url ?? '/', url);
      const body = await readBody(request);
      const path = address.pathname;
      if (path === '/jwks' && request.method === 'GET') {
        jwksFetches += 1;
        const text = JSON.stringify({ keys: [current.publicJwk] });
        const etag = `"${crypto.createHash('sha256').update(text).digest('hex').slice(0, 16)}"`;
        const headers: Record<string, string> = { 'content-type': 'application/json', etag };
        if (platform.jwksCacheControl !== null) headers['cache-control'] = platform.jwksCacheControl;
        if (request.headers['if-none-match'] === etag) {
          response.writeHead(304, headers);
          response.end();
          return;
        }
        response.writeHead(200, headers);
        response.end(text);
        return;
      }
      if (path === '/auth' && (request.method === 'GET' || request.method === 'POST')) {
        const query = request.method === 'GET' ? address.searchParams : new URLSearchParams(body);
        await authorize(request, response, query);
        return;
      }
      if (path === '/token' && request.method === 'POST') {
        await token(request, response, body);
        return;
      }
      if (path === '/acs' && request.method === 'POST') {
        const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
        if (bearer === undefined || !issuedTokens.has(bearer)) {
          send(response, 401, 'application/json', JSON.stringify({ error: 'invalid_token' }));
          return;
        }
        const recorded = record(request, body);
        acsCalls.push(recorded);
        const action = (recorded.json as { action?: unknown } | undefined)?.action;
        send(response, platform.acsStatus, 'application/json', JSON.stringify({ action, status: 'ok' }));
        return;
      }
      if (path === '/start-assessment' && request.method === 'POST') {
        const posted = record(request, body);
        startAssessmentPosts.push(posted);
        await startAssessment(response, posted);
        return;
      }
      if (path === '/deep-link-return' && request.method === 'POST') {
        deepLinkReturns.push(record(request, body));
        send(
          response,
          200,
          'text/html; charset=utf-8',
          '<!DOCTYPE html><title>Linked</title><h1>Content linked</h1>',
        );
        return;
      }
      if (path === '/course' && request.method === 'GET') {
        coursePage(response, address.searchParams);
        return;
      }
      send(response, 404, 'text/plain', 'Not Found');
    })().catch((error: unknown) => {
      if (!response.headersSent) send(response, 500, 'text/plain', String(error));
    });
  });

  return platform;
}

/**
 * The fields of a tool provider row registering `platform` (LTI 1.3), for a test that creates one.
 * Returns them.
 */
export function toolProviderFields(platform: FakePlatform): {
  lti_version: '1.3';
  issuer: string;
  client_id: string;
  deployment_id: string;
  auth_login_url: string;
  auth_token_url: string;
  jwks_url: string;
} {
  return {
    lti_version: '1.3',
    issuer: platform.issuer,
    client_id: platform.clientId,
    deployment_id: platform.deploymentId,
    auth_login_url: platform.authLoginUrl,
    auth_token_url: platform.authTokenUrl,
    jwks_url: platform.jwksUrl,
  };
}
