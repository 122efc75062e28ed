import type { Role } from '../access.ts';

export interface User {
  readonly id: number;
  readonly instituteId: number;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  readonly identityProviderId: number | null;
  readonly active: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Credentials are shown once, at creation or rotation; only a hash and a ciphertext are kept. */
export interface Credentials {
  readonly apiToken: string;
  readonly secretKey: string;
}
