import crypto from 'node:crypto';
import type { Db } from '../db/database.ts';
import type { Clock } from '../domain/clock.ts';
import {
  deleteExpiredOauthNonces,
  findConsumerByKey,
  rememberOauthNonce,
} from '../domain/lti/oauth1.repository.ts';
import { decryptSecret } from '../security/keys.ts';
import { type LtiLaunch, LaunchRefused, type LtiRole } from '../domain/lti/launch.ts';

/**
 * LTI 1.1 launches: an OAuth 1.0a (RFC 5849) HMAC-SHA1 signed form post to {PUBLIC_URL}/lti/launch,
 * checked against the consumer key and shared secret of an LTI 1.1 tool provider (docs/lti.md).
 * The pure parts (percent-encoding, the signature base string, the signature, the role mapping)
 * are exported so tests can check them against RFC 5849's own examples.
 */

/** How far a launch's `oauth_timestamp` may lie from the server clock, either way. */
export const OAUTH_TIMESTAMP_WINDOW_SECONDS = 5 * 60;
/** Longest nonce accepted (platforms send 32 to 64 characters). */
const NONCE_MAX = 200;
/** The signature methods accepted: LTI 1.1 names HMAC-SHA1; some platforms offer HMAC-SHA256. */
const SIGNATURE_METHODS = { 'HMAC-SHA1': 'sha1', 'HMAC-SHA256': 'sha256' } as const;
type SignatureMethod = keyof typeof SIGNATURE_METHODS;
/** The LTI 1.1 message Invigil acts on. */
const BASIC_LAUNCH = 'basic-lti-launch-request';
/** `lti_version` values of a basic launch (LTI 1.0, 1.1 and 1.2 all send LTI-1p0; a few send LTI-1p2). */
const LTI_VERSIONS = new Set(['LTI-1p0', 'LTI-1p2']);

/**
 * Percent-encodes as RFC 5849 section 3.6 asks: every byte of the UTF-8 text except the unreserved
 * characters (ALPHA, DIGIT, `-`, `.`, `_`, `~`), upper-case hex. Returns the encoded text.
 */
export function percentEncode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * The base string URI of RFC 5849 section 3.4.1.2: scheme and host in lower case, the port only
 * when it is not the scheme's default, the path, no query and no fragment. Returns it; throws a
 * TypeError for a text that is not an absolute URL.
 */
export function baseStringUri(url: string): string {
  const parsed = new URL(url);
  // URL already lower-cases scheme and host and drops a default port.
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/**
 * The signature base string of RFC 5849 section 3.4.1: the method in upper case, the base string
 * URI and the normalised parameters (each name and value encoded, sorted by name then value,
 * joined with `=` and `&`), each part encoded and joined with `&`. `params` are the decoded
 * parameters of the request (query and form body), `oauth_signature` left out. Returns it.
 */
export function signatureBaseString(
  method: string,
  url: string,
  params: readonly (readonly [string, string])[],
): string {
  const pairs = params.map(([name, value]) => [percentEncode(name), percentEncode(value)] as const);
  pairs.sort(([nameA, valueA], [nameB, valueB]) => {
    // Byte order of the encoded text: plain code-unit comparison, as the encoding is ASCII.
    if (nameA !== nameB) return nameA < nameB ? -1 : 1;
    if (valueA === valueB) return 0;
    return valueA < valueB ? -1 : 1;
  });
  const normalized = pairs.map(([name, value]) => `${name}=${value}`).join('&');
  return [
    percentEncode(method.toUpperCase()),
    percentEncode(baseStringUri(url)),
    percentEncode(normalized),
  ].join('&');
}

/**
 * The HMAC signature of RFC 5849 section 3.4.2 over `baseString`, keyed by the encoded consumer
 * secret and token secret (LTI has no token: empty) joined by `&`. Returns it in base64.
 */
export function oauthSignature(
  baseString: string,
  consumerSecret: string,
  tokenSecret = '',
  method: SignatureMethod = 'HMAC-SHA1',
): string {
  const key = `${percentEncode(consumerSecret)}&${percentEncode(tokenSecret)}`;
  return crypto.createHmac(SIGNATURE_METHODS[method], key).update(baseString, 'utf8').digest('base64');
}

/** The short LTI 1.1 role names and the URN forms' last segments Invigil tells apart. */
const LEARNER_ROLES = new Set(['learner', 'student']);
const INSTRUCTOR_ROLES = new Set(['instructor', 'contentdeveloper', 'teachingassistant', 'faculty']);
const ADMINISTRATOR_ROLES = new Set(['administrator', 'sysadmin']);

/**
 * The Invigil roles of an LTI 1.1 `roles` parameter: comma-separated short names (`Learner`,
 * `Instructor`) or URNs (`urn:lti:role:ims/lis/Instructor`, `urn:lti:instrole:ims/lis/Administrator`,
 * `urn:lti:sysrole:ims/lis/SysAdmin`, sub-roles such as `urn:lti:role:ims/lis/Instructor/...`).
 * Learner and Student map to learner; Instructor, ContentDeveloper, TeachingAssistant and Faculty
 * to instructor; Administrator and SysAdmin (context, institution or system) to administrator.
 * Anything else (Mentor, Member, Guest, ...) is left out. Returns the distinct roles.
 */
export function lti11Roles(text: string | undefined): LtiRole[] {
  const found = new Set<LtiRole>();
  for (const raw of (text ?? '').split(',')) {
    const role = raw.trim();
    if (role === '') continue;
    // A URN names the role after `ims/lis/`; its sub-role (after the next `/`) narrows it only.
    const lis = /^urn:lti:(?:role|instrole|sysrole):ims\/lis\/([^/]+)/i.exec(role);
    const name = (lis?.[1] ?? role).toLowerCase();
    if (LEARNER_ROLES.has(name)) found.add('learner');
    else if (INSTRUCTOR_ROLES.has(name)) found.add('instructor');
    else if (ADMINISTRATOR_ROLES.has(name)) found.add('administrator');
  }
  return [...found];
}

/** The value of a parameter, or null when absent or blank. */
function text(params: Readonly<Record<string, string>>, name: string): string | null {
  const value = Object.hasOwn(params, name) ? params[name] : undefined;
  if (value === undefined) return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/** A refusal of the launch's credentials: the platform's registration, not the user, must change. */
function unverified(code: string, why: string): LaunchRefused {
  return new LaunchRefused(
    code,
    `This launch could not be verified: ${why} Ask the administrator of your learning platform to check the Invigil LTI 1.1 registration.`,
    401,
  );
}

function sameText(received: string, expected: string): boolean {
  const left = Buffer.from(received, 'utf8');
  const right = Buffer.from(expected, 'utf8');
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}

/** The user's display name: `lis_person_name_full`, else given and family names, else null. */
function nameOf(params: Readonly<Record<string, string>>): string | null {
  const full = text(params, 'lis_person_name_full');
  if (full !== null) return full;
  const parts = [text(params, 'lis_person_name_given'), text(params, 'lis_person_name_family')];
  const joined = parts.filter((part): part is string => part !== null).join(' ');
  return joined === '' ? null : joined;
}

/** Custom parameters: every `custom_<name>` without its prefix. */
function customOf(params: Readonly<Record<string, string>>): Record<string, string> {
  const custom: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    if (name.startsWith('custom_') && name.length > 'custom_'.length)
      custom[name.slice('custom_'.length)] = value;
  }
  return custom;
}

/**
 * Verifies an LTI 1.1 launch and reads it. `request.params` are the decoded form (and query)
 * parameters as posted to `{publicUrl}/lti/launch`. Checks, in order: a basic launch message and
 * version; the consumer key of an LTI 1.1 tool provider with a shared secret; the signature method;
 * `oauth_timestamp` within OAUTH_TIMESTAMP_WINDOW_SECONDS of the clock; the signature (compared in
 * constant time); then the nonce, single use per tool provider for as long as its timestamp is
 * acceptable (expired nonces are swept here). Returns the launch; throws LaunchRefused (400 for a
 * malformed launch, 401 when the credentials, timestamp or nonce are refused) naming the check in
 * its code.
 */
export async function verifyLti11Launch(
  deps: { db: Db; clock: Clock; serverKey: Buffer; publicUrl: string },
  request: { method: string; params: Record<string, string> },
): Promise<LtiLaunch> {
  const { db, clock } = deps;
  const { params } = request;

  const messageType = text(params, 'lti_message_type');
  if (messageType !== BASIC_LAUNCH) {
    throw new LaunchRefused(
      'unsupported_message_type',
      `Invigil accepts LTI 1.1 launches of type ${BASIC_LAUNCH}; this one is ${messageType ?? 'of no type'}.`,
    );
  }
  const version = text(params, 'lti_version');
  if (version === null || !LTI_VERSIONS.has(version)) {
    throw new LaunchRefused(
      'unsupported_lti_version',
      `Invigil accepts lti_version LTI-1p0; this launch sent ${version ?? 'none'}.`,
    );
  }

  const consumerKey = text(params, 'oauth_consumer_key');
  if (consumerKey === null) throw unverified('missing_consumer_key', 'it carries no consumer key.');
  const consumer = await findConsumerByKey(db, consumerKey);
  if (consumer === undefined)
    throw unverified('unknown_consumer_key', 'its consumer key is not registered in Invigil.');
  if (consumer.ltiVersion !== '1.1') {
    throw unverified('not_lti11_provider', 'its consumer key belongs to a registration that is not LTI 1.1.');
  }
  if (consumer.sharedSecretEncrypted === null) {
    throw unverified('no_shared_secret', 'its registration in Invigil has no shared secret.');
  }
  let secret: string;
  try {
    secret = decryptSecret(deps.serverKey, consumer.sharedSecretEncrypted);
  } catch {
    throw unverified('secret_unreadable', "the shared secret cannot be read with this server's key.");
  }

  const method = text(params, 'oauth_signature_method');
  if (method === null || !Object.hasOwn(SIGNATURE_METHODS, method)) {
    throw unverified(
      'unsupported_signature_method',
      `it is signed with ${method ?? 'no method'}, not HMAC-SHA1.`,
    );
  }
  const oauthVersion = text(params, 'oauth_version');
  if (oauthVersion !== null && oauthVersion !== '1.0') {
    throw unverified('unsupported_oauth_version', `it names OAuth version ${oauthVersion}, not 1.0.`);
  }
  const timestampText = text(params, 'oauth_timestamp');
  if (timestampText === null || !/^\d{1,12}$/.test(timestampText)) {
    throw unverified('missing_timestamp', 'it carries no valid oauth_timestamp.');
  }
  const timestamp = Number(timestampText);
  const now = clock.now();
  if (Math.abs(now / 1000 - timestamp) > OAUTH_TIMESTAMP_WINDOW_SECONDS) {
    throw new LaunchRefused(
      'stale_timestamp',
      'This launch is too old (or its clock is wrong): launches must arrive within 5 minutes. Go back to your course and open the link again.',
      401,
    );
  }
  const nonce = text(params, 'oauth_nonce');
  if (nonce === null || nonce.length > NONCE_MAX)
    throw unverified('missing_nonce', 'it carries no valid oauth_nonce.');
  const received = text(params, 'oauth_signature');
  if (received === null) throw unverified('missing_signature', 'it is not signed.');

  const signed = Object.entries(params).filter(([name]) => name !== 'oauth_signature');
  let expected: string;
  try {
    const base = signatureBaseString(request.method, `${deps.publicUrl}/lti/launch`, signed);
    expected = oauthSignature(base, secret, '', method as SignatureMethod);
  } catch {
    // A value that cannot be encoded (a lone surrogate) cannot have been signed as sent.
    throw unverified('bad_signature', 'its signature does not match.');
  }
  if (!sameText(received, expected)) {
    throw unverified('bad_signature', 'its signature does not match the consumer key and shared secret.');
  }

  // Only a verified launch may spend a nonce; expired ones go first, so the table stays small.
  await deleteExpiredOauthNonces(db, now);
  const expiresAt = (timestamp + OAUTH_TIMESTAMP_WINDOW_SECONDS) * 1000;
  if (!(await rememberOauthNonce(db, consumer.id, nonce, expiresAt))) {
    throw new LaunchRefused(
      'replayed_nonce',
      'This launch was already used. Go back to your course and open the link again.',
      401,
    );
  }

  const resourceLinkId = text(params, 'resource_link_id');
  if (resourceLinkId === null) {
    throw new LaunchRefused(
      'missing_resource_link',
      'This launch names no resource link (resource_link_id).',
    );
  }
  const userId = text(params, 'user_id');
  if (userId === null) {
    throw new LaunchRefused(
      'missing_user',
      'Your learning platform did not say who you are (user_id). Ask its administrator to send user information to Invigil.',
    );
  }
  const contextId = text(params, 'context_id');
  return {
    version: '1.1',
    toolProvider: { id: consumer.id, instituteId: consumer.instituteId, name: consumer.name },
    messageKind: 'resource_link',
    deploymentId: null,
    platformUserId: userId,
    platformIssuer: consumerKey,
    name: nameOf(params),
    email: text(params, 'lis_person_contact_email_primary'),
    roles: lti11Roles(params.roles),
    resourceLink: { id: resourceLinkId, title: text(params, 'resource_link_title') },
    context: contextId === null ? null : { id: contextId, title: text(params, 'context_title') },
    custom: customOf(params),
    returnUrl: text(params, 'launch_presentation_return_url'),
    locale: text(params, 'launch_presentation_locale'),
    proctoring: null,
    deepLinking: null,
  };
}
