import type { Selectable, Updateable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { prepared } from '../../db/prepared.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import type { UsersTable } from '../../db/tables.ts';
import { ROLES } from '../access.ts';
import type { ListQuery, Page } from '../listing.ts';
import type { User, UserChanges } from './user.ts';

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
    language: row.language,
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
  readonly identityProviderId?: number | null;
  readonly apiTokenHash: string;
  readonly apiTokenEncrypted: string;
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
      identity_provider_id: input.identityProviderId ?? null,
      api_token_hash: input.apiTokenHash,
      api_token_encrypted: input.apiTokenEncrypted,
      secret_key_encrypted: input.secretKeyEncrypted,
      active: true,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return userFromRow(row);
}

/** True when the installation has at least one user (of any institute, active or not). */
export async function anyUserExists(db: Db): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Returns the user, or undefined. */
export async function findUser(db: Db, id: number): Promise<User | undefined> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : userFromRow(row);
}

/** Runs on every signed request, so it is compiled once. */
const userByTokenHash = prepared(['token-hash'] as [string], (db, tokenHash) =>
  db.selectFrom('users').selectAll().where('api_token_hash', '=', tokenHash),
);

/** The user holding this token hash with its encrypted secret, or undefined. */
export async function findUserByTokenHash(
  db: Db,
  tokenHash: string,
): Promise<{ user: User; secretKeyEncrypted: string } | undefined> {
  const [row] = await userByTokenHash(db, [tokenHash]);
  return row === undefined
    ? undefined
    : { user: userFromRow(row), secretKeyEncrypted: row.secret_key_encrypted };
}

/** A user's credentials as stored: the token's hash (the lookup key) and both encrypted values. */
export interface StoredCredentials {
  readonly apiTokenHash: string;
  /** Null for a user created before migration 0020 whose token was never reissued. */
  readonly apiTokenEncrypted: string | null;
  readonly secretKeyEncrypted: string;
}

/** The user's stored credentials, or undefined when there is no such user. */
export async function findStoredCredentials(db: Db, id: number): Promise<StoredCredentials | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['api_token_hash', 'api_token_encrypted', 'secret_key_encrypted'])
    .where('id', '=', id)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : {
        apiTokenHash: row.api_token_hash,
        apiTokenEncrypted: row.api_token_encrypted,
        secretKeyEncrypted: row.secret_key_encrypted,
      };
}

/**
 * Replaces a user's credentials; with `onlyIfUnrecoverable`, only while its token is not stored
 * encrypted (so two first sign-ins at once issue one set, not two). Returns false when no row
 * changed (no such user, or the condition did not hold).
 */
export async function replaceCredentials(
  db: Db,
  id: number,
  credentials: Omit<StoredCredentials, 'apiTokenEncrypted'> & { readonly apiTokenEncrypted: string },
  now: number,
  onlyIfUnrecoverable = false,
): Promise<boolean> {
  let query = db
    .updateTable('users')
    .set({
      api_token_hash: credentials.apiTokenHash,
      api_token_encrypted: credentials.apiTokenEncrypted,
      secret_key_encrypted: credentials.secretKeyEncrypted,
      updated_at: now,
    })
    .where('id', '=', id);
  if (onlyIfUnrecoverable) query = query.where('api_token_encrypted', 'is', null);
  const result = await query.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

function columnsFrom(changes: UserChanges): Updateable<UsersTable> {
  const values: Updateable<UsersTable> = {};
  if (changes.email !== undefined) values.email = changes.email;
  if (changes.name !== undefined) values.name = changes.name;
  if (changes.role !== undefined) values.role = changes.role;
  if (changes.identityProviderId !== undefined) values.identity_provider_id = changes.identityProviderId;
  if (changes.active !== undefined) values.active = changes.active;
  return values;
}

/**
 * Writes the changes. Returns the user as saved, or undefined if it vanished meanwhile; throws the
 * database's unique violation when the new email is taken.
 */
export async function updateUser(
  db: Db,
  id: number,
  changes: UserChanges,
  now: number,
): Promise<User | undefined> {
  const row = await db
    .updateTable('users')
    .set({ ...columnsFrom(changes), updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : userFromRow(row);
}

/** One page of an institute's users, filtered and sorted. Returns the page with the total count. */
export async function listUsers(db: Db, instituteId: number, list: ListQuery): Promise<Page<User>> {
  const base = applyConditions(
    db.selectFrom('users').where('users.institute_id', '=', instituteId),
    list,
    'users',
  );
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    applyOrderAndPage(base.selectAll('users'), list, 'users').execute(),
  ]);
  return { items: rows.map(userFromRow), total: Number(countRow.count), page: list.page, limit: list.limit };
}

/**
 * Deletes a user who owns no exam (of any status: a destroyed exam keeps its owner), with its nonces
 * and co-manager rows; sessions it proctored lose their proctor. Run it in a transaction so the check
 * and the delete see the same rows. Returns `deleted`, `owns_exams` (nothing changed) or `missing`;
 * throws the database's foreign-key violation if an exam of the user appeared meanwhile.
 */
export async function deleteUser(db: Db, id: number): Promise<'deleted' | 'owns_exams' | 'missing'> {
  const owned = await db
    .selectFrom('exams')
    .select('id')
    .where('user_id', '=', id)
    .limit(1)
    .executeTakeFirst();
  if (owned !== undefined) return 'owns_exams';
  // The schema cascades these too; written out so the rule does not hang on a pragma.
  await db.deleteFrom('exam_comanagers').where('user_id', '=', id).execute();
  await db.deleteFrom('nonces').where('user_id', '=', id).execute();
  await db.deleteFrom('staff_sessions').where('user_id', '=', id).execute();
  await db.deleteFrom('one_time_links').where('user_id', '=', id).execute();
  await db.updateTable('student_sessions').set({ proctor_id: null }).where('proctor_id', '=', id).execute();
  const result = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n ? 'deleted' : 'missing';
}
