/**
 * What the sign-in screen says when a sign-in through the institute's OpenID Connect provider
 * failed: the service sends the browser to /console/sign-in?error=<code>, one code of a closed set
 * (OIDC_FAILURES in src/domain/staff-auth/oidc-sign-in.ts), each with a sentence that says what to
 * do next.
 */

/** A sentence for each failure code of an OIDC sign-in (OIDC_FAILURES, docs/staff-sign-in.md). */
const FAILURES: Readonly<Record<string, string>> = {
  unknown_provider:
    'That sign-in option is not available any more. Reload this page and choose again, or sign in with your email and password.',
  provider_unavailable:
    "Your institute's sign-in service could not be reached. Try again in a few minutes, or sign in with your email and password.",
  provider_error:
    "Sign-in was cancelled or refused at your institute's sign-in service. Try again; if it keeps failing, ask your IT help desk.",
  invalid_state:
    'That sign-in took too long, was already used, or was started in another browser. Start again from this page.',
  invalid_response:
    "Invigil could not accept the answer of your institute's sign-in service. Try again; if it keeps failing, tell your Invigil administrator.",
  email_missing:
    "Your institute's sign-in service did not tell Invigil your email address. Ask your Invigil administrator to have the email released to Invigil.",
  email_not_verified:
    "Your institute's sign-in service has not verified your email address. Verify it there (or ask your IT help desk), then try again.",
  no_matching_user:
    'No active Invigil account of that institute has your email address. Ask an Invigil administrator of your institute to invite you.',
  unavailable: 'Invigil could not complete the sign-in. Wait a minute and try again.',
};

/** The sentence for a failed OIDC sign-in's `error` code; undefined when there is no code. */
export function signInFailure(code: string | null): string | undefined {
  if (code === null || code === '') return undefined;
  return (
    FAILURES[code] ??
    'Signing in through your institute did not work. Try again, or sign in with your email and password.'
  );
}
