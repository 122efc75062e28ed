import type { Db } from '../db/database.ts';
import { type DeepLinkingSettings, LtiRefused } from '../domain/lti/launch.ts';
import type { ToolKeys } from './keys.ts';
import { LTI_CLAIM, signToolMessage } from './tool-message.ts';

/**
 * LTI Deep Linking 2.0, the tool's answer (docs/lti.md, "Deep linking"): a teacher's
 * `LtiDeepLinkingRequest` launch leaves a single-use ticket (lti_tickets, purpose `deep_link`)
 * and lands in the console, where they pick an exam; the console's form posts the choice to
 * `POST /lti/deep-link`, which answers a page posting the signed `LtiDeepLinkingResponse` back to
 * the platform. The one content item is an `ltiResourceLink` to Invigil's launch URL whose custom
 * parameter `invigil_exam_id` names the exam, so the platform's later launches of that link open it.
 */

/** The ticket purpose. */
export const DEEP_LINK_PURPOSE = 'deep_link';

/** The custom parameter that names the exam of a deep-linked resource link. */
export const EXAM_ID_PARAMETER = 'invigil_exam_id';

/** What a `deep_link` ticket carries (written by the launch service, src/domain/lti). */
export interface DeepLinkTicketPayload {
  readonly toolProviderId: number;
  /** The launch's `deployment_id`. */
  readonly deploymentId: string | null;
  /** The launch's `iss`. */
  readonly platformIssuer: string;
  /** The Invigil user the launch signed in: only they may use the ticket. */
  readonly userId: number;
  readonly settings: DeepLinkingSettings;
}

/** A deep-linking answer that cannot be sent; `message` is shown to the user as is. */
export class DeepLinkRefused extends LtiRefused {
  override name = 'DeepLinkRefused';
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/**
 * Reads a `deep_link` ticket's payload (the JSON already parsed). Returns it; throws
 * DeepLinkRefused (400 `bad_ticket`) when it is not one.
 */
export function parseDeepLinkTicketPayload(value: unknown): DeepLinkTicketPayload {
  const payload = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const settings = (
    typeof payload.settings === 'object' && payload.settings !== null ? payload.settings : {}
  ) as Record<string, unknown>;
  const returnUrl = text(settings.returnUrl);
  const platformIssuer = text(payload.platformIssuer);
  if (
    typeof payload.toolProviderId !== 'number' ||
    typeof payload.userId !== 'number' ||
    returnUrl === null ||
    platformIssuer === null
  ) {
    throw new DeepLinkRefused(
      'bad_ticket',
      'This link to your course cannot be used. Start again from your course.',
      400,
    );
  }
  return {
    toolProviderId: payload.toolProviderId,
    deploymentId: text(payload.deploymentId),
    platformIssuer,
    userId: payload.userId,
    settings: {
      returnUrl,
      data: text(settings.data),
      acceptTypes: Array.isArray(settings.acceptTypes)
        ? settings.acceptTypes.filter((each): each is string => typeof each === 'string')
        : [],
      acceptMultiple: settings.acceptMultiple === true,
      title: text(settings.title),
    },
  };
}

/** A signed response ready to post: where to, and the message (the form field `JWT`). */
export interface DeepLinkingResponse {
  readonly action: string;
  readonly jwt: string;
}

/**
 * Builds the `LtiDeepLinkingResponse` that links exam `exam` in the course: signed by the tool's
 * key, `iss`/`azp` the tool provider's client_id, `aud` the platform's issuer, the deployment, one
 * `ltiResourceLink` item (title the exam's name, url `{publicUrl}/lti/launch`, custom
 * `invigil_exam_id`) and the request's `data` returned as it came. The exam must belong to the
 * tool provider's institute. Returns the response; throws DeepLinkRefused (404 the tool provider is
 * gone or is no LTI 1.3 registration, 403 an exam of another institute, 400 the platform does not
 * accept resource links).
 */
export async function buildDeepLinkingResponse(
  deps: { readonly db: Db; readonly keys: ToolKeys; readonly publicUrl: string },
  ticket: DeepLinkTicketPayload,
  exam: { readonly id: number; readonly name: string; readonly instituteId: number },
): Promise<DeepLinkingResponse> {
  const provider = await deps.db
    .selectFrom('tool_providers')
    .select(['institute_id', 'client_id', 'lti_version'])
    .where('id', '=', ticket.toolProviderId)
    .executeTakeFirst();
  if (provider === undefined || provider.lti_version !== '1.3' || provider.client_id === null) {
    throw new DeepLinkRefused(
      'unknown_tool_provider',
      'Your learning platform’s registration in Invigil was removed. Ask your administrator.',
      404,
    );
  }
  if (provider.institute_id !== exam.instituteId) {
    throw new DeepLinkRefused(
      'other_institute',
      'That exam belongs to another institute than this learning platform. Choose one of your institute’s exams.',
      403,
    );
  }
  const { settings } = ticket;
  if (settings.acceptTypes.length > 0 && !settings.acceptTypes.includes('ltiResourceLink')) {
    throw new DeepLinkRefused(
      'links_not_accepted',
      'Your learning platform does not accept links to activities at this place. Add Invigil as an activity instead.',
      400,
    );
  }
  const item = {
    type: 'ltiResourceLink',
    title: exam.name,
    url: `${deps.publicUrl.replace(/\/$/, '')}/lti/launch`,
    custom: { [EXAM_ID_PARAMETER]: String(exam.id) },
  };
  const jwt = await signToolMessage(
    deps.keys,
    {
      clientId: provider.client_id,
      platformIssuer: ticket.platformIssuer,
      deploymentId: ticket.deploymentId,
    },
    'LtiDeepLinkingResponse',
    {
      [LTI_CLAIM.contentItems]: [item],
      ...(settings.data === null ? {} : { [LTI_CLAIM.deepLinkingData]: settings.data }),
    },
  );
  return { action: settings.returnUrl, jwt };
}
