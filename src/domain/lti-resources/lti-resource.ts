import { Invalid, ParamMissing } from '../errors.ts';
import { has, optionalString, type Params } from '../input.ts';
import type { ListFields } from '../listing.ts';

/**
 * An LTI connection: one resource link of a tool provider (a placement in an LMS course), linked to
 * the exam it launches into, or to none yet. Its institute is its provider's.
 */
export interface LtiResource {
  readonly id: number;
  readonly instituteId: number;
  readonly toolProviderId: number;
  readonly examId: number | null;
  readonly resourceLinkId: string;
  readonly contextId: string | null;
  readonly title: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * What a create or update request carries, as sent. Ids stay as the client wrote them until the
 * service has found what they name (so a 404 quotes them); `examId` null unlinks the exam.
 */
export interface LtiResourceChanges {
  toolProviderId?: string | number;
  examId?: string | number | null;
  resourceLinkId?: string;
  contextId?: string | null;
  title?: string | null;
}

/** Filterable and sortable LTI-resource fields. */
export const LTI_RESOURCE_LIST_FIELDS: ListFields = {
  id: { column: 'id', type: 'integer', notNull: true },
  institute_id: { column: 'institute_id', type: 'integer', notNull: true },
  tool_provider_id: { column: 'tool_provider_id', type: 'integer', notNull: true },
  exam_id: { column: 'exam_id', type: 'integer' },
  resource_link_id: { column: 'resource_link_id', type: 'string', notNull: true },
  context_id: { column: 'context_id', type: 'string' },
  title: { column: 'title', type: 'string' },
  created_at: { column: 'created_at', type: 'time', notNull: true },
  updated_at: { column: 'updated_at', type: 'time', notNull: true },
};

/** An id parameter as sent: a string or number; blank counts as absent. Throws Invalid for anything else. */
function idParam(params: Params, name: string): string | number | null | undefined {
  if (!has(params, name)) return undefined;
  const value = params[name];
  if (value === null || (typeof value === 'string' && value.trim() === '')) return null;
  if (typeof value === 'string' || typeof value === 'number') return value;
  throw new Invalid(name, 'is not a number');
}

/** Optional text, blank read as null. */
function text(params: Params, name: string): string | null | undefined {
  const value = optionalString(params, name);
  if (value === undefined || value === null) return value;
  return value.trim() === '' ? null : value;
}

/**
 * Reads what a create or update request carries: `tool_provider_id` and `resource_link_id`
 * (required on create; never blank), `exam_id` (null or empty unlinks), `context_id`, `title`.
 * Returns only what was sent; throws ParamMissing or Invalid naming the first bad field.
 */
export function readLtiResourceChanges(params: Params, mode: 'create' | 'update'): LtiResourceChanges {
  const changes: LtiResourceChanges = {};
  const toolProviderId = idParam(params, 'tool_provider_id');
  if (toolProviderId === null || (mode === 'create' && toolProviderId === undefined)) {
    throw new ParamMissing('tool_provider_id');
  }
  if (toolProviderId !== undefined) changes.toolProviderId = toolProviderId;
  const resourceLinkId = text(params, 'resource_link_id');
  if (resourceLinkId === null || (mode === 'create' && resourceLinkId === undefined)) {
    throw new ParamMissing('resource_link_id');
  }
  if (resourceLinkId !== undefined) changes.resourceLinkId = resourceLinkId;
  const examId = idParam(params, 'exam_id');
  if (examId !== undefined) changes.examId = examId;
  const contextId = text(params, 'context_id');
  if (contextId !== undefined) changes.contextId = contextId;
  const title = text(params, 'title');
  if (title !== undefined) changes.title = title;
  return changes;
}

/** The parameters of `show_lti_student`: the LMS's user id and resource link, and optionally its context. */
export interface LtiStudentQuery {
  readonly lmsUserId: string;
  readonly resourceLinkId: string;
  readonly contextId: string | undefined;
}

/**
 * Reads `student_lms_id` and `resource_link_id` (required, in that order) and `context_id`
 * (optional; blank counts as absent). Returns them; throws ParamMissing or Invalid.
 */
export function readLtiStudentQuery(params: Params): LtiStudentQuery {
  const lmsUserId = text(params, 'student_lms_id');
  if (lmsUserId === undefined || lmsUserId === null) throw new ParamMissing('student_lms_id');
  const resourceLinkId = text(params, 'resource_link_id');
  if (resourceLinkId === undefined || resourceLinkId === null) throw new ParamMissing('resource_link_id');
  const contextId = text(params, 'context_id') ?? undefined;
  return { lmsUserId, resourceLinkId, contextId };
}
