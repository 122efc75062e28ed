/** A failure the CLI reports as a usage error (exit 2) rather than a failed command (exit 1). */
export class UsageError extends Error {
  override name = 'UsageError';
}
