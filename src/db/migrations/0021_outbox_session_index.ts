// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import { type Kysely } from 'kysely';

/**
 * `outbox_session`: the emails of one student session, newest last. The students screen asks for
 * each listed session's newest exam-link email and its delivery state (docs/mail.md), and the
 * exam's delivery list asks for every session of an exam; and deleting a session sets its emails'
 * `student_session_id` to null (the foreign key), which without this index reads the whole outbox
 * on PostgreSQL for every session deleted.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('outbox_session').on('outbox').columns(['student_session_id', 'id']).execute();
}
