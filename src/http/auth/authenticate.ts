import type { NoncePolicy } from '../../config/config.ts';
import type { Db } from '../../db/database.ts';
import type { Actor } from '../../domain/access.ts';
import type { Clock } from '../../domain/clock.ts';
import { Unauthorized } from '../../domain/errors.ts';
import type { UsersService } from '../../domain/users/users.service.ts';
import { canonicalMessage, signaturesMatch, signMessage } from './canonical.ts';
import { createNonceStore } from './nonce-store.ts';

export interface AuthSettings {
  readonly noncePolicy: NoncePolicy;
  readonly windowSeconds: number;
}

/**
 * Reads the V3 header `Authorization: Token token=<api_token>` (the token may be quoted).
 * Returns the token, or undefined when the header is absent or of another scheme.
 */
export function tokenFromHeader(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*Token\s+token\s*=\s*"?([^",\s]+)"?/i.exec(header);
  return match?.[1];
}

/** The active user a token names, as UsersService.authenticate returns it. */
export type TokenUser = { readonly actor: Actor; readonly secretKey: string };

export interface Authenticator {
  /**
   * Checks one signed request: the token names an active user, the signature covers `signing` under
   * that user's secret, the timestamp lies in the window, the nonce is fresh. `known` is the user the
   * same token was found to name earlier in this request (checked before its body was read), which
   * spares a second lookup. Returns the actor; throws Unauthorized with the reason (for the log only)
   * otherwise.
   */
  authenticate(
    apiToken: string | undefined,
    signing: Readonly<Record<string, string>>,
    known?: TokenUser,
  ): Promise<Actor>;
}

export function createAuthenticator(deps: {
  db: Db;
  users: UsersService;
  clock: Clock;
  settings: AuthSettings;
}): Authenticator {
  const { db, users, clock, settings } = deps;
  const nonces = createNonceStore(db, settings.noncePolicy);
  const windowMs = settings.windowSeconds * 1000;
  return {
    async authenticate(apiToken, signing, known) {
      if (apiToken === undefined || apiToken === '') throw new Unauthorized('no api token');
      const { signature, timestamp, nonce } = signing;
      if (signature === undefined) throw new Unauthorized('no signature');
      if (timestamp === undefined || !/^\d{1,16}$/.test(timestamp))
        throw new Unauthorized('missing or bad timestamp');
      if (nonce === undefined || !/^\d{1,40}$/.test(nonce)) throw new Unauthorized('missing or bad nonce');
      const found = known ?? (await users.authenticate(apiToken));
      if (found === undefined) throw new Unauthorized('unknown token or inactive user');
      const expected = signMessage(found.secretKey, canonicalMessage(signing));
      if (!signaturesMatch(signature, expected))
        throw new Unauthorized(`bad signature for user ${found.actor.id}`);
      const now = clock.now();
      const sentAt = Number(timestamp);
      if (Math.abs(now - sentAt) > windowMs)
        throw new Unauthorized(`timestamp outside the window for user ${found.actor.id}`);
      const fresh = await nonces.remember({
        userId: found.actor.id,
        nonce,
        timestamp,
        signature,
        expiresAt: Math.max(now, sentAt) + windowMs,
        now,
      });
      if (!fresh)
        throw new Unauthorized(`replayed nonce for user ${found.actor.id} (policy ${settings.noncePolicy})`);
      return found.actor;
    },
  };
}
