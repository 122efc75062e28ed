import fs from 'node:fs';
import type { Config } from '../config/config.ts';
import { Invalid } from '../domain/errors.ts';
import { presentIdentityProviderV3 } from '../http/v3/identity-providers.presenter.ts';
import { firstLineOfStdin } from './stdin.ts';
import { withCore } from './core.ts';
import { options, print, UsageError } from './usage.ts';

/** `--institute ID` as a number, or null when absent. Throws UsageError for anything but digits. */
function instituteOption(value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^\d+$/.test(value)) throw new UsageError('--institute must be a whole number');
  return Number(value);
}

/**
 * The metadata `--metadata` gives: the text itself when it starts like XML or JSON, otherwise the
 * contents of the file it names. Throws Invalid (exit 1) when it is neither.
 */
function readMetadata(value: string): string {
  const start = value.replace(/^\uFEFF/, '').trimStart();
  if (start.startsWith('<') || start.startsWith('{')) return value;
  try {
    return fs.readFileSync(value, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new Invalid(
      'metadata',
      `is neither metadata (XML or JSON) nor a readable file: ${value} (${reason})`,
    );
  }
}

/**
 * `idp create --institute ID --name NAME --issuer URL --client-id ID [--scopes "openid email"]`: an
 * OpenID Connect provider staff sign in with (docs/staff-sign-in.md, "OpenID Connect"), its client
 * secret read from the first line of standard input so it appears in no process list or shell
 * history. Prints `{"identity_provider": ..., "redirect_uri": ...}` (never the secret); throws
 * UsageError, or a domain error for a bad issuer, scope, secret or an unknown institute.
 */
async function createOidcProvider(config: Config, args: string[]): Promise<void> {
  const opts = options(
    args,
    ['institute', 'name', 'issuer', 'client-id', 'scopes'],
    ['institute', 'name', 'issuer', 'client-id'],
  );
  const instituteId = instituteOption(opts.institute);
  if (instituteId === null) throw new UsageError('--institute is required');
  const clientSecret = await firstLineOfStdin();
  await withCore(config, async ({ services }) => {
    const created = await services.identityProviders.createOidc({
      instituteId,
      name: opts.name ?? '',
      issuer: opts.issuer ?? '',
      clientId: opts['client-id'] ?? '',
      clientSecret,
      scopes: opts.scopes?.split(/\s+/).filter((scope) => scope !== ''),
    });
    print({
      identity_provider: presentIdentityProviderV3(created),
      redirect_uri: `${config.publicUrl}/auth/oidc/callback`,
    });
  });
}

/**
 * Runs `idp create --name NAME --protocol saml|oidc --metadata FILE|TEXT [--institute ID]`, printing
 * `{"identity_provider": ...}`, or `idp list [--institute ID]`, printing `{"identity_providers": [...]}`
 * (every configuration, or an institute's own and the global ones). Throws UsageError for a bad
 * call (exit 2), or a domain error (exit 1) for invalid metadata, protocol or an unknown institute.
 */
export async function runIdpCommand(
  config: Config,
  action: string | undefined,
  args: string[],
): Promise<void> {
  if (action === 'create' && args.some((arg) => arg === '--issuer' || arg.startsWith('--issuer='))) {
    return createOidcProvider(config, args);
  }
  if (action === 'create') {
    const opts = options(
      args,
      ['name', 'protocol', 'metadata', 'institute'],
      ['name', 'protocol', 'metadata'],
    );
    const instituteId = instituteOption(opts.institute);
    const metadata = readMetadata(opts.metadata ?? '');
    await withCore(config, async ({ services }) => {
      const created = await services.identityProviders.create({
        name: opts.name ?? '',
        protocol: opts.protocol ?? '',
        metadata,
        instituteId,
      });
      print({ identity_provider: presentIdentityProviderV3(created) });
    });
    return;
  }
  if (action === 'list') {
    const instituteId = instituteOption(options(args, ['institute'], []).institute);
    await withCore(config, async ({ services }) => {
      const found = await services.identityProviders.listAll(instituteId);
      print({ identity_providers: found.map(presentIdentityProviderV3) });
    });
    return;
  }
  throw new UsageError(`unknown command: idp ${action ?? ''}`.trimEnd());
}
