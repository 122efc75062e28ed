/**
 * A refused save, split for the form: the message for each field the service named (shown under
 * that field) and one summary sentence (shown in the ErrorMessage at the top). The service's V3
 * error answer names a field in `errors` (`{"end_time": ["must be after start_time"]}`) or, for a
 * missing value, in its message (`Param is missing or the value is empty: 'name'`).
 */
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
 */
export function saveProblem(
  error: unknown,
  response: Response | undefined,
  labels: Readonly<Record<string, string>>,
  what = 'Not saved',
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
        fields[field] = `${labels[field] ?? field} ${inWords(text, labels)}.`;
      }
    }
    const missing = typeof answer.error === 'string' ? MISSING.exec(answer.error) : null;
    if (missing?.[1] !== undefined && fields[missing[1]] === undefined) {
      fields[missing[1]] = `${labels[missing[1]] ?? missing[1]} is required: fill it in.`;
    }
  }
  const named = Object.values(fields);
  if (named.length === 0) return { fields, summary: `${what}. ${problem(error, response)}` };
  return {
    fields,
    summary: `${what}: ${named.join(' ')} Correct the marked ${named.length === 1 ? 'field' : 'fields'} and try again.`,
  };
}
