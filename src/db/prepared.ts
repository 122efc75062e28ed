import { isDeepStrictEqual } from 'node:util';
import type { CompiledQuery, Compilable } from 'kysely';
import type { Db } from './database.ts';

/**
 * A query on a hot path, built and compiled once per database instead of on every call. `build`
 * writes the query with the given placeholder values; each call runs the compiled SQL with its own
 * values in the same order. The first compile checks that the query binds exactly the placeholders,
 * in that order, so a value can never land in another column's place.
 * Returns a function that runs the query and gives the rows; that function throws when the query
 * does not bind its placeholders as declared (a programming error).
 */
export function prepared<Row, P extends readonly unknown[]>(
  placeholders: P,
  build: (db: Db, ...values: P) => Compilable<Row>,
): (db: Db, values: P) => Promise<Row[]> {
  // Keyed by the dialect's adapter, so a transaction reuses what its database compiled.
  const compiledFor = new WeakMap<object, CompiledQuery<Row>>();
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
    const result = await db.executeQuery<Row>({ ...compiled, parameters: values });
    return result.rows;
  };
}
