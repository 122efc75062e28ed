import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { type SqliteDatabase, SqliteDialect, type SqliteStatement } from 'kysely';

/** How many prepared statements are kept per connection; the API uses far fewer distinct queries. */
const STATEMENT_CACHE_SIZE = 500;

function toSqlite(value: unknown): SQLInputValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string') return value;
  if (value instanceof Uint8Array) return value;
  if (value instanceof Date) return value.getTime();
  throw new TypeError(`cannot bind a ${typeof value} to SQLite`);
}

function bind(parameters: ReadonlyArray<unknown>): SQLInputValue[] {
  return parameters.map(toSqlite);
}

/**
 * Presents node:sqlite's DatabaseSync with the better-sqlite3-like interface Kysely's SqliteDialect
 * expects, so the embedded default needs no native build. Statements are prepared once and cached.
 */
class NodeSqliteDatabase implements SqliteDatabase {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, { stmt: StatementSync; reader: boolean }>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  close(): void {
    this.#statements.clear();
    if (this.#db.isOpen) this.#db.close();
  }

  prepare(sql: string): SqliteStatement {
    let entry = this.#statements.get(sql);
    if (entry === undefined) {
      const stmt = this.#db.prepare(sql);
      entry = { stmt, reader: stmt.columns().length > 0 };
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.#statements.keys().next().value;
        if (oldest !== undefined) this.#statements.delete(oldest);
      }
      this.#statements.set(sql, entry);
    }
    const { stmt, reader } = entry;
    return {
      reader,
      all: (parameters) => stmt.all(...bind(parameters)),
      run: (parameters) => {
        const result = stmt.run(...bind(parameters));
        return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
      },
      iterate: (parameters) => stmt.iterate(...bind(parameters)),
    };
  }
}

/**
 * Opens (creating if needed) a SQLite file with WAL, a busy timeout and foreign keys on.
 * Returns the Kysely dialect over it.
 */
export function createSqliteDialect(file: string): SqliteDialect {
  return new SqliteDialect({
    database: () => {
      const db = new DatabaseSync(file, { timeout: 5000 });
      db.exec('PRAGMA journal_mode = WAL');
      db.exec('PRAGMA synchronous = NORMAL');
      db.exec('PRAGMA foreign_keys = ON');
      return Promise.resolve(new NodeSqliteDatabase(db));
    },
  });
}
