import type { Selectable, Updateable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import type { LtiResourcesTable } from '../../db/tables.ts';
import type { ListQuery, Page } from '../listing.ts';
import type { ConfigListScope } from '../tool-providers/tool-provider.ts';
import type { LtiResource } from './lti-resource.ts';

type LtiResourceRow = Selectable<LtiResourcesTable>;

/** A resource's columns as they will be written, its ids resolved. */
export interface LtiResourceColumns {
  readonly instituteId: number;
  readonly toolProviderId: number;
  readonly examId: number | null;
  readonly resourceLinkId: string;
  readonly contextId: string | null;
  readonly title: string | null;
}

function ltiResourceFromRow(row: LtiResourceRow): LtiResource {
  return {
    id: row.id,
    instituteId: row.institute_id,
    toolProviderId: row.tool_provider_id,
    examId: row.exam_id,
    resourceLinkId: row.resource_link_id,
    contextId: row.context_id,
    title: row.title,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function columnsFrom(columns: LtiResourceColumns): Updateable<LtiResourcesTable> {
  return {
    institute_id: columns.instituteId,
    tool_provider_id: columns.toolProviderId,
    exam_id: columns.examId,
    resource_link_id: columns.resourceLinkId,
    context_id: columns.contextId,
    title: columns.title,
  };
}

/** Inserts a resource. Returns it; a foreign-key failure (its provider deleted meanwhile) propagates. */
export async function insertLtiResource(
  db: Db,
  columns: LtiResourceColumns,
  now: number,
): Promise<LtiResource> {
  const row = await db
    .insertInto('lti_resources')
    .values({
      ...columnsFrom(columns),
      institute_id: columns.instituteId,
      tool_provider_id: columns.toolProviderId,
      resource_link_id: columns.resourceLinkId,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return ltiResourceFromRow(row);
}

/** Returns the resource, or undefined. */
export async function findLtiResource(db: Db, id: number): Promise<LtiResource | undefined> {
  const row = await db.selectFrom('lti_resources').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : ltiResourceFromRow(row);
}

/** Writes the resource's columns and returns it as saved, or undefined if it vanished meanwhile. */
export async function updateLtiResource(
  db: Db,
  id: number,
  columns: LtiResourceColumns,
  now: number,
): Promise<LtiResource | undefined> {
  await db
    .updateTable('lti_resources')
    .set({ ...columnsFrom(columns), updated_at: now })
    .where('id', '=', id)
    .execute();
  return findLtiResource(db, id);
}

/** Deletes the resource; sessions that came through it keep their LMS ids and lose the link (set null). */
export async function deleteLtiResource(db: Db, id: number): Promise<void> {
  await db.deleteFrom('lti_resources').where('id', '=', id).execute();
}

/** True when a resource of the provider other than `exceptId` has this resource link id. */
export async function isResourceLinkTaken(
  db: Db,
  toolProviderId: number,
  resourceLinkId: string,
  exceptId: number,
): Promise<boolean> {
  const row = await db
    .selectFrom('lti_resources')
    .select('id')
    .where('tool_provider_id', '=', toolProviderId)
    .where('resource_link_id', '=', resourceLinkId)
    .where('id', '<>', exceptId)
    .executeTakeFirst();
  return row !== undefined;
}

/** One page of resources within `scope`. Returns the page with the total count of matching resources. */
export async function listLtiResources(
  db: Db,
  scope: ConfigListScope,
  list: ListQuery,
): Promise<Page<LtiResource>> {
  let base = db.selectFrom('lti_resources');
  if (scope.kind === 'institute') base = base.where('lti_resources.institute_id', '=', scope.instituteId);
  base = applyConditions(base, list, 'lti_resources');
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    applyOrderAndPage(base.selectAll('lti_resources'), list, 'lti_resources').execute(),
  ]);
  return {
    items: rows.map(ltiResourceFromRow),
    total: Number(countRow.count),
    page: list.page,
    limit: list.limit,
  };
}
