import crypto from 'node:crypto';
import type { ToolKeys } from './keys.ts';

/** LTI 1.3 claim names used by the messages Invigil sends (LTI core, Proctoring Services, Deep Linking). */
export const LTI_CLAIM = {
  messageType: 'https://purl.imsglobal.org/spec/lti/claim/message_type',
  version: 'https://purl.imsglobal.org/spec/lti/claim/version',
  deploymentId: 'https://purl.imsglobal.org/spec/lti/claim/deployment_id',
  resourceLink: 'https://purl.imsglobal.org/spec/lti/claim/resource_link',
  sessionData: 'https://purl.imsglobal.org/spec/lti-ap/claim/session_data',
  attemptNumber: 'https://purl.imsglobal.org/spec/lti-ap/claim/attempt_number',
  contentItems: 'https://purl.imsglobal.org/spec/lti-dl/claim/content_items',
  deepLinkingData: 'https://purl.imsglobal.org/spec/lti-dl/claim/data',
} as const;

/** Who a message Invigil sends to a platform is from and for. */
export interface ToolMessageParties {
  /** The tool's `client_id` at the platform: `iss` and `azp`. */
  readonly clientId: string;
  /** The platform's issuer: `aud`. */
  readonly platformIssuer: string;
  /** The deployment, left out when unknown. */
  readonly deploymentId: string | null;
}

/**
 * Signs an LTI 1.3 message from the tool to a platform (LtiStartAssessment, LtiDeepLinkingResponse):
 * the envelope every such message has (`iss`, `aud`, `azp`, a fresh `nonce`, the message type,
 * version 1.3.0, the deployment) around the message's own `claims`. Returns the JWT.
 */
export function signToolMessage(
  keys: ToolKeys,
  parties: ToolMessageParties,
  messageType: string,
  claims: Record<string, unknown>,
): Promise<string> {
  return keys.sign({
    iss: parties.clientId,
    aud: parties.platformIssuer,
    azp: parties.clientId,
    nonce: crypto.randomBytes(16).toString('base64url'),
    [LTI_CLAIM.messageType]: messageType,
    [LTI_CLAIM.version]: '1.3.0',
    ...(parties.deploymentId === null ? {} : { [LTI_CLAIM.deploymentId]: parties.deploymentId }),
    ...claims,
  });
}
