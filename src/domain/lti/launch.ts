/**
 * A launch from a learning platform, once its signature and freshness have been verified, in one
 * shape for LTI 1.1 (OAuth 1.0a form post) and LTI 1.3 (id_token): what the rest of Invigil acts on
 * (docs/lti.md). The verifiers (src/lti/id-token.ts, src/lti/oauth1.ts) build it; the launch service
 * (src/domain/lti/launch.service.ts) decides what it does.
 */

/** The message a launch carries. LTI 1.1 only has `resource_link`. */
export type LtiMessageKind = 'resource_link' | 'deep_linking' | 'start_proctoring' | 'end_assessment';

/** LTI roles reduced to what Invigil tells apart. */
export type LtiRole = 'learner' | 'instructor' | 'administrator';

/** The tool provider (platform registration) a launch was verified against. */
export interface LaunchToolProvider {
  readonly id: number;
  readonly instituteId: number;
  readonly name: string;
}

/** LTI Proctoring Services claims of an `LtiStartProctoring` or `LtiEndAssessment` launch. */
export interface ProctoringClaims {
  readonly attemptNumber: number;
  /** Where the tool sends the browser with `LtiStartAssessment` (start_proctoring only). */
  readonly startAssessmentUrl: string | null;
  /** Opaque to Invigil; returned as sent. */
  readonly sessionData: string | null;
  /** The Assessment Control Service, when the platform offers one. */
  readonly acs: { readonly url: string; readonly actions: readonly string[] } | null;
}

/** The deep-linking settings of an `LtiDeepLinkingRequest`. */
export interface DeepLinkingSettings {
  readonly returnUrl: string;
  /** Opaque to Invigil; returned as sent. */
  readonly data: string | null;
  readonly acceptTypes: readonly string[];
  readonly acceptMultiple: boolean;
  readonly title: string | null;
}

export interface LtiLaunch {
  readonly version: '1.1' | '1.3';
  readonly toolProvider: LaunchToolProvider;
  readonly messageKind: LtiMessageKind;
  /** LTI 1.3 `deployment_id`; null for 1.1. */
  readonly deploymentId: string | null;
  /** The platform's id of the user: 1.3 `sub`, 1.1 `user_id`. */
  readonly platformUserId: string;
  /** 1.3 `iss`; for 1.1 the tool provider's consumer key. */
  readonly platformIssuer: string;
  readonly name: string | null;
  readonly email: string | null;
  /** Distinct, in no particular order; empty when the platform sent none Invigil knows. */
  readonly roles: readonly LtiRole[];
  readonly resourceLink: { readonly id: string; readonly title: string | null } | null;
  readonly context: { readonly id: string; readonly title: string | null } | null;
  /** Custom parameters (1.1 `custom_*` without the prefix; 1.3 the custom claim), strings only. */
  readonly custom: Readonly<Record<string, string>>;
  /** `launch_presentation.return_url` (1.1 `launch_presentation_return_url`). */
  readonly returnUrl: string | null;
  /**
   * The user's language as the platform names it, a BCP 47 tag: `launch_presentation.locale`
   * (1.1 `launch_presentation_locale`); null or absent when it sent none. It sets the student
   * session's `language` (an unsupported one is ignored) and chooses the LTI pages' language.
   */
  readonly locale?: string | null;
  readonly proctoring: ProctoringClaims | null;
  readonly deepLinking: DeepLinkingSettings | null;
}

/**
 * What a verified launch leads to; the HTTP layer turns it into an answer (a 303, a page that opens
 * a top-level window when the launch came in an iframe, an auto-submitted form).
 */
export type LaunchOutcome =
  /** A learner: to the exam room. */
  | {
      readonly kind: 'room';
      readonly sessionId: number;
      readonly token: string;
      readonly examId: number;
    }
  /** Staff: signed in to the console at `path` (e.g. `/console/exams/12`). */
  | { readonly kind: 'console'; readonly userId: number; readonly path: string }
  /** A page to show (the exam is over, not set up yet...): a title and a plain-text message. */
  | { readonly kind: 'message'; readonly title: string; readonly message: string; readonly status: number };

/**
 * An LTI step that cannot be carried out (a launch, a start-assessment or deep-linking answer);
 * `message` is shown to the user as is, `code` goes to the log, `status` is the answer's.
 */
export class LtiRefused extends Error {
  override name = 'LtiRefused';
  /** A short machine code for the log, e.g. `unknown_resource_link`. */
  readonly code: string;
  readonly status: number;

  constructor(code: string, message: string, status = 400) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

/** A launch that verified but cannot be carried out. */
export class LaunchRefused extends LtiRefused {
  override name = 'LaunchRefused';
}
