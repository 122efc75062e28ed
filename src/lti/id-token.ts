import crypto from 'node:crypto';
import { errors as joseErrors, type JWTPayload, jwtVerify } from 'jose';
import type { Db } from '../db/database.ts';
import type { Clock } from '../domain/clock.ts';
import {
  type DeepLinkingSettings,
  LaunchRefused,
  type LtiLaunch,
  type LtiMessageKind,
  type LtiRole,
  type ProctoringClaims,
} from '../domain/lti/launch.ts';
import {
  findLti13Providers,
  type Lti13Provider,
  providerForDeployment,
  type TakenLogin,
  takeLogin,
} from './login.ts';
import { type PlatformKeys, PlatformKeysUnavailable } from './platform-keys.ts';

/**
 * LTI 1.3 launches: the `id_token` the platform posts to /lti/launch, verified (1EdTech Security
 * Framework 5.1.3, LTI Core 5.3) and read into an LtiLaunch. The state names the pending login
 * (single use, ten minutes), which names the registration whose key set signs the token; then
 * issuer, audience (and `azp`), expiry, nonce, deployment, version and message type.
 */

const LTI = 'https://purl.imsglobal.org/spec/lti/claim/';
const CLAIMS = {
  messageType: `${LTI}message_type`,
  version: `${LTI}version`,
  deploymentId: `${LTI}deployment_id`,
  resourceLink: `${LTI}resource_link`,
  roles: `${LTI}roles`,
  context: `${LTI}context`,
  custom: `${LTI}custom`,
  launchPresentation: `${LTI}launch_presentation`,
  deepLinkingSettings: 'https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings',
  attemptNumber: 'https://purl.imsglobal.org/spec/lti-ap/claim/attempt_number',
  startAssessmentUrl: 'https://purl.imsglobal.org/spec/lti-ap/claim/start_assessment_url',
  sessionData: 'https://purl.imsglobal.org/spec/lti-ap/claim/session_data',
  acs: 'https://purl.imsglobal.org/spec/lti-ap/claim/acs',
} as const;

/** The message types Invigil acts on, and what each is called inside Invigil. */
const MESSAGE_KINDS: Readonly<Record<string, LtiMessageKind>> = {
  LtiResourceLinkRequest: 'resource_link',
  LtiDeepLinkingRequest: 'deep_linking',
  LtiStartProctoring: 'start_proctoring',
  LtiEndAssessment: 'end_assessment',
};

/** Seconds of clock difference tolerated on exp, iat and nbf. */
export const ID_TOKEN_LEEWAY_SECONDS = 60;
/** Longest id_token read (platforms send a few kilobytes). */
const ID_TOKEN_MAX = 64 * 1024;

/** A verified launch with the pending login it came through (its binding is still to be checked). */
export interface VerifiedIdToken {
  readonly launch: LtiLaunch;
  readonly login: TakenLogin;
}

/** The LTI role URIs and what Invigil makes of them (the short forms are LTI 1.3's deprecated ones). */
function roleOf(uri: string): LtiRole | undefined {
  const name = uri.slice(uri.lastIndexOf('#') + 1);
  const scope = uri.includes('/institution/') || uri.includes('/system/') ? 'institution' : 'membership';
  if (scope === 'institution') {
    if (name === 'Administrator' || name === 'SysAdmin') return 'administrator';
    if (name === 'Instructor' || name === 'Faculty') return 'instructor';
    if (name === 'Student' || name === 'Learner') return 'learner';
    return undefined;
  }
  // Membership roles, also sub-roles such as membership/Instructor#TeachingAssistant.
  if (uri.includes('/membership/Instructor#') || name === 'Instructor' || name === 'ContentDeveloper') {
    return 'instructor';
  }
  if (name === 'Administrator') return 'administrator';
  if (name === 'Learner' || uri.includes('/membership/Learner#')) return 'learner';
  if (name === 'Mentor') return undefined;
  return undefined;
}

/** The distinct Invigil roles of an LTI roles claim. Returns them (possibly none). */
export function rolesOf(claim: unknown): LtiRole[] {
  if (!Array.isArray(claim)) return [];
  const found = new Set<LtiRole>();
  for (const uri of claim) {
    if (typeof uri !== 'string') continue;
    const role = roleOf(uri);
    if (role !== undefined) found.add(role);
  }
  return [...found];
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** A claim as it may be shown in a message: its text, or what it is when it is no text. */
function claimText(value: unknown): string {
  if (typeof value === 'string') return value.slice(0, 100);
  return value === undefined ? 'none' : typeof value;
}

function refused(code: string, message: string, status: number): LaunchRefused {
  return new LaunchRefused(code, message, status);
}

/** Reads the claims of a verified token into the launch's parts. Throws LaunchRefused. */
function launchOf(payload: JWTPayload, provider: Lti13Provider): LtiLaunch {
  const kind = MESSAGE_KINDS[String(payload[CLAIMS.messageType])];
  if (kind === undefined) {
    throw refused(
      'unsupported_message_type',
      `Invigil does not handle LTI messages of type ${claimText(payload[CLAIMS.messageType])}.`,
      400,
    );
  }
  const sub = text(payload.sub);
  if (sub === null) {
    throw refused(
      'anonymous_launch',
      'The platform did not say who you are (no user id in the launch).',
      400,
    );
  }
  const link = record(payload[CLAIMS.resourceLink]);
  const linkId = text(link?.id);
  if (linkId === null && kind !== 'deep_linking') {
    throw refused('invalid_launch', 'The launch names no resource link.', 400);
  }
  const context = record(payload[CLAIMS.context]);
  const contextId = text(context?.id);
  const custom: Record<string, string> = {};
  for (const [name, value] of Object.entries(record(payload[CLAIMS.custom]) ?? {})) {
    if (typeof value === 'string') custom[name] = value;
  }
  const name =
    text(payload.name) ??
    ([text(payload.given_name), text(payload.family_name)].filter((part) => part !== null).join(' ') || null);
  return {
    version: '1.3',
    toolProvider: { id: provider.id, instituteId: provider.instituteId, name: provider.name },
    messageKind: kind,
    deploymentId: text(payload[CLAIMS.deploymentId]),
    platformUserId: sub,
    platformIssuer: provider.issuer,
    name,
    email: text(payload.email),
    roles: rolesOf(payload[CLAIMS.roles]),
    resourceLink: linkId === null ? null : { id: linkId, title: text(link?.title) },
    context: contextId === null ? null : { id: contextId, title: text(context?.title) },
    custom,
    returnUrl: text(record(payload[CLAIMS.launchPresentation])?.return_url),
    locale: text(record(payload[CLAIMS.launchPresentation])?.locale),
    proctoring: proctoringOf(payload, kind),
    deepLinking: deepLinkingOf(payload, kind),
  };
}

function proctoringOf(payload: JWTPayload, kind: LtiMessageKind): ProctoringClaims | null {
  if (kind !== 'start_proctoring' && kind !== 'end_assessment') return null;
  const attempt = payload[CLAIMS.attemptNumber];
  const attemptNumber = typeof attempt === 'number' ? attempt : Number(attempt);
  if (!Number.isInteger(attemptNumber) || attemptNumber < 1) {
    throw refused('invalid_launch', 'The proctoring launch has no valid attempt number.', 400);
  }
  const startAssessmentUrl = text(payload[CLAIMS.startAssessmentUrl]);
  if (kind === 'start_proctoring' && startAssessmentUrl === null) {
    throw refused('invalid_launch', 'The proctoring launch has no start_assessment_url.', 400);
  }
  const acs = record(payload[CLAIMS.acs]);
  const acsUrl = text(acs?.assessment_control_url);
  const actions = Array.isArray(acs?.actions)
    ? acs.actions.filter((action): action is string => typeof action === 'string')
    : [];
  return {
    attemptNumber,
    startAssessmentUrl,
    sessionData: text(payload[CLAIMS.sessionData]),
    acs: acsUrl === null ? null : { url: acsUrl, actions },
  };
}

function deepLinkingOf(payload: JWTPayload, kind: LtiMessageKind): DeepLinkingSettings | null {
  if (kind !== 'deep_linking') return null;
  const settings = record(payload[CLAIMS.deepLinkingSettings]);
  const returnUrl = text(settings?.deep_link_return_url);
  if (settings === undefined || returnUrl === null) {
    throw refused('invalid_launch', 'The deep-linking request has no deep_link_return_url.', 400);
  }
  const acceptTypes = Array.isArray(settings.accept_types)
    ? settings.accept_types.filter((type): type is string => typeof type === 'string')
    : [];
  return {
    returnUrl,
    data: text(settings.data),
    acceptTypes,
    acceptMultiple: settings.accept_multiple === true,
    title: text(settings.title),
  };
}

/** What a jose verification failure means for the user. Returns the refusal. */
function verificationRefusal(error: unknown): LaunchRefused {
  if (error instanceof PlatformKeysUnavailable) {
    return refused(
      'platform_keys_unavailable',
      'Invigil could not fetch your learning platform’s keys to check this launch. Try again in a minute.',
      502,
    );
  }
  if (error instanceof joseErrors.JWTExpired) {
    return refused('expired', 'This launch has expired. Open the activity again from your course.', 401);
  }
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') {
      return refused(
        'wrong_issuer',
        'The launch was not issued by the platform this login started with.',
        401,
      );
    }
    if (error.claim === 'aud') {
      return refused(
        'wrong_audience',
        'The launch is meant for another tool (its audience is not Invigil’s client id).',
        401,
      );
    }
    return refused('invalid_token', `The launch’s ${error.claim} claim is not valid (${error.reason}).`, 401);
  }
  if (
    error instanceof joseErrors.JWSSignatureVerificationFailed ||
    error instanceof joseErrors.JWKSNoMatchingKey
  ) {
    return refused(
      'bad_signature',
      'The launch’s signature does not match your learning platform’s keys.',
      401,
    );
  }
  return refused('invalid_token', 'The launch could not be read as a signed LTI 1.3 message.', 401);
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}

/**
 * Verifies a launch post (`id_token` and `state`): takes the pending login (spent even when the token
 * is then refused), verifies the token with the registration's key set and reads it. Returns the
 * launch and the login (whose browser binding the caller checks); throws LaunchRefused with a
 * code for the log and a message for the user (missing_state, invalid_state, expired, wrong_issuer,
 * wrong_audience, bad_signature, invalid_token, nonce_mismatch, unknown_deployment, wrong_version,
 * unsupported_message_type, platform_keys_unavailable, ...).
 */
export async function verifyIdToken(
  deps: { db: Db; clock: Clock; platformKeys: PlatformKeys },
  post: { idToken: string | undefined; state: string | undefined },
): Promise<VerifiedIdToken> {
  const { db, clock, platformKeys } = deps;
  if (post.state === undefined || post.state === '') {
    throw refused(
      'missing_state',
      'The launch came without its state. Open the activity again from your course.',
      400,
    );
  }
  if (post.idToken === undefined || post.idToken === '' || post.idToken.length > ID_TOKEN_MAX) {
    throw refused('invalid_token', 'The launch came without an id_token.', 400);
  }
  const login = await takeLogin({ db, clock }, post.state);
  const loginProvider = await db
    .selectFrom('tool_providers')
    .select(['issuer', 'client_id'])
    .where('id', '=', login.toolProviderId)
    .executeTakeFirst();
  const registrations =
    loginProvider?.issuer === null || loginProvider?.issuer === undefined || loginProvider.client_id === null
      ? []
      : await findLti13Providers(db, loginProvider.issuer, loginProvider.client_id);
  const started = registrations.find((provider) => provider.id === login.toolProviderId);
  if (started === undefined) {
    throw refused(
      'unknown_platform',
      'The platform’s registration was removed while you were launching.',
      404,
    );
  }
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(post.idToken, platformKeys.resolver(started.jwksUrl), {
      issuer: started.issuer,
      audience: started.clientId,
      algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'ES256'],
      clockTolerance: ID_TOKEN_LEEWAY_SECONDS,
      currentDate: new Date(clock.now()),
      requiredClaims: ['exp', 'iat', 'nonce'],
    }));
  } catch (error) {
    throw verificationRefusal(error);
  }
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if ((audiences.length > 1 || payload.azp !== undefined) && payload.azp !== started.clientId) {
    throw refused('wrong_audience', 'The launch names another tool as its authorized party (azp).', 401);
  }
  if (typeof payload.nonce !== 'string' || !sameText(payload.nonce, login.nonce)) {
    throw refused('nonce_mismatch', 'The launch does not belong to the login that started it (nonce).', 401);
  }
  if (payload[CLAIMS.version] !== '1.3.0') {
    throw refused(
      'wrong_version',
      `Invigil accepts LTI 1.3.0 launches; this one is version ${claimText(payload[CLAIMS.version])}.`,
      400,
    );
  }
  const deploymentId = text(payload[CLAIMS.deploymentId]);
  const provider = deploymentId === null ? undefined : providerForDeployment(registrations, deploymentId);
  if (deploymentId === null || provider === undefined) {
    throw refused(
      'unknown_deployment',
      'This deployment of the tool is not registered with Invigil (the tool provider names another deployment id).',
      403,
    );
  }
  return { launch: launchOf(payload, provider), login };
}
