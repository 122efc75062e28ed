import { parseArgs } from 'node:util';

/** A failure the CLI reports as a usage error (exit 2) rather than a failed command (exit 1). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Writes a command's result to standard output as one line of JSON. */
export function print(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/**
 * Reads the `--name value` options `names`; those in `required` (all of them unless given) must be
 * present and non-empty. Returns each option's value (undefined when absent); throws UsageError for
 * an unknown option, a stray argument or a missing required one.
 */
export function options(
  args: string[],
  names: readonly string[],
  required: readonly string[] = names,
): Record<string, string | undefined> {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({
      args,
      options: Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])),
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    // An unknown option or a stray argument is a usage error, not a crash with a stack trace.
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const result: Record<string, string | undefined> = {};
  for (const name of names) {
    const value = values[name];
    if (required.includes(name) && (typeof value !== 'string' || value === '')) {
      throw new UsageError(`--${name} is required`);
    }
    result[name] = typeof value === 'string' ? value : undefined;
  }
  return result;
}
