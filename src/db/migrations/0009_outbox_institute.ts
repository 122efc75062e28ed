// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import { type Kysely, sql } from 'kysely';

/**
 * The institute each outbox email belongs to, so administrators can read and redeliver their own
 * institute's mail through the API (docs/mail.md, "The outbox API"). Until now an email reached its
 * institute only through its student session, and staff emails (invitations, password resets) not
 * at all; a session's deletion also cut that link. Existing rows are filled in: a student's email
 * from its session's exam, a staff email from the user its address names (emails are unique
 * regardless of case). A row neither reaches keeps null, which only superusers see. The institute's
 * deletion takes its mail with it, as it already did for its students' mail.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('outbox')
    .addColumn('institute_id', 'integer', (col) => col.references('institutes.id').onDelete('cascade'))
    .execute();
  await sql`update outbox set institute_id = (
    select exams.institute_id from student_sessions
    join exams on exams.id = student_sessions.exam_id
    where student_sessions.id = outbox.student_session_id
  ) where student_session_id is not null`.execute(db);
  await sql`update outbox set institute_id = (
    select users.institute_id from users where lower(users.email) = lower(outbox.to_address)
  ) where institute_id is null and kind in ('staff_invitation', 'password_reset')`.execute(db);
  // An administrator's listing (its institute, newest first), and the cascade on PostgreSQL.
  await db.schema.createIndex('outbox_institute').on('outbox').columns(['institute_id', 'id']).execute();
}
