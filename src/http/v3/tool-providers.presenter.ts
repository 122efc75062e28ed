import type { ToolProvider } from '../../domain/tool-providers/tool-provider.ts';
import { isoTime } from '../time.ts';

/**
 * The V3 tool_provider record (contract §6). Every field is present; those of the other LTI version
 * are null. The shared secret is write-only: `has_shared_secret` says whether one is stored.
 */
export function presentToolProviderV3(provider: ToolProvider): Record<string, unknown> {
  return {
    id: provider.id,
    institute_id: provider.instituteId,
    name: provider.name,
    lti_version: provider.ltiVersion,
    consumer_key: provider.consumerKey,
    has_shared_secret: provider.hasSharedSecret,
    issuer: provider.issuer,
    client_id: provider.clientId,
    deployment_id: provider.deploymentId,
    auth_login_url: provider.authLoginUrl,
    auth_token_url: provider.authTokenUrl,
    jwks_url: provider.jwksUrl,
    created_at: isoTime(provider.createdAt),
    updated_at: isoTime(provider.updatedAt),
  };
}
