import type { IdentityProvider } from '../../domain/identity-providers/identity-provider.ts';
import { isoTime } from '../time.ts';

/** The V3 identity_provider record (contract §6); the metadata is never part of it. */
export function presentIdentityProviderV3(provider: IdentityProvider): Record<string, unknown> {
  return {
    id: provider.id,
    name: provider.name,
    protocol: provider.protocol,
    institute_id: provider.instituteId,
    created_at: isoTime(provider.createdAt),
  };
}
