/**
 * Expected V3 error bodies and small naming helpers the HTTP suites share, so each message is
 * written once (docs/errors.md lists them).
 */

/** The 422 body naming a parameter that is missing or empty. */
export function missing(name: string): Record<string, unknown> {
  return { error: `Param is missing or the value is empty: '${name}'` };
}

/** The 422 body naming one invalid field with its detail. */
export function invalid(field: string, detail: string): Record<string, unknown> {
  return { error: `'${field}':['${detail}']`, errors: { [field]: [detail] } };
}

/** `a teacher`, `an administrator`: the role with its article, for test names. */
export function article(role: string): string {
  return `${/^[aeiou]/.test(role) ? 'an' : 'a'} ${role}`;
}

/** The 403 body of every refusal (a bad signature, a role that may not, ...). */
export const NOT_AUTHORIZED = { error: 'You are not authorized to access this page.' };

/** The 404 body of a record that is missing or out of the caller's scope, naming the id as sent. */
export function notFound(model: string, id: string | number): Record<string, unknown> {
  return { error: `Couldn't find ${model} with 'id'=${id}` };
}
