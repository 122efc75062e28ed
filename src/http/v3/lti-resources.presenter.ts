import type { LtiResource } from '../../domain/lti-resources/lti-resource.ts';
import { isoTime } from '../time.ts';

/** The V3 lti_resource record (contract §6). */
export function presentLtiResourceV3(resource: LtiResource): Record<string, unknown> {
  return {
    id: resource.id,
    institute_id: resource.instituteId,
    tool_provider_id: resource.toolProviderId,
    exam_id: resource.examId,
    resource_link_id: resource.resourceLinkId,
    context_id: resource.contextId,
    title: resource.title,
    created_at: isoTime(resource.createdAt),
    updated_at: isoTime(resource.updatedAt),
  };
}
