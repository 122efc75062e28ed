import { isDeepStrictEqual } from 'node:util';
import type { CompiledQuery, Compilable } from 'kysely';
import { type Db, postgresPool } from './database.ts';
import { sqliteStatements } from './sqlite-dialect.ts';

/** Statements named so far (each prepared query has its own name). */
let statementCount = 0;

/**
 * A query on a hot path, built and compiled once per database instead of on every call. `build`
 * writes the query with the given placeholder values; each call runs the compiled SQL with its own
 * values in the same order. The first compile checks that the query binds exactly the placeholders,
 * in that order, so a value can never land in another column's place. Outside a transaction the
 * statement runs without Kysely's round of connection, driver and result handling: on SQLite
 * directly on the connection (sqliteStatements), on PostgreSQL as a named statement of the pool,
 * which each connection parses and plans once; inside a transaction it runs through Kysely.
 * Returns a function that runs the query and gives the rows; that function throws when the query
 * does not bind its placeholders as declared (a programming error).
 */
export function prepared<Row, P extends readonly unknown[]>(
  placeholders: P,
  build: (db: Db, ...values: P) => Compilable<Row>,
): (db: Db, values: P) => Promise<Row[]> {
  // Keyed by the dialect's adapter, so a transaction reuses what its database compiled.
  const compiledFor = new WeakMap<object, CompiledQuery<Row>>();
  // The name of its PostgreSQL statement (one text per query, whatever the database).
  const statementName = `prepared_${(statementCount += 1)}`;
  return async (db, values) => {
    const dialectKey = db.getExecutor().adapter;
    let compiled = compiledFor.get(dialectKey);
    if (compiled === undefined) {
      compiled = build(db, ...placeholders).compile();
      if (!isDeepStrictEqual(compiled.parameters, [...placeholders])) {
        throw new Error(`prepared query binds ${JSON.stringify(compiled.parameters)}, not its placeholders`);
      }
      compiledFor.set(dialectKey, compiled);
    }
    // A statement run directly must not join a transaction another caller has open (see
    // SqliteStatements); `db` being one itself means the caller wants it inside that transaction.
    const direct = db.isTransaction ? undefined : sqliteStatements(db);
    if (direct !== undefined && !direct.inTransaction()) return direct.query(compiled.sql, values) as Row[];
    const pool = db.isTransaction ? undefined : postgresPool(db);
    if (pool !== undefined) {
      const result = await pool.query({ name: statementName, text: compiled.sql, values: [...values] });
      return result.rows as Row[];
    }
    const result = await db.executeQuery<Row>({ ...compiled, parameters: values });
    return result.rows;
  };
}
