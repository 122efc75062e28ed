import type { Kysely } from 'kysely';
import type { Tables } from './tables.ts';

/**
 * The Kysely handle over Invigil's tables, and the two databases it runs on. A leaf module: the
 * SQLite dialect needs these types, and database.ts (which builds the dialect) re-exports them.
 */
export type Db = Kysely<Tables>;
export type DialectName = 'sqlite' | 'postgres';
