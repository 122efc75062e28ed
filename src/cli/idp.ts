// Placeholder called by cli/commands.ts; the identity-providers capability (step 3) fills it in.
import type { Config } from '../config/config.ts';
import { UsageError } from './usage.ts';

/** Runs `idp create ...` or `idp list`, printing JSON. Throws UsageError for a bad call. */
export function runIdpCommand(_config: Config, action: string | undefined, _args: string[]): Promise<void> {
  return Promise.reject(new UsageError(`unknown command: idp ${action ?? ''}`));
}
