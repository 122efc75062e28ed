import type { Selectable } from 'kysely';
import type { Db, DialectName } from '../../db/database.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import type { AuditEventsTable } from '../../db/tables.ts';
import type { ListQuery, Page } from '../listing.ts';
import type { AuditEvent, NewAuditEvent } from './audit-event.ts';

/** All SQL of the audit log. */

function eventFromRow(row: Selectable<AuditEventsTable>): AuditEvent {
  return {
    id: row.id,
    instituteId: row.institute_id,
    userId: row.user_id,
    action: row.action,
    email: row.email,
    targetType: row.target_type,
    // PostgreSQL's driver reads BIGINT as text.
    targetId: row.target_id === null ? null : Number(row.target_id),
    status: row.status,
    ip: row.ip,
    userAgent: row.user_agent,
    createdAt: Number(row.created_at),
  };
}

/** Inserts one event. Resolves when written; throws what the database throws. */
export async function insertAuditEvent(db: Db, event: NewAuditEvent): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      institute_id: event.instituteId,
      user_id: event.userId,
      action: event.action,
      email: event.email,
      target_type: event.targetType,
      target_id: event.targetId,
      status: event.status,
      ip: event.ip,
      user_agent: event.userAgent,
      created_at: event.createdAt,
    })
    .execute();
}

/** The institute and id of the user with this email (case-insensitive), or undefined. */
export async function findUserByEmail(
  db: Db,
  email: string,
): Promise<{ id: number; instituteId: number } | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'institute_id'])
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
  return row === undefined ? undefined : { id: row.id, instituteId: row.institute_id };
}

/**
 * One page of events: every institute's (`instituteId` undefined: a superuser) or one institute's.
 * Returns the page with the total count of matching events.
 */
export async function listAuditEvents(
  db: Db,
  instituteId: number | undefined,
  list: ListQuery,
): Promise<Page<AuditEvent>> {
  const scoped =
    instituteId === undefined
      ? db.selectFrom('audit_events')
      : db.selectFrom('audit_events').where('audit_events.institute_id', '=', instituteId);
  const base = applyConditions(scoped, list, 'audit_events');
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    applyOrderAndPage(base.selectAll('audit_events'), list, 'audit_events').execute(),
  ]);
  return { items: rows.map(eventFromRow), total: Number(countRow.count), page: list.page, limit: list.limit };
}

/**
 * Deletes up to `batch.limit` events created before `batch.before` (oldest first). Returns how many
 * went; throws what the database throws.
 */
export async function deleteAuditEventsBefore(
  db: Db,
  dialect: DialectName,
  batch: { readonly before: number; readonly limit: number },
): Promise<number> {
  const old = db
    .selectFrom('audit_events')
    .select('id')
    .where('created_at', '<', batch.before)
    .orderBy('id')
    .limit(batch.limit);
  // Two workers sweeping at once skip each other's rows instead of waiting on them.
  const candidates = dialect === 'postgres' ? old.forUpdate().skipLocked() : old;
  const result = await db.deleteFrom('audit_events').where('id', 'in', candidates).executeTakeFirst();
  return Number(result.numDeletedRows);
}
