import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { DataKeyUnavailable } from '../domain/errors.ts';
import { loadServerKeys, type ServerKeys } from '../security/keys.ts';
import { withCore } from './core.ts';
import { firstLineOfStdin } from './stdin.ts';
import { options, print, UsageError } from './usage.ts';

/**
 * The server keys in use before a change of server key: from `<dir>/server.key` when `oldDataDir`
 * is given (a copy of the former DATA_DIR's key file), else from the former INVIGIL_SECRET read from
 * the first line of standard input (so it appears in no process list or shell history). Throws
 * UsageError when the key file is not there or the secret is too short.
 */
async function previousKeys(oldDataDir: string | undefined): Promise<ServerKeys> {
  if (oldDataDir !== undefined) {
    // loadServerKeys would make a new key file where there is none: that is never the old key.
    if (!fs.existsSync(path.join(oldDataDir, 'server.key'))) {
      throw new UsageError(`--old-data-dir holds no server.key: ${oldDataDir}`);
    }
    return loadServerKeys(undefined, oldDataDir);
  }
  const secret = await firstLineOfStdin();
  if (secret.length < 32) {
    throw new UsageError(
      'the former INVIGIL_SECRET (first line of standard input) must be at least 32 characters',
    );
  }
  return loadServerKeys(secret, oldDataDir ?? '.');
}

/**
 * `keys rotate [--institute ID]` and `keys rewrap [--old-data-dir DIR]` (docs/storage.md,
 * "Rotating keys"). Prints the result as JSON; throws UsageError, and DataKeyUnavailable (exit 1,
 * after printing the result) when some data key opens under neither server key.
 */
export async function runKeysCommand(
  config: Config,
  action: string | undefined,
  rest: string[],
): Promise<void> {
  if (action === 'rotate') {
    const args = options(rest, ['institute'], []);
    const institute = args.institute;
    if (institute !== undefined && !/^\d+$/.test(institute)) {
      throw new UsageError('--institute must be a whole number');
    }
    await withCore(config, async ({ services }) => {
      const made = await services.dataKeys.rotate(institute === undefined ? undefined : Number(institute));
      print({ rotated: made.map((key) => ({ institute_id: key.institute, version: key.version })) });
    });
    return;
  }
  if (action === 'rewrap') {
    const args = options(rest, ['old-data-dir'], []);
    const previous = await previousKeys(args['old-data-dir']);
    await withCore(config, async ({ services }) => {
      const result = await services.dataKeys.rewrap(previous);
      print({
        rewrapped: result.rewrapped,
        unchanged: result.unchanged,
        unreadable: result.unreadable.map((key) => ({ institute_id: key.institute, version: key.version })),
      });
      const [first] = result.unreadable;
      if (first !== undefined) {
        throw new DataKeyUnavailable(
          first.institute,
          first.version,
          `${result.unreadable.length} data key(s) open under neither the current nor the former server key`,
        );
      }
    });
    return;
  }
  throw new UsageError(`unknown command: keys ${action ?? ''}`.trim());
}
