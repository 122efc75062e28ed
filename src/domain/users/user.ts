import { ROLES, type Role } from '../access.ts';
import { Invalid, ParamMissing } from '../errors.ts';
import { has, optionalBoolean, optionalString, type Params } from '../input.ts';
import { parseId } from '../ids.ts';
import type { ListFields } from '../listing.ts';

export interface User {
  readonly id: number;
  readonly instituteId: number;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  readonly identityProviderId: number | null;
  /** The console's language the user picked (a supported tag), or null to follow the browser. */
  readonly language: string | null;
  readonly active: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * A user's API credentials. The token is kept hashed (the lookup key) and both are kept encrypted, so
 * the compat sign-in can answer them again (docs/staff-sign-in.md).
 */
export interface Credentials {
  readonly apiToken: string;
  readonly secretKey: string;
}

/** What a client can set on a user. `active` is read on update only (a new user is active). */
export interface UserChanges {
  email?: string;
  name?: string;
  role?: Role;
  identityProviderId?: number | null;
  active?: boolean;
}

/** What a new user is made of (the CLI and the API share it). */
export type NewUser = Required<Pick<UserChanges, 'email' | 'name' | 'role'>> & {
  identityProviderId: number | null;
};

/** Filterable and sortable user fields. */
export const USER_LIST_FIELDS: ListFields = {
  id: { column: 'id', type: 'integer', notNull: true },
  email: { column: 'email', type: 'string', notNull: true },
  name: { column: 'name', type: 'string', notNull: true },
  role: { column: 'role', type: 'string', notNull: true },
  identity_provider_id: { column: 'identity_provider_id', type: 'integer' },
  active: { column: 'active', type: 'boolean', notNull: true },
  created_at: { column: 'created_at', type: 'time', notNull: true },
  updated_at: { column: 'updated_at', type: 'time', notNull: true },
};

/** The message for an identity provider that is neither the institute's nor a global one. */
export const UNKNOWN_IDENTITY_PROVIDER = 'is not an identity provider of the institute';

/** A text that must not be blank when sent, and must be sent on create. Throws ParamMissing. */
function readRequired(params: Params, field: string, mode: 'create' | 'update'): string | undefined {
  const value = optionalString(params, field);
  if (value === undefined && mode === 'update') return undefined;
  if (value === undefined || value === null || value.trim() === '') throw new ParamMissing(field);
  return value;
}

function readRole(params: Params, mode: 'create' | 'update'): Role | undefined {
  const text = readRequired(params, 'role', mode);
  if (text === undefined) return undefined;
  const role = ROLES.find((known) => known === text);
  if (role === undefined) throw new Invalid('role', 'is not included in the list');
  return role;
}

function readIdentityProvider(params: Params): number | null | undefined {
  if (!has(params, 'identity_provider_id')) return undefined;
  const value = params.identity_provider_id;
  if (value === null || value === '') return null;
  const id = parseId(value);
  if (id === undefined) throw new Invalid('identity_provider_id', UNKNOWN_IDENTITY_PROVIDER);
  return id;
}

/**
 * Reads the user fields a create or update request carries: `email`, `name`, `role` (required on
 * create, never blank), `identity_provider_id` (null clears it) and, on update, `active`. Returns
 * only what was sent; throws ParamMissing or Invalid naming the first bad field. Whether the identity
 * provider exists for the institute is the service's check.
 */
export function readUserChanges(params: Params, mode: 'create' | 'update'): UserChanges {
  const changes: UserChanges = {};
  const email = readRequired(params, 'email', mode)?.trim();
  const name = readRequired(params, 'name', mode);
  const role = readRole(params, mode);
  if (email !== undefined) {
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new Invalid('email', 'is invalid');
    changes.email = email;
  }
  if (name !== undefined) changes.name = name;
  if (role !== undefined) changes.role = role;
  const identityProviderId = readIdentityProvider(params);
  if (identityProviderId !== undefined) changes.identityProviderId = identityProviderId;
  if (mode === 'update') {
    const active = optionalBoolean(params, 'active');
    if (active !== undefined) changes.active = active;
  }
  return changes;
}

/** Reads a create request (see readUserChanges). Returns the new user; throws ParamMissing or Invalid. */
export function readNewUser(params: Params): NewUser {
  const { email, name, role, identityProviderId } = readUserChanges(params, 'create');
  // readUserChanges already refuses a create without these; this narrows the types.
  if (email === undefined) throw new ParamMissing('email');
  if (name === undefined) throw new ParamMissing('name');
  if (role === undefined) throw new ParamMissing('role');
  return { email, name, role, identityProviderId: identityProviderId ?? null };
}
