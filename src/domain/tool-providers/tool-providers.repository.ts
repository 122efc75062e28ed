import type { Selectable, Updateable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import type { ToolProvidersTable } from '../../db/tables.ts';
import type { ListQuery, Page } from '../listing.ts';
import { type ConfigListScope, LTI_VERSIONS, type ToolProvider } from './tool-provider.ts';

type ToolProviderRow = Selectable<ToolProvidersTable>;

/** A provider's columns as they will be written; the secret already encrypted (or null, or kept). */
export type ToolProviderColumns = {
  readonly name: string;
  readonly ltiVersion: string;
  readonly consumerKey: string | null;
  /** The stored ciphertext; undefined keeps the stored value. */
  readonly sharedSecretEncrypted: string | null | undefined;
  readonly issuer: string | null;
  readonly clientId: string | null;
  readonly deploymentId: string | null;
  readonly authLoginUrl: string | null;
  readonly authTokenUrl: string | null;
  readonly jwksUrl: string | null;
};

function toolProviderFromRow(row: ToolProviderRow): ToolProvider {
  const ltiVersion = LTI_VERSIONS.find((known) => known === row.lti_version);
  if (ltiVersion === undefined) throw new Error(`tool provider ${row.id} has an unknown lti_version`);
  return {
    id: row.id,
    instituteId: row.institute_id,
    name: row.name,
    ltiVersion,
    consumerKey: row.consumer_key,
    hasSharedSecret: row.shared_secret_encrypted !== null,
    issuer: row.issuer,
    clientId: row.client_id,
    deploymentId: row.deployment_id,
    authLoginUrl: row.auth_login_url,
    authTokenUrl: row.auth_token_url,
    jwksUrl: row.jwks_url,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function columnsFrom(columns: ToolProviderColumns): Updateable<ToolProvidersTable> {
  const values: Updateable<ToolProvidersTable> = {
    name: columns.name,
    lti_version: columns.ltiVersion,
    consumer_key: columns.consumerKey,
    issuer: columns.issuer,
    client_id: columns.clientId,
    deployment_id: columns.deploymentId,
    auth_login_url: columns.authLoginUrl,
    auth_token_url: columns.authTokenUrl,
    jwks_url: columns.jwksUrl,
  };
  if (columns.sharedSecretEncrypted !== undefined)
    values.shared_secret_encrypted = columns.sharedSecretEncrypted;
  return values;
}

/** Inserts a provider into an institute. Returns it. */
export async function insertToolProvider(
  db: Db,
  instituteId: number,
  columns: ToolProviderColumns,
  now: number,
): Promise<ToolProvider> {
  const row = await db
    .insertInto('tool_providers')
    .values({
      ...columnsFrom(columns),
      name: columns.name,
      lti_version: columns.ltiVersion,
      shared_secret_encrypted: columns.sharedSecretEncrypted ?? null,
      institute_id: instituteId,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toolProviderFromRow(row);
}

/** Returns the provider, or undefined. */
export async function findToolProvider(db: Db, id: number): Promise<ToolProvider | undefined> {
  const row = await db.selectFrom('tool_providers').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toolProviderFromRow(row);
}

/** Writes the provider's settings and returns it as saved, or undefined if it vanished meanwhile. */
export async function updateToolProvider(
  db: Db,
  id: number,
  columns: ToolProviderColumns,
  now: number,
): Promise<ToolProvider | undefined> {
  await db
    .updateTable('tool_providers')
    .set({ ...columnsFrom(columns), updated_at: now })
    .where('id', '=', id)
    .execute();
  return findToolProvider(db, id);
}

/**
 * True when a provider other than `exceptId` uses the LTI 1.1 `consumerKey` (launches name their
 * provider by it, so it identifies one provider across every institute).
 */
export async function isConsumerKeyTaken(db: Db, consumerKey: string, exceptId: number): Promise<boolean> {
  const row = await db
    .selectFrom('tool_providers')
    .select('id')
    .where('consumer_key', '=', consumerKey)
    .where('lti_version', '=', '1.1')
    .where('id', '<>', exceptId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * True when a provider other than `exceptId` has the same LTI 1.3 registration: issuer, client id
 * and deployment id (an absent deployment id equal to an absent one).
 */
export async function isRegistrationTaken(
  db: Db,
  registration: { issuer: string; clientId: string; deploymentId: string | null },
  exceptId: number,
): Promise<boolean> {
  let query = db
    .selectFrom('tool_providers')
    .select('id')
    .where('lti_version', '=', '1.3')
    .where('issuer', '=', registration.issuer)
    .where('client_id', '=', registration.clientId)
    .where('id', '<>', exceptId);
  query =
    registration.deploymentId === null
      ? query.where('deployment_id', 'is', null)
      : query.where('deployment_id', '=', registration.deploymentId);
  return (await query.executeTakeFirst()) !== undefined;
}

/**
 * Deletes the provider with its LTI resources (the foreign key cascades), unless a resource of it
 * is linked to an exam that is not deleted. One statement, so a resource linked meanwhile cannot
 * slip between a check and the delete. Returns true when the row was deleted.
 */
export async function deleteToolProviderUnlessLinked(db: Db, id: number): Promise<boolean> {
  const result = await db
    .deleteFrom('tool_providers')
    .where('tool_providers.id', '=', id)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('lti_resources')
            .innerJoin('exams', 'exams.id', 'lti_resources.exam_id')
            .select('lti_resources.id')
            .whereRef('lti_resources.tool_provider_id', '=', 'tool_providers.id')
            .where('exams.status', '<>', 'deleted'),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** One page of providers within `scope`. Returns the page with the total count of matching providers. */
export async function listToolProviders(
  db: Db,
  scope: ConfigListScope,
  list: ListQuery,
): Promise<Page<ToolProvider>> {
  let base = db.selectFrom('tool_providers');
  if (scope.kind === 'institute') base = base.where('tool_providers.institute_id', '=', scope.instituteId);
  base = applyConditions(base, list, 'tool_providers');
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    applyOrderAndPage(base.selectAll('tool_providers'), list, 'tool_providers').execute(),
  ]);
  return {
    items: rows.map(toolProviderFromRow),
    total: Number(countRow.count),
    page: list.page,
    limit: list.limit,
  };
}
