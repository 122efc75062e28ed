/** What the "Add a user" form reports once the user exists (and whether the invitation went out). */
export interface CreatedUser {
  readonly id: number;
  readonly name: string;
  readonly email: string;
  readonly role: string;
  /** The invitation's link (only without SMTP) and its expiry, when one was sent. */
  readonly invitation?: { readonly url: string | null; readonly expiresAt: string | null };
  /** Set when the user was created but the invitation could not be sent. */
  readonly invitationProblem?: string;
}
