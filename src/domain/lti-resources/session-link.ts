import type { Db } from '../../db/database.ts';
import { Invalid, NotFound } from '../errors.ts';
import { parseId } from '../ids.ts';
import { has, type Params } from '../input.ts';
import { findLtiResource } from './lti-resources.repository.ts';

/** The LTI fields of a student session that an LTI resource can fill in. */
export interface SessionLtiFields {
  ltiResourceId?: number | null;
  resourceLinkId?: string | null;
  contextId?: string | null;
}

/**
 * Applies a session request's `lti_resource_id` to its changes. The resource must belong to the
 * exam's institute and, when it is linked to an exam, to this exam; its `resource_link_id` and
 * `context_id` fill those of the session unless the request sent them. Empty or null unlinks the
 * session. Returns the changes (a new object); throws NotFound (Lti Resource) or Invalid.
 */
export async function withLtiResource<T extends SessionLtiFields>(
  db: Db,
  exam: { readonly id: number; readonly instituteId: number },
  params: Params,
  changes: T,
): Promise<T> {
  if (!has(params, 'lti_resource_id')) return changes;
  const raw = params.lti_resource_id;
  if (raw === null || raw === '') return { ...changes, ltiResourceId: null };
  if (typeof raw !== 'string' && typeof raw !== 'number')
    throw new Invalid('lti_resource_id', 'is not a number');
  const numeric = parseId(raw);
  const resource = numeric === undefined ? undefined : await findLtiResource(db, numeric);
  if (resource === undefined || resource.instituteId !== exam.instituteId)
    throw new NotFound('Lti Resource', raw);
  if (resource.examId !== null && resource.examId !== exam.id) {
    throw new Invalid('lti_resource_id', 'is linked to another exam');
  }
  return {
    ...changes,
    ltiResourceId: resource.id,
    resourceLinkId: changes.resourceLinkId !== undefined ? changes.resourceLinkId : resource.resourceLinkId,
    contextId: changes.contextId !== undefined ? changes.contextId : resource.contextId,
  };
}
