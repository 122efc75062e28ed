import { Invalid, ParamMissing } from '../errors.ts';
import { has, optionalString, type Params, requiredOnCreate } from '../input.ts';
import type { ListFields } from '../listing.ts';

export const LTI_VERSIONS = ['1.1', '1.3'] as const;
export type LtiVersion = (typeof LTI_VERSIONS)[number];

/** Which institutes' configuration (tool providers, LTI resources) a listing may return. */
export type ConfigListScope =
  { readonly kind: 'all' } | { readonly kind: 'institute'; readonly instituteId: number };

/** The LTI 1.3 settings of a provider: domain name → API and column name. */
export const LTI13_FIELDS = {
  issuer: 'issuer',
  clientId: 'client_id',
  deploymentId: 'deployment_id',
  authLoginUrl: 'auth_login_url',
  authTokenUrl: 'auth_token_url',
  jwksUrl: 'jwks_url',
} as const;
export type Lti13Field = keyof typeof LTI13_FIELDS;

/** LTI 1.3 settings a provider cannot work without; `deployment_id` may follow later. */
const LTI13_REQUIRED: readonly Lti13Field[] = [
  'issuer',
  'clientId',
  'authLoginUrl',
  'authTokenUrl',
  'jwksUrl',
];
const LTI13_URLS: readonly Lti13Field[] = ['authLoginUrl', 'authTokenUrl', 'jwksUrl'];

/**
 * An external platform (an LMS) that launches students into exams. Only the fields of its
 * `ltiVersion` are set; the others are null. The LTI 1.1 shared secret never leaves the repository
 * in plain text: the domain object only says whether one is stored.
 */
export type ToolProvider = {
  readonly id: number;
  readonly instituteId: number;
  readonly name: string;
  readonly ltiVersion: LtiVersion;
  readonly consumerKey: string | null;
  readonly hasSharedSecret: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
} & { readonly [K in Lti13Field]: string | null };

/** What a create or update request carries, as sent; `sharedSecret` is plain text here only. */
export type ToolProviderChanges = {
  name?: string;
  ltiVersion?: LtiVersion;
  consumerKey?: string | null;
  sharedSecret?: string | null;
} & { [K in Lti13Field]?: string | null };

/** A provider's settings as they will be saved, after a create or update (the secret as plain text when new). */
export type ToolProviderSettings = {
  readonly name: string;
  readonly ltiVersion: LtiVersion;
  readonly consumerKey: string | null;
  /** A new secret to store, `undefined` to keep the stored one, null to clear it. */
  readonly sharedSecret: string | null | undefined;
} & { readonly [K in Lti13Field]: string | null };

/** Filterable and sortable tool-provider fields. */
export const TOOL_PROVIDER_LIST_FIELDS: ListFields = {
  id: { column: 'id', type: 'integer', notNull: true },
  institute_id: { column: 'institute_id', type: 'integer', notNull: true },
  name: { column: 'name', type: 'string', notNull: true },
  lti_version: { column: 'lti_version', type: 'string', notNull: true },
  consumer_key: { column: 'consumer_key', type: 'string' },
  issuer: { column: 'issuer', type: 'string' },
  client_id: { column: 'client_id', type: 'string' },
  deployment_id: { column: 'deployment_id', type: 'string' },
  created_at: { column: 'created_at', type: 'time', notNull: true },
  updated_at: { column: 'updated_at', type: 'time', notNull: true },
};

/** The version as sent; JSON numbers (`1.3`) are read as their text. Undefined when absent. */
function readVersion(params: Params, mode: 'create' | 'update'): LtiVersion | undefined {
  const raw = params.lti_version;
  if (raw === undefined && mode === 'update') return undefined;
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) {
    throw new ParamMissing('lti_version');
  }
  const text = typeof raw === 'number' ? raw.toFixed(1) : raw;
  const found = LTI_VERSIONS.find((version) => version === text);
  if (found === undefined) throw new Invalid('lti_version', 'is not included in the list');
  return found;
}

/** Text sent blank counts as cleared (null); undefined when not sent. */
function readText(params: Params, name: string): string | null | undefined {
  const value = optionalString(params, name);
  if (value === undefined || value === null) return value;
  return value.trim() === '' ? null : value.trim();
}

/**
 * Reads what a create or update request carries: `name` and `lti_version` (required on create),
 * `consumer_key` and the write-only `shared_secret` (1.1), and the 1.3 settings. Returns only what
 * was sent; throws ParamMissing or Invalid naming the first bad field. `checkToolProvider` checks
 * the result against the version.
 */
export function readToolProviderChanges(params: Params, mode: 'create' | 'update'): ToolProviderChanges {
  const changes: ToolProviderChanges = {};
  const name = requiredOnCreate(params, 'name', mode);
  if (name !== undefined) changes.name = name;
  const version = readVersion(params, mode);
  if (version !== undefined) changes.ltiVersion = version;
  const consumerKey = readText(params, 'consumer_key');
  if (consumerKey !== undefined) changes.consumerKey = consumerKey;
  if (has(params, 'shared_secret')) {
    // A secret is kept exactly as sent (no trimming): it is key material.
    const secret = optionalString(params, 'shared_secret');
    changes.sharedSecret = secret === undefined || secret === null || secret === '' ? null : secret;
  }
  for (const [key, field] of Object.entries(LTI13_FIELDS) as [Lti13Field, string][]) {
    const value = readText(params, field);
    if (value !== undefined) changes[key] = value;
  }
  return changes;
}

/** The sent value when one was sent (null included), else the current one, else null. */
function merged(sent: string | null | undefined, current: string | null | undefined): string | null {
  return sent !== undefined ? sent : (current ?? null);
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * The settings a provider will have once `changes` apply to `current` (undefined on create). The
 * fields of the other LTI version are cleared, so a provider never carries both. Returns them;
 * throws ParamMissing for a setting the version requires (1.1: `consumer_key`, `shared_secret`;
 * 1.3: `issuer`, `client_id`, `auth_login_url`, `auth_token_url`, `jwks_url`), or Invalid for a
 * URL that is not http(s).
 */
export function settingsAfter(
  current: ToolProvider | undefined,
  changes: ToolProviderChanges,
): ToolProviderSettings {
  const ltiVersion = changes.ltiVersion ?? current?.ltiVersion;
  const name = changes.name ?? current?.name;
  if (ltiVersion === undefined) throw new ParamMissing('lti_version');
  if (name === undefined) throw new ParamMissing('name');
  const lti13 = {} as { [K in Lti13Field]: string | null };
  for (const key of Object.keys(LTI13_FIELDS) as Lti13Field[]) {
    lti13[key] = ltiVersion === '1.3' ? merged(changes[key], current?.[key]) : null;
  }
  if (ltiVersion === '1.1') {
    const consumerKey = merged(changes.consumerKey, current?.consumerKey);
    if (consumerKey === null) throw new ParamMissing('consumer_key');
    // A 1.1 provider already holding a secret keeps it unless a new one is sent.
    const keeps = current?.ltiVersion === '1.1' && current.hasSharedSecret;
    let sharedSecret = changes.sharedSecret;
    if (sharedSecret === undefined && !keeps) sharedSecret = null;
    if (sharedSecret === null) throw new ParamMissing('shared_secret');
    return { name, ltiVersion, consumerKey, sharedSecret, ...lti13 };
  }
  for (const key of LTI13_REQUIRED) {
    if (lti13[key] === null) throw new ParamMissing(LTI13_FIELDS[key]);
  }
  for (const key of LTI13_URLS) {
    const value = lti13[key];
    if (value !== null && !isHttpUrl(value)) throw new Invalid(LTI13_FIELDS[key], 'must be an http(s) URL');
  }
  return { name, ltiVersion, consumerKey: null, sharedSecret: null, ...lti13 };
}
