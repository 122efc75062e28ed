import { type Expression, type SelectQueryBuilder, type SqlBool, sql } from 'kysely';
import type { Condition, FilterValue, ListQuery } from './listing.ts';

const COMPARATORS = { eq: '=', not_eq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/**
 * A filter operand as an SQL parameter. Numbers are cast to bigint so that PostgreSQL compares an
 * integer column in 64 bits instead of failing on an operand beyond its 32-bit range (`id lt 1e10`).
 */
function operandSql(value: FilterValue) {
  return typeof value === 'number' ? sql`cast(${value} as bigint)` : sql`${value}`;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/** The SQL for one filter condition; column names come from a resource's fixed field table, never a client. */
export function conditionSql(condition: Condition, table: string): Expression<SqlBool> {
  const column = sql.ref(`${table}.${condition.column}`);
  switch (condition.op) {
    case 'in':
    case 'not_in': {
      if (condition.values.length === 0)
        return condition.op === 'in' ? sql<SqlBool>`1 = 0` : sql<SqlBool>`1 = 1`;
      const list = sql.join(condition.values.map(operandSql));
      return condition.op === 'in'
        ? sql<SqlBool>`${column} in (${list})`
        : sql<SqlBool>`${column} not in (${list})`;
    }
    case 'like':
      return sql<SqlBool>`lower(${column}) like ${`%${escapeLike(condition.value.toLowerCase())}%`} escape '\\'`;
    case 'null':
      return condition.isNull ? sql<SqlBool>`${column} is null` : sql<SqlBool>`${column} is not null`;
    default:
      return sql<SqlBool>`${column} ${sql.raw(COMPARATORS[condition.op])} ${operandSql(condition.value)}`;
  }
}

/** Adds the query's filter conditions to a select. */
export function applyConditions<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  list: ListQuery,
  table: string,
): SelectQueryBuilder<DB, TB, O> {
  let result = query;
  for (const condition of list.conditions) result = result.where(conditionSql(condition, table));
  return result;
}

/**
 * Adds ordering and the page window to a select. A null sorts after every value (PostgreSQL's own
 * rule, spelled out so SQLite, which puts nulls first, answers the same); desc is the exact reverse.
 * A column that cannot hold null gets the plain direction, which lets an index serve the order.
 */
export function applyOrderAndPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  list: ListQuery,
  table: string,
): SelectQueryBuilder<DB, TB, O> {
  let result = query;
  for (const key of list.sort) {
    const column = sql.ref(`${table}.${key.column}`);
    result = key.notNull
      ? result.orderBy(column, key.direction)
      : result.orderBy(column, (order) =>
          key.direction === 'asc' ? order.asc().nullsLast() : order.desc().nullsFirst(),
        );
  }
  return result.limit(list.limit).offset((list.page - 1) * list.limit);
}
