import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import type { IdentityProvidersTable } from '../../db/tables.ts';
import type { ListQuery, Page } from '../listing.ts';
import { IDP_PROTOCOLS, type IdentityProvider, type IdpProtocol } from './identity-provider.ts';

/** The columns a record is made of (the metadata is read by nothing that answers a client). */
const RECORD_COLUMNS = ['id', 'institute_id', 'name', 'protocol', 'created_at'] as const;
type IdentityProviderRow = Pick<Selectable<IdentityProvidersTable>, (typeof RECORD_COLUMNS)[number]>;

/**
 * Which configurations a listing returns: every one, or one institute's together with the global
 * ones (those with no institute).
 */
export type IdentityProviderListScope =
  { readonly kind: 'all' } | { readonly kind: 'institute'; readonly instituteId: number };

function identityProviderFromRow(row: IdentityProviderRow): IdentityProvider {
  const protocol = IDP_PROTOCOLS.find((known) => known === row.protocol);
  if (protocol === undefined) throw new Error(`identity provider ${row.id} has an unknown protocol`);
  return {
    id: row.id,
    instituteId: row.institute_id,
    name: row.name,
    protocol,
    createdAt: row.created_at,
  };
}

/**
 * Returns the identity provider `id` names, or undefined. Its metadata is not part of the answer;
 * who may use it is the caller's question (access.ts: canReadIdentityProvider).
 */
export async function findIdentityProvider(
  db: Db,
  id: number,
): Promise<
  | { id: number; instituteId: number | null; name: string; protocol: 'saml' | 'oidc'; createdAt: number }
  | undefined
> {
  const row = await db
    .selectFrom('identity_providers')
    .select(RECORD_COLUMNS)
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined ? undefined : identityProviderFromRow(row);
}

/** Inserts a configuration. Returns it (without its metadata). */
export async function insertIdentityProvider(
  db: Db,
  input: { name: string; protocol: IdpProtocol; metadata: string; instituteId: number | null },
  now: number,
): Promise<IdentityProvider> {
  const row = await db
    .insertInto('identity_providers')
    .values({
      institute_id: input.instituteId,
      name: input.name,
      protocol: input.protocol,
      metadata: input.metadata,
      created_at: now,
      updated_at: now,
    })
    .returning(RECORD_COLUMNS)
    .executeTakeFirstOrThrow();
  return identityProviderFromRow(row);
}

function scoped(db: Db, scope: IdentityProviderListScope) {
  const base = db.selectFrom('identity_providers');
  if (scope.kind === 'all') return base;
  const { instituteId } = scope;
  return base.where((eb) =>
    eb.or([
      eb('identity_providers.institute_id', '=', instituteId),
      eb('identity_providers.institute_id', 'is', null),
    ]),
  );
}

const QUALIFIED_COLUMNS = RECORD_COLUMNS.map((column) => `identity_providers.${column}` as const);

/** Every configuration within `scope`, by id (the operator's listing has no pages). */
export async function listAllIdentityProviders(
  db: Db,
  scope: IdentityProviderListScope,
): Promise<IdentityProvider[]> {
  const rows = await scoped(db, scope).select(QUALIFIED_COLUMNS).orderBy('identity_providers.id').execute();
  return rows.map(identityProviderFromRow);
}

/** One page of configurations within `scope`. Returns the page with the total count of matching ones. */
export async function listIdentityProviders(
  db: Db,
  scope: IdentityProviderListScope,
  list: ListQuery,
): Promise<Page<IdentityProvider>> {
  const base = applyConditions(scoped(db, scope), list, 'identity_providers');
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    applyOrderAndPage(base.select(QUALIFIED_COLUMNS), list, 'identity_providers').execute(),
  ]);
  return {
    items: rows.map(identityProviderFromRow),
    total: Number(countRow.count),
    page: list.page,
    limit: list.limit,
  };
}

/** A provider with its stored metadata, for the sign-in flow only (never answered to a client). */
export interface ProviderWithMetadata {
  readonly id: number;
  readonly instituteId: number | null;
  readonly name: string;
  readonly protocol: IdpProtocol;
  readonly metadata: string;
}

/** The provider `id` names with its metadata, or undefined. */
export async function findProviderWithMetadata(
  db: Db,
  id: number,
): Promise<ProviderWithMetadata | undefined> {
  const row = await db
    .selectFrom('identity_providers')
    .select(['id', 'institute_id', 'name', 'protocol', 'metadata'])
    .where('id', '=', id)
    .executeTakeFirst();
  const protocol = IDP_PROTOCOLS.find((known) => known === row?.protocol);
  if (row === undefined || protocol === undefined) return undefined;
  return { id: row.id, instituteId: row.institute_id, name: row.name, protocol, metadata: row.metadata };
}

/**
 * Every OIDC provider that belongs to an institute, with its metadata and its institute's name,
 * by institute name, provider name and id. Returns them (whether each can sign in is the caller's
 * question: its metadata must hold a sign-in configuration).
 */
export async function listInstituteOidcProviders(
  db: Db,
): Promise<(ProviderWithMetadata & { instituteId: number; instituteName: string })[]> {
  const rows = await db
    .selectFrom('identity_providers')
    .innerJoin('institutes', 'institutes.id', 'identity_providers.institute_id')
    .select([
      'identity_providers.id',
      'identity_providers.name',
      'identity_providers.metadata',
      'institutes.id as institute_id',
      'institutes.name as institute_name',
    ])
    .where('identity_providers.protocol', '=', 'oidc')
    .orderBy('institutes.name')
    .orderBy('identity_providers.name')
    .orderBy('identity_providers.id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    instituteId: row.institute_id,
    instituteName: row.institute_name,
    name: row.name,
    protocol: 'oidc',
    metadata: row.metadata,
  }));
}
