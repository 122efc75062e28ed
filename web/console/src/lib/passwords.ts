/**
 * The service's password rule as the console tells it before anything is typed: 12 to 1024
 * characters (src/http/staff/sign-in.schemas.ts, docs/staff-sign-in.md "Passwords"), counted as
 * characters, not bytes. The service checks it again; this only saves a round trip.
 */
import { t } from '../../../shared/i18n.svelte.ts';

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
      message: t('console.passwords.tooShort', { min: PASSWORD_MIN, length }),
    };
  }
  if (length > PASSWORD_MAX) {
    return { field: 'password', message: t('console.passwords.tooLong', { max: PASSWORD_MAX }) };
  }
  if (password !== again) {
    return { field: 'again', message: t('console.passwords.differ') };
  }
  return undefined;
}
