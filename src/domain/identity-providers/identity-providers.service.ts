import type { Db } from '../../db/database.ts';
import type { ServerKeys } from '../../security/keys.ts';
import { type Actor, canReadIdentityProvider, isSuperuser } from '../access.ts';
import type { Clock } from '../clock.ts';
import { NotFound } from '../errors.ts';
import type { Params } from '../input.ts';
import { findInstitute } from '../institutes/institutes.repository.ts';
import { type Page, parseListQuery } from '../listing.ts';
import {
  checkNewIdentityProvider,
  IDENTITY_PROVIDER_LIST_FIELDS,
  type IdentityProvider,
  type NewIdentityProvider,
} from './identity-provider.ts';
import {
  type IdentityProviderListScope,
  insertIdentityProvider,
  listAllIdentityProviders,
  listIdentityProviders,
} from './identity-providers.repository.ts';
import { type NewOidcProvider, oidcMetadataFor, sealOidcMetadata } from './oidc-config.ts';

/**
 * Identity-provider configurations: the API lists them, the CLI (an operator) adds and lists them.
 * Their metadata is stored and never answered.
 */
export interface IdentityProvidersService {
  /**
   * One page of the configurations the actor may read (its institute's and the global ones; a
   * superuser every one), filtered and sorted by `params`. Throws Invalid.
   */
  list(actor: Actor, params: Params): Promise<Page<IdentityProvider>>;
  /**
   * Adds a configuration, global when `instituteId` is null. Returns it; throws NotFound
   * (Institute), ParamMissing, or Invalid (protocol, metadata not of that protocol).
   */
  create(input: NewIdentityProvider): Promise<IdentityProvider>;
  /**
   * Adds an OpenID Connect provider the institute's staff sign in with (docs/staff-sign-in.md,
   * "OpenID Connect"); its client secret is stored encrypted. Returns it; throws NotFound
   * (Institute), ParamMissing, or Invalid (issuer, client_id, client_secret, scopes).
   */
  createOidc(input: NewOidcProvider): Promise<IdentityProvider>;
  /**
   * Every configuration (operator listing), or those an institute's users may use: its own and the
   * global ones. Returns them by id; throws NotFound (Institute).
   */
  listAll(instituteId: number | null): Promise<readonly IdentityProvider[]>;
}

/**
 * Builds the identity-provider use cases over the database and the clock; `keys` encrypts OIDC
 * client secrets. Returns the service; throws nothing.
 */
export function createIdentityProvidersService(deps: {
  db: Db;
  clock: Clock;
  keys: ServerKeys;
}): IdentityProvidersService {
  const { db, clock } = deps;
  const key = deps.keys.encryption;

  async function requireInstitute(instituteId: number): Promise<void> {
    if ((await findInstitute(db, instituteId)) === undefined) throw new NotFound('Institute', instituteId);
  }

  return {
    async list(actor, params) {
      // The SQL form of canReadIdentityProvider: its institute's and the global ones, or every one.
      const scope: IdentityProviderListScope = isSuperuser(actor)
        ? { kind: 'all' }
        : { kind: 'institute', instituteId: actor.instituteId };
      const page = await listIdentityProviders(
        db,
        scope,
        parseListQuery(params, IDENTITY_PROVIDER_LIST_FIELDS),
      );
      return { ...page, items: page.items.filter((idp) => canReadIdentityProvider(actor, idp.instituteId)) };
    },

    async create(input) {
      const protocol = checkNewIdentityProvider(input);
      if (input.instituteId !== null) await requireInstitute(input.instituteId);
      // A client secret given in OIDC metadata is never stored in clear.
      const metadata = protocol === 'oidc' ? sealOidcMetadata(input.metadata, key) : input.metadata;
      return insertIdentityProvider(
        db,
        { name: input.name.trim(), protocol, metadata, instituteId: input.instituteId },
        clock.now(),
      );
    },

    async createOidc(input) {
      const metadata = oidcMetadataFor(input, key);
      await requireInstitute(input.instituteId);
      return insertIdentityProvider(
        db,
        { name: input.name.trim(), protocol: 'oidc', metadata, instituteId: input.instituteId },
        clock.now(),
      );
    },

    async listAll(instituteId) {
      if (instituteId === null) return listAllIdentityProviders(db, { kind: 'all' });
      await requireInstitute(instituteId);
      return listAllIdentityProviders(db, { kind: 'institute', instituteId });
    },
  };
}
