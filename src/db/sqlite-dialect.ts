import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import {
  type DialectAdapter,
  type SqliteDatabase,
  SqliteAdapter,
  SqliteDialect,
  type SqliteStatement,
} from 'kysely';
import type { Db } from './db.ts';
import { type Checkpointer, startCheckpointer } from './sqlite-checkpointer.ts';

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
class NodeSqliteDatabase implements SqliteDatabase, SqliteStatements {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, { stmt: StatementSync; reader: boolean }>();

  readonly #checkpointer: Checkpointer | undefined;

  constructor(db: DatabaseSync, checkpointer?: Checkpointer) {
    this.#db = db;
    this.#checkpointer = checkpointer;
  }

  #entry(sql: string): { stmt: StatementSync; reader: boolean } {
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
    return entry;
  }

  statement(sql: string): StatementSync {
    return this.#entry(sql).stmt;
  }

  exec(sql: string): void {
    this.#db.exec(sql);
  }

  inTransaction(): boolean {
    return this.#db.isTransaction;
  }

  query(sql: string, parameters: readonly unknown[]): unknown[] {
    const { stmt, reader } = this.#entry(sql);
    if (reader) return stmt.all(...bind(parameters));
    stmt.run(...bind(parameters));
    return [];
  }

  close(): void {
    this.#checkpointer?.stop();
    this.#statements.clear();
    if (this.#db.isOpen) this.#db.close();
  }

  prepare(sql: string): SqliteStatement {
    const entry = this.#entry(sql);
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
 * Direct access to a SQLite database's one connection, for hot paths that would otherwise spend more
 * in the query builder than in SQLite: statements prepared once and run synchronously. Statements
 * run here must not land inside another caller's transaction (Kysely's transactions wait between
 * their statements): either hold the connection (inside `db.connection().execute(...)`, which
 * waits for any running transaction), or run a single statement while `inTransaction()` is false
 * (synchronously, so nothing can begin one meanwhile).
 */
export interface SqliteStatements {
  /** The statement for `sql`, prepared once per connection (kept with the ones Kysely uses). */
  statement(sql: string): StatementSync;
  /** Runs statements that answer nothing (`begin`, `commit`, `rollback`). */
  exec(sql: string): void;
  /** True while a transaction is open on the connection (begun by anyone). */
  inTransaction(): boolean;
  /**
   * Runs one statement with `parameters` (bound as Kysely binds them). Returns its rows, or none for
   * a statement that answers none; throws what SQLite throws.
   */
  query(sql: string, parameters: readonly unknown[]): unknown[];
}

/** The connection behind each SQLite Kysely instance, found from its adapter (shared by its transactions). */
const connections = new WeakMap<DialectAdapter, { current: NodeSqliteDatabase | undefined }>();

/** True when `db` (or the database of the transaction `db`) is on SQLite. */
export function isSqlite(db: Db): boolean {
  return connections.has(db.getExecutor().adapter);
}

/**
 * The statements of `db`'s SQLite connection, or undefined when `db` is not on SQLite or has not
 * connected yet (it connects with its first query). See SqliteStatements for when they may be used.
 */
export function sqliteStatements(db: Db): SqliteStatements | undefined {
  return connections.get(db.getExecutor().adapter)?.current;
}

/**
 * Opens (creating if needed) a SQLite file with WAL, a busy timeout and foreign keys on.
 * Returns the Kysely dialect over it.
 */
export function createSqliteDialect(file: string): SqliteDialect {
  const connection: { current: NodeSqliteDatabase | undefined } = { current: undefined };
  const dialect = new SqliteDialect({
    database: () => {
      const db = new DatabaseSync(file, { timeout: 5000 });
      db.exec('PRAGMA journal_mode = WAL');
      db.exec('PRAGMA synchronous = NORMAL');
      db.exec('PRAGMA foreign_keys = ON');
      // Checkpoints run on a thread of their own (sqlite-checkpointer.ts), never inside a commit on
      // the event loop's thread. An in-memory database has no log to copy.
      const checkpointer = file === ':memory:' ? undefined : startCheckpointer(file);
      if (checkpointer !== undefined) db.exec('PRAGMA wal_autocheckpoint = 0');
      connection.current = new NodeSqliteDatabase(db, checkpointer);
      return Promise.resolve(connection.current);
    },
  });
  // Kysely asks its dialect for the adapter once per instance: that adapter names the connection.
  dialect.createAdapter = () => {
    const adapter = new SqliteAdapter();
    connections.set(adapter, connection);
    return adapter;
  };
  return dialect;
}
