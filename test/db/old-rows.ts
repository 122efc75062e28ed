import type { Db } from '../../src/db/database.ts';

/**
 * Rows written into a database migrated only part of the way, for the migration tests: each sets
 * the columns every migration since 0001 has had, and the caller adds what its migration is about.
 * Exams and sessions are written `as never`: the tables' types are today's, while the database may
 * lack today's columns.
 */

/** An institute, "Old", with every email kind on. Returns its id. */
export function oldInstitute(db: Db): Promise<{ id: number }> {
  return db
    .insertInto('institutes')
    .values({
      name: 'Old',
      short_name: 'OLD',
      check_requirements_emails_enabled: true,
      reminder_emails_enabled: true,
      exam_link_emails_enabled: true,
      exam_changed_emails_enabled: true,
      exam_finalized_emails_enabled: true,
      default_language: 'en',
      created_at: 1,
      updated_at: 1,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/** An active user of `instituteId` with `email` and `role`, named by its email. Returns its id. */
export function oldUser(db: Db, instituteId: number, email: string, role: string): Promise<{ id: number }> {
  return db
    .insertInto('users')
    .values({
      institute_id: instituteId,
      email,
      name: email,
      role,
      api_token_hash: `h-${email}`,
      secret_key_encrypted: 's',
      active: true,
      created_at: 1,
      updated_at: 1,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/** An exam with `values` (institute, owner, name, type, status and any other columns). Returns its id. */
export function oldExam(db: Db, values: Record<string, unknown>): Promise<{ id: number }> {
  return db
    .insertInto('exams')
    .values({ created_at: 1, updated_at: 1, ...values } as never)
    .returning('id')
    .executeTakeFirstOrThrow();
}

/**
 * A session of `examId` with `values` (its status, token, and any other columns), named "Student",
 * PIN 123456, email student@example.org unless `values` says otherwise. Returns its id.
 */
export function oldSession(db: Db, examId: number, values: Record<string, unknown>): Promise<{ id: number }> {
  return db
    .insertInto('student_sessions')
    .values({
      exam_id: examId,
      name: 'Student',
      email: 'student@example.org',
      pin_code: 123456,
      created_at: 1,
      updated_at: 1,
      ...values,
    } as never)
    .returning('id')
    .executeTakeFirstOrThrow();
}

/**
 * An institute ("Old"), its teacher owner@example.org, and an open exam of theirs with `values`
 * (its name, type and any other columns). Returns the three ids.
 */
export async function oldOwnedExam(
  db: Db,
  values: Record<string, unknown>,
): Promise<{ institute: { id: number }; owner: { id: number }; exam: { id: number } }> {
  const institute = await oldInstitute(db);
  const owner = await oldUser(db, institute.id, 'owner@example.org', 'teacher');
  const exam = await oldExam(db, {
    institute_id: institute.id,
    user_id: owner.id,
    status: 'open',
    ...values,
  });
  return { institute, owner, exam };
}
