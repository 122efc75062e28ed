/**
 * A refused save, split for the form: the message for each field the service named (shown under
 * that field) and one summary sentence (shown in the ErrorMessage at the top). The service's V3
 * error answer names a field in `errors` (`{"end_time": ["must be after start_time"]}`) or, for a
 * missing value, in its message (`Param is missing or the value is empty: 'name'`).
 */
import { t } from '../../../shared/i18n.svelte.ts';
import { problem } from './api';

export interface SaveProblem {
  /** API field name → what is wrong with it, in words for the exam office. */
  readonly fields: Record<string, string>;
  /** One sentence for the summary, saying what to do. */
  readonly summary: string;
}

const MISSING = /^Param is missing or the value is empty: '([^']+)'$/;

/** Replaces API field names inside a rule ("must be after start_time") by their labels. */
function inWords(rule: string, labels: Readonly<Record<string, string>>): string {
  return rule.replace(/\b[a-z]+(?:_[a-z]+)+\b/g, (name) => {
    const label = labels[name];
    return label === undefined ? name : `“${label}”`;
  });
}

/**
 * Reads a failed answer. Returns the fields it names with their messages, and a summary: for a
 * refused field, which fields to correct; otherwise the service's own sentence (problem()).
 * `what` is the first words of the summary, already in the reader's language ("Not saved").
 */
export function saveProblem(
  error: unknown,
  response: Response | undefined,
  labels: Readonly<Record<string, string>>,
  what = t('console.saveProblem.notSaved'),
): SaveProblem {
  const fields: Record<string, string> = {};
  const answer = (typeof error === 'object' && error !== null ? error : {}) as {
    error?: unknown;
    errors?: unknown;
  };
  if (response?.status === 422 || response?.status === 400) {
    if (typeof answer.errors === 'object' && answer.errors !== null) {
      for (const [field, rules] of Object.entries(answer.errors as Record<string, unknown>)) {
        const text = Array.isArray(rules) ? rules.map(String).join(', ') : String(rules);
        fields[field] = t('console.saveProblem.field', {
          label: labels[field] ?? field,
          rule: inWords(text, labels),
        });
      }
    }
    const missing = typeof answer.error === 'string' ? MISSING.exec(answer.error) : null;
    if (missing?.[1] !== undefined && fields[missing[1]] === undefined) {
      fields[missing[1]] = t('console.saveProblem.missing', { label: labels[missing[1]] ?? missing[1] });
    }
  }
  const named = Object.values(fields);
  if (named.length === 0)
    return { fields, summary: t('console.saveProblem.summary', { what, reason: problem(error, response) }) };
  return {
    fields,
    summary: t('console.saveProblem.fieldsSummary', { what, problems: named.join(' '), count: named.length }),
  };
}
