/**
 * The service's password rule as the console tells it before anything is typed: 12 to 1024
 * characters (src/http/staff/sign-in.schemas.ts, docs/staff-sign-in.md "Passwords"), counted as
 * characters, not bytes. The service checks it again; this only saves a round trip.
 */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 1024;

/** What is wrong with a new password and its repetition, or undefined when nothing is. */
export function newPasswordProblem(
  password: string,
  again: string,
): { field: 'password' | 'again'; message: string } | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN) {
    return {
      field: 'password',
      message: `Use at least ${PASSWORD_MIN} characters (this one has ${length}).`,
    };
  }
  if (length > PASSWORD_MAX) {
    return { field: 'password', message: `Use at most ${PASSWORD_MAX} characters.` };
  }
  if (password !== again) {
    return { field: 'again', message: 'The two passwords differ. Type the same password in both boxes.' };
  }
  return undefined;
}
