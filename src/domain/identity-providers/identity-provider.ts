import { Invalid, ParamMissing } from '../errors.ts';
import type { ListFields } from '../listing.ts';

export const IDP_PROTOCOLS = ['saml', 'oidc'] as const;
export type IdpProtocol = (typeof IDP_PROTOCOLS)[number];

/**
 * A single sign-on configuration users may log in through. `instituteId` null makes it global
 * (offered to every institute). Its metadata stays in the repository: nothing in the API shows it.
 */
export interface IdentityProvider {
  readonly id: number;
  readonly instituteId: number | null;
  readonly name: string;
  readonly protocol: IdpProtocol;
  readonly createdAt: number;
}

/** What an operator supplies to add a configuration (CLI `idp create`). */
export interface NewIdentityProvider {
  readonly name: string;
  readonly protocol: string;
  readonly metadata: string;
  readonly instituteId: number | null;
}

/** Filterable and sortable identity-provider fields. */
export const IDENTITY_PROVIDER_LIST_FIELDS: ListFields = {
  id: { column: 'id', type: 'integer', notNull: true },
  name: { column: 'name', type: 'string', notNull: true },
  protocol: { column: 'protocol', type: 'string', notNull: true },
  institute_id: { column: 'institute_id', type: 'integer' },
  created_at: { column: 'created_at', type: 'time', notNull: true },
};

/** An element named EntityDescriptor, with or without a namespace prefix (`md:EntityDescriptor`). */
const ENTITY_DESCRIPTOR = /<(?:[A-Za-z_][\w.-]*:)?EntityDescriptor[\s>/]/;

/**
 * Checks SAML metadata: an XML document (it starts with `<`, after an optional byte-order mark)
 * holding an EntityDescriptor. A light check, not a schema validation. Throws Invalid on `metadata`.
 */
export function checkSamlMetadata(metadata: string): void {
  const text = metadata.replace(/^\uFEFF/, '').trim();
  if (!text.startsWith('<') || !text.endsWith('>')) {
    throw new Invalid('metadata', 'must be SAML metadata: an XML document');
  }
  if (!ENTITY_DESCRIPTOR.test(text)) {
    throw new Invalid('metadata', 'must be SAML metadata: an XML document with an EntityDescriptor');
  }
}

/**
 * Checks OIDC metadata: a JSON object (the provider's discovery document) with a non-empty string
 * `issuer`. Throws Invalid on `metadata`.
 */
export function checkOidcMetadata(metadata: string): void {
  let document: unknown;
  try {
    document = JSON.parse(metadata.replace(/^\uFEFF/, ''));
  } catch {
    throw new Invalid('metadata', 'must be OIDC metadata: a JSON document');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new Invalid('metadata', 'must be OIDC metadata: a JSON object');
  }
  const issuer = (document as Record<string, unknown>).issuer;
  if (typeof issuer !== 'string' || issuer.trim() === '') {
    throw new Invalid('metadata', 'must be OIDC metadata: a JSON object with an issuer');
  }
}

/**
 * Checks a new configuration: a non-blank name, a known protocol, and metadata of that protocol.
 * Returns the protocol; throws ParamMissing or Invalid naming the first bad field.
 */
export function checkNewIdentityProvider(input: NewIdentityProvider): IdpProtocol {
  if (input.name.trim() === '') throw new ParamMissing('name');
  const protocol = IDP_PROTOCOLS.find((known) => known === input.protocol);
  if (protocol === undefined) throw new Invalid('protocol', 'is not included in the list');
  if (input.metadata.trim() === '') throw new ParamMissing('metadata');
  if (protocol === 'saml') checkSamlMetadata(input.metadata);
  else checkOidcMetadata(input.metadata);
  return protocol;
}
