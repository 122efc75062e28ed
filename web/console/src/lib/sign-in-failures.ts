/**
 * What the sign-in screen says when a sign-in through the institute's OpenID Connect provider
 * failed: the service sends the browser to /console/sign-in?error=<code>, one code of a closed set
 * (OIDC_FAILURES in src/domain/staff-auth/oidc-sign-in.ts), each with a sentence that says what to
 * do next.
 */

import { t } from '../../../shared/i18n.svelte.ts';

/** The message of each failure code of an OIDC sign-in (OIDC_FAILURES, docs/staff-sign-in.md). */
const FAILURES: Readonly<Record<string, string>> = {
  unknown_provider: 'console.signInFailures.unknownProvider',
  provider_unavailable: 'console.signInFailures.providerUnavailable',
  provider_error: 'console.signInFailures.providerError',
  invalid_state: 'console.signInFailures.invalidState',
  invalid_response: 'console.signInFailures.invalidResponse',
  email_missing: 'console.signInFailures.emailMissing',
  email_not_verified: 'console.signInFailures.emailNotVerified',
  no_matching_user: 'console.signInFailures.noMatchingUser',
  unavailable: 'console.signInFailures.unavailable',
};

/** The sentence for a failed OIDC sign-in's `error` code; undefined when there is no code. */
export function signInFailure(code: string | null): string | undefined {
  if (code === null || code === '') return undefined;
  return t(FAILURES[code] ?? 'console.signInFailures.other');
}
