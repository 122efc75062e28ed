import crypto from 'node:crypto';

/**
 * The email Invigil gives a learner whose learning platform sent none (docs/lti.md, "Placeholder
 * emails"). A student session needs an email (the (exam, email, attempt) rule), but nobody reads
 * this one: it lies under `.invalid`, a name that never resolves (RFC 2606), and the mail delivery
 * marks a message to it failed instead of sending it.
 */

/** The domain of placeholder emails. */
export const PLACEHOLDER_EMAIL_DOMAIN = 'lti.invalid';

/** True for an email Invigil made up for a learner (any case). Returns the answer. */
export function isPlaceholderEmail(email: string): boolean {
  return email.trim().toLowerCase().endsWith(`@${PLACEHOLDER_EMAIL_DOMAIN}`);
}

/**
 * The placeholder email of a platform user: stable for (tool provider, platform user), so every
 * launch finds the same session, and free of the platform's id (a hash of it). Returns it.
 */
export function placeholderEmail(toolProviderId: number, platformUserId: string): string {
  const digest = crypto.createHash('sha256').update(`${toolProviderId}\n${platformUserId}`).digest('hex');
  return `lti-${digest.slice(0, 24)}@${PLACEHOLDER_EMAIL_DOMAIN}`;
}
