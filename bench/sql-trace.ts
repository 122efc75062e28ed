/**
 * Preloaded into an `invigil serve` child (`NODE_OPTIONS=--import=<this file>`) when a benchmark
 * wants to see the SQL a request runs: every statement executed through node:sqlite or pg is appended
 * to the file named by BENCH_SQL_TRACE as one JSON line, `{"db", "sql", "params"}`.
 *
 * It wraps the drivers' own methods rather than anything in src/, so it sees exactly what reaches the
 * database, and the service runs unchanged. Writing a line per statement costs time: a traced server
 * is for counting and for EXPLAIN, never for timing.
 */
import fs from 'node:fs';
import { DatabaseSync, StatementSync } from 'node:sqlite';
import pg from 'pg';

/** One traced statement, as written to the trace file. */
export interface TracedStatement {
  readonly db: 'sqlite' | 'postgres';
  readonly sql: string;
  readonly params: readonly unknown[];
}

type Method = (this: unknown, ...args: unknown[]) => unknown;

/** Replaces `target[name]` with a wrapper that reports each call's arguments before running it. */
function wrap(target: object, name: string, report: (self: unknown, args: unknown[]) => void): void {
  const methods = target as Record<string, Method>;
  const original = methods[name];
  if (original === undefined) throw new Error(`sql-trace: no method ${name} to wrap`);
  methods[name] = function (this: unknown, ...args: unknown[]) {
    report(this, args);
    return original.apply(this, args);
  };
}

function install(file: string): void {
  const write = (db: TracedStatement['db'], sql: string, params: readonly unknown[]) => {
    const line = JSON.stringify({ db, sql, params }, (_key, value: unknown) =>
      typeof value === 'bigint' ? Number(value) : value,
    );
    fs.appendFileSync(file, `${line}\n`);
  };
  for (const name of ['all', 'get', 'run', 'iterate']) {
    wrap(StatementSync.prototype, name, (self, args) =>
      write('sqlite', self instanceof StatementSync ? self.sourceSQL : '?', args),
    );
  }
  wrap(DatabaseSync.prototype, 'exec', (_self, args) => write('sqlite', String(args[0]), []));
  wrap(pg.Client.prototype, 'query', (_self, args) => {
    const [config, values] = args;
    const text =
      typeof config === 'string'
        ? config
        : typeof config === 'object' && config !== null && 'text' in config
          ? String(config.text)
          : '?';
    write('postgres', text, Array.isArray(values) ? (values as unknown[]) : []);
  });
}

const traceFile = process.env.BENCH_SQL_TRACE;
if (traceFile !== undefined && traceFile !== '') install(traceFile);
