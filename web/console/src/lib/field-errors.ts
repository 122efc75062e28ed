/** The per-field messages of a refused write, for showing each next to its control. */
import { t } from '../../../shared/i18n.svelte.ts';

/** The service's sentence for a required field that was left out or empty. */
const MISSING = /^Param is missing or the value is empty: '([a-z_]+)'$/;

/**
 * The fields a 422 answer names, each with its message: the `errors` member
 * (`{"errors": {"email": ["is invalid"]}}` → "is invalid"), or the field of a "Param is missing"
 * answer ("is required"). An empty object when the answer names no field. Throws nothing.
 */
export function fieldErrors(error: unknown): Record<string, string> {
  if (typeof error !== 'object' || error === null) return {};
  const { errors, error: message } = error as { errors?: unknown; error?: unknown };
  const messages: Record<string, string> = {};
  if (typeof errors === 'object' && errors !== null) {
    for (const [field, detail] of Object.entries(errors as Record<string, unknown>)) {
      messages[field] = Array.isArray(detail) ? detail.map(String).join(', ') : String(detail);
    }
  }
  const missing = typeof message === 'string' ? MISSING.exec(message) : null;
  if (missing?.[1] !== undefined) messages[missing[1]] ??= t('console.fieldErrors.required');
  return messages;
}
