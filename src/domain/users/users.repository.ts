import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { UsersTable } from '../../db/tables.ts';
import { ROLES } from '../access.ts';
import type { User } from './user.ts';

function userFromRow(row: Selectable<UsersTable>): User {
  const role = ROLES.find((known) => known === row.role);
  if (role === undefined) throw new Error(`user ${row.id} has an unknown role ${row.role}`);
  return {
    id: row.id,
    instituteId: row.institute_id,
    email: row.email,
    name: row.name,
    role,
    identityProviderId: row.identity_provider_id,
    active: Boolean(row.active),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface NewUserRow {
  readonly instituteId: number;
  readonly email: string;
  readonly name: string;
  readonly role: string;
  readonly apiTokenHash: string;
  readonly secretKeyEncrypted: string;
}

/** Inserts a user. Returns it; throws the database's unique violation when the email is taken. */
export async function insertUser(db: Db, input: NewUserRow, now: number): Promise<User> {
  const row = await db
    .insertInto('users')
    .values({
      institute_id: input.instituteId,
      email: input.email,
      name: input.name,
      role: input.role,
      api_token_hash: input.apiTokenHash,
      secret_key_encrypted: input.secretKeyEncrypted,
      active: true,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return userFromRow(row);
}

/** Returns the user, or undefined. */
export async function findUser(db: Db, id: number): Promise<User | undefined> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : userFromRow(row);
}

/** The user holding this token hash with its encrypted secret, or undefined. */
export async function findUserByTokenHash(
  db: Db,
  tokenHash: string,
): Promise<{ user: User; secretKeyEncrypted: string } | undefined> {
  const row = await db
    .selectFrom('users')
    .selectAll()
    .where('api_token_hash', '=', tokenHash)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { user: userFromRow(row), secretKeyEncrypted: row.secret_key_encrypted };
}

/** Replaces a user's credentials. Returns false when there is no such user. */
export async function replaceCredentials(
  db: Db,
  id: number,
  apiTokenHash: string,
  secretKeyEncrypted: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ api_token_hash: apiTokenHash, secret_key_encrypted: secretKeyEncrypted, updated_at: now })
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
