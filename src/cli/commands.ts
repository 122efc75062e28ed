import type { Config } from '../config/config.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { presentInstituteV3 } from '../http/v3/institutes.presenter.ts';
import { presentUserV3, userInstitutes } from '../http/v3/users.presenter.ts';
import { runIdpCommand } from './idp.ts';
import { runKeysCommand } from './keys.ts';
import { runMailReadCommand } from './mail.ts';
import { firstLineOfStdin } from './stdin.ts';
import { withCore } from './core.ts';
import { options, print, UsageError } from './usage.ts';

export const USAGE = `Usage: invigil <command>

  serve [--no-worker] [--processes N]
                             HTTP API plus the background worker (default port 3000);
                             N serving processes share the port (default INVIGIL_PROCESSES, 1)
  worker                     the background worker alone
  migrate                    apply pending database migrations
  institute create --name NAME --short-name SHORT
  user create --institute ID --email EMAIL --name NAME --role ROLE
  user rotate-credentials --id ID
  user invite --id ID        queue an invitation email; print its one-time link
  user set-password --id ID  set the password read from standard input (first line)
  idp create --name NAME --protocol saml|oidc --metadata FILE|TEXT [--institute ID]
  idp create --institute ID --name NAME --issuer URL --client-id ID [--scopes "openid email profile"]
                             an OpenID Connect provider staff sign in with; the client
                             secret is read from standard input (first line)
  idp list [--institute ID]  (identity-provider is another name for idp)
  mail redeliver             queue held and failed emails for delivery again
  mail list [--status held|failed|sent|queued] [--limit N]
                             the newest emails in the outbox (no bodies)
  mail show ID               one email with its text and HTML bodies
  keys rotate [--institute ID]
                             start a new data-key version (one institute, or all): new
                             files are sealed with it, older ones keep reading
  keys rewrap [--old-data-dir DIR]
                             after changing the server key: re-wrap every data key under
                             the new one; the former INVIGIL_SECRET is read from standard
                             input (first line), or the former server.key from DIR

Configuration comes from the environment; see README.md.`;

function wholeNumber(flag: string, value: string): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`--${flag} must be a whole number`);
  return Number(value);
}

/** Runs one administrative command (anything but serve and worker), printing its JSON result. */
export async function runCommand(config: Config, argv: string[]): Promise<void> {
  const [group, action, ...rest] = argv;
  if (group === 'migrate') {
    const database = openDatabase(config.database);
    try {
      print({ migrated: await migrateToLatest(database) });
    } finally {
      await database.destroy();
    }
    return;
  }
  if (group === 'institute' && action === 'create') {
    const args = options(rest, ['name', 'short-name']);
    await withCore(config, async ({ services }) => {
      const institute = await services.institutes.create({ name: args.name, short_name: args['short-name'] });
      print({ institute: presentInstituteV3(institute) });
    });
    return;
  }
  if (group === 'user' && action === 'create') {
    const args = options(rest, ['institute', 'email', 'name', 'role']);
    const instituteId = wholeNumber('institute', args.institute ?? '');
    await withCore(config, async ({ services, database }) => {
      const { user, credentials } = await services.users.create(instituteId, args);
      const institute = await userInstitutes(database.db)(user.instituteId);
      print({ user: presentUserV3(user, institute, credentials) });
    });
    return;
  }
  if (group === 'user' && action === 'rotate-credentials') {
    const args = options(rest, ['id']);
    const id = wholeNumber('id', args.id ?? '');
    await withCore(config, async ({ services, database }) => {
      const { user, credentials } = await services.users.rotateCredentials(id);
      const institute = await userInstitutes(database.db)(user.instituteId);
      print({ user: presentUserV3(user, institute, credentials) });
    });
    return;
  }
  if (group === 'user' && action === 'invite') {
    const id = wholeNumber('id', options(rest, ['id']).id ?? '');
    await withCore(config, async ({ services }) => {
      const link = await services.staffAuth.invite(id);
      print({ invitation: { url: link.url, expires_at: new Date(link.expiresAt).toISOString() } });
    });
    return;
  }
  if (group === 'user' && action === 'set-password') {
    const id = wholeNumber('id', options(rest, ['id']).id ?? '');
    const password = await firstLineOfStdin();
    await withCore(config, async ({ services }) => {
      await services.staffAuth.setPassword(id, password);
      print({ password_set: { user_id: id } });
    });
    return;
  }
  if (group === 'idp' || group === 'identity-provider') return runIdpCommand(config, action, rest);
  if (group === 'keys') return runKeysCommand(config, action, rest);
  if (group === 'mail' && action === 'redeliver' && rest.length === 0) {
    await withCore(config, async ({ services }) => {
      print({ requeued: await services.mail.redeliver() });
    });
    return;
  }
  if (group === 'mail' && (action === 'list' || action === 'show')) {
    return runMailReadCommand(config, action, rest);
  }
  throw new UsageError(group === undefined ? 'no command given' : `unknown command: ${argv.join(' ')}`);
}
