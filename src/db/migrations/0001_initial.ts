// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import { type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely, sql } from 'kysely';

type Dialect = 'sqlite' | 'postgres';
type Table = CreateTableBuilder<any, any>;

function withId(table: Table, dialect: Dialect): Table {
  return table.addColumn('id', 'integer', (col: ColumnDefinitionBuilder) =>
    dialect === 'sqlite' ? col.primaryKey().autoIncrement() : col.primaryKey().generatedByDefaultAsIdentity(),
  );
}

function withTimes(table: Table): Table {
  return table
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull());
}

function flag(table: Table, name: string, initial: boolean): Table {
  return table.addColumn(name, 'boolean', (col) => col.notNull().defaultTo(initial));
}

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  let t: Table;

  t = withId(db.schema.createTable('institutes'), dialect)
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('short_name', 'text', (col) => col.notNull())
    .addColumn('callback_url', 'text');
  for (const name of [
    'check_requirements_emails_enabled',
    'reminder_emails_enabled',
    'exam_link_emails_enabled',
    'exam_changed_emails_enabled',
    'exam_finalized_emails_enabled',
  ]) {
    t = flag(t, name, true);
  }
  t = t
    .addColumn('session_retention_period', 'integer')
    .addColumn('default_language', 'text', (col) => col.notNull().defaultTo('en'));
  await withTimes(t).execute();
  await db.schema.createIndex('institutes_name_unique').on('institutes').column('name').unique().execute();

  await withTimes(
    withId(db.schema.createTable('identity_providers'), dialect)
      .addColumn('institute_id', 'integer', (col) => col.references('institutes.id').onDelete('cascade'))
      .addColumn('name', 'text', (col) => col.notNull())
      .addColumn('protocol', 'text', (col) => col.notNull())
      .addColumn('metadata', 'text', (col) => col.notNull()),
  ).execute();

  await withTimes(
    withId(db.schema.createTable('users'), dialect)
      .addColumn('institute_id', 'integer', (col) =>
        col.notNull().references('institutes.id').onDelete('cascade'),
      )
      .addColumn('email', 'text', (col) => col.notNull())
      .addColumn('name', 'text', (col) => col.notNull())
      .addColumn('role', 'text', (col) => col.notNull())
      .addColumn('identity_provider_id', 'integer', (col) =>
        col.references('identity_providers.id').onDelete('set null'),
      )
      .addColumn('api_token_hash', 'text', (col) => col.notNull())
      .addColumn('secret_key_encrypted', 'text', (col) => col.notNull())
      .addColumn('active', 'boolean', (col) => col.notNull().defaultTo(true)),
  ).execute();
  await db.schema.createIndex('users_email_unique').on('users').column('email').unique().execute();
  await db.schema.createIndex('users_token_unique').on('users').column('api_token_hash').unique().execute();
  await db.schema.createIndex('users_institute').on('users').column('institute_id').execute();

  t = withId(db.schema.createTable('exams'), dialect)
    .addColumn('institute_id', 'integer', (col) =>
      col.notNull().references('institutes.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'integer', (col) => col.notNull().references('users.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('duration_minutes', 'integer')
    .addColumn('use_duration', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('start_time', 'bigint')
    .addColumn('end_time', 'bigint');
  for (const name of [
    'mobile_cam',
    'web_cam',
    'screen_share',
    'for_reviewing',
    'upload_answers',
    'allow_websites',
    'allow_external_applications',
    'allow_textbooks',
    'allow_calculator',
    'allow_pen_paper',
    'allow_additional',
  ]) {
    t = flag(t, name, false);
  }
  t = t.addColumn('restrictions', 'text');
  for (const name of [
    'allowed_websites',
    'allowed_external_applications',
    'allowed_textbooks',
    'allowed_calculator_type',
    'allowed_additional',
  ]) {
    t = t.addColumn(name, 'text');
  }
  await withTimes(t).execute();
  await db.schema
    .createIndex('exams_institute_status')
    .on('exams')
    .columns(['institute_id', 'status'])
    .execute();
  await db.schema.createIndex('exams_user').on('exams').column('user_id').execute();

  await db.schema
    .createTable('exam_comanagers')
    .addColumn('exam_id', 'integer', (col) => col.notNull().references('exams.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('exam_comanagers_pk', ['exam_id', 'user_id'])
    .execute();
  await db.schema.createIndex('exam_comanagers_user').on('exam_comanagers').column('user_id').execute();

  await withId(db.schema.createTable('files'), dialect)
    .addColumn('storage_key', 'text', (col) => col.notNull())
    .addColumn('original_name', 'text', (col) => col.notNull())
    .addColumn('content_type', 'text', (col) => col.notNull())
    .addColumn('size', 'bigint', (col) => col.notNull())
    .addColumn('sha256', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('files_storage_key_unique')
    .on('files')
    .column('storage_key')
    .unique()
    .execute();

  await withTimes(
    withId(db.schema.createTable('documents'), dialect)
      .addColumn('exam_id', 'integer', (col) => col.notNull().references('exams.id').onDelete('cascade'))
      .addColumn('exam_content', 'text', (col) => col.notNull()),
  ).execute();
  await db.schema.createIndex('documents_exam_unique').on('documents').column('exam_id').unique().execute();

  await withTimes(
    withId(db.schema.createTable('attachments'), dialect)
      .addColumn('exam_id', 'integer', (col) => col.notNull().references('exams.id').onDelete('cascade'))
      .addColumn('document_id', 'integer', (col) =>
        col.notNull().references('documents.id').onDelete('cascade'),
      )
      .addColumn('file_id', 'integer', (col) => col.notNull().references('files.id'))
      .addColumn('placeholder', 'text', (col) => col.notNull())
      .addColumn('file_name', 'text', (col) => col.notNull())
      .addColumn('content_type', 'text', (col) => col.notNull())
      .addColumn('file_size', 'bigint', (col) => col.notNull()),
  ).execute();
  await db.schema.createIndex('attachments_document').on('attachments').column('document_id').execute();
  await db.schema.createIndex('attachments_exam').on('attachments').column('exam_id').execute();

  await withTimes(
    withId(db.schema.createTable('tool_providers'), dialect)
      .addColumn('institute_id', 'integer', (col) =>
        col.notNull().references('institutes.id').onDelete('cascade'),
      )
      .addColumn('name', 'text', (col) => col.notNull())
      .addColumn('lti_version', 'text', (col) => col.notNull())
      .addColumn('consumer_key', 'text')
      .addColumn('shared_secret_encrypted', 'text')
      .addColumn('issuer', 'text')
      .addColumn('client_id', 'text')
      .addColumn('deployment_id', 'text')
      .addColumn('auth_login_url', 'text')
      .addColumn('auth_token_url', 'text')
      .addColumn('jwks_url', 'text'),
  ).execute();
  await db.schema
    .createIndex('tool_providers_institute')
    .on('tool_providers')
    .column('institute_id')
    .execute();

  await withTimes(
    withId(db.schema.createTable('lti_resources'), dialect)
      .addColumn('institute_id', 'integer', (col) =>
        col.notNull().references('institutes.id').onDelete('cascade'),
      )
      .addColumn('tool_provider_id', 'integer', (col) =>
        col.notNull().references('tool_providers.id').onDelete('cascade'),
      )
      .addColumn('exam_id', 'integer', (col) => col.references('exams.id').onDelete('set null'))
      .addColumn('resource_link_id', 'text', (col) => col.notNull())
      .addColumn('context_id', 'text')
      .addColumn('title', 'text'),
  ).execute();
  await db.schema.createIndex('lti_resources_institute').on('lti_resources').column('institute_id').execute();
  await db.schema
    .createIndex('lti_resources_tool_provider')
    .on('lti_resources')
    .column('tool_provider_id')
    .execute();

  t = withId(db.schema.createTable('student_sessions'), dialect)
    .addColumn('exam_id', 'integer', (col) => col.notNull().references('exams.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('email', 'text', (col) => col.notNull())
    .addColumn('attempt', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('token', 'text', (col) => col.notNull())
    .addColumn('pin_code', 'integer', (col) => col.notNull())
    .addColumn('session_id', 'text')
    .addColumn('student_id', 'text')
    .addColumn('time_slot', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('operating_system', 'text')
    .addColumn('browser', 'text')
    .addColumn('browser_version', 'text');
  for (const name of [
    'screenshare_check',
    'microphone_check',
    'speakers_check',
    'webcam_check',
    'mobile_check',
    'bandwidth_check',
  ]) {
    t = t.addColumn(name, 'text', (col) => col.notNull().defaultTo('not_started'));
  }
  t = t.addColumn('bandwidth_speed', 'double precision').addColumn('dummy_exam_survey', 'text');
  t = flag(flag(t, 'skip_requirements', false), 'send_confirmation', false);
  t = flag(t, 'use_duration', true);
  for (const name of [
    'start_time',
    'end_time',
    'open_time',
    'reservation_time',
    'expires_at',
    'recording_started_at',
    'recording_ended_at',
  ]) {
    t = t.addColumn(name, 'bigint');
  }
  t = flag(t, 'entered_room', false)
    .addColumn('exam_document_file_id', 'integer', (col) => col.references('files.id'))
    .addColumn('exam_document_content_type', 'text')
    .addColumn('exam_document_file_size', 'bigint')
    .addColumn('exam_document_updated_at', 'bigint')
    .addColumn('reviewed', 'text', (col) => col.notNull().defaultTo('not_reviewed'));
  for (const prefix of ['id_card', 'face_photo']) {
    t = t
      .addColumn(`${prefix}_file_id`, 'integer', (col) => col.references('files.id'))
      .addColumn(`${prefix}_file_name`, 'text')
      .addColumn(`${prefix}_content_type`, 'text')
      .addColumn(`${prefix}_file_size`, 'bigint');
  }
  t = t.addColumn('individual_info', 'text');
  t = flag(t, 'is_individual_info_html', false)
    .addColumn('rtc_session_id', 'integer')
    .addColumn('rtc_session_ids', 'text', (col) => col.notNull().defaultTo('[]'));
  t = flag(flag(flag(t, 'in_setup', false), 'in_check_requirements', false), 'archived', false)
    .addColumn('current_exam_mode', 'text')
    .addColumn('transcoding_status', 'text', (col) => col.notNull().defaultTo('not_sent_to_queue'))
    .addColumn('priority', 'text');
  t = flag(t, 'is_email_sent', false)
    .addColumn('proctor_id', 'integer', (col) => col.references('users.id').onDelete('set null'))
    .addColumn('external_id', 'text')
    .addColumn('end_reason', 'text')
    .addColumn('lti_resource_id', 'integer', (col) => col.references('lti_resources.id').onDelete('set null'))
    .addColumn('lms_user_id', 'text')
    .addColumn('resource_link_id', 'text')
    .addColumn('context_id', 'text');
  await withTimes(t).execute();
  await db.schema
    .createIndex('student_sessions_token_unique')
    .on('student_sessions')
    .column('token')
    .unique()
    .execute();
  await db.schema
    .createIndex('student_sessions_attempt_unique')
    .on('student_sessions')
    .columns(['exam_id', 'email', 'attempt'])
    .unique()
    .execute();
  await db.schema
    .createIndex('student_sessions_exam_listing')
    .on('student_sessions')
    .columns(['exam_id', 'archived', 'status', 'created_at'])
    .execute();
  await db.schema
    .createIndex('student_sessions_exam_created')
    .on('student_sessions')
    .columns(['exam_id', 'archived', 'created_at'])
    .execute();
  await db.schema
    .createIndex('student_sessions_proctor')
    .on('student_sessions')
    .column('proctor_id')
    .execute();
  await db.schema
    .createIndex('student_sessions_lms')
    .on('student_sessions')
    .columns(['resource_link_id', 'lms_user_id'])
    .execute();

  await withTimes(
    withId(db.schema.createTable('incidents'), dialect)
      .addColumn('student_session_id', 'integer', (col) =>
        col.notNull().references('student_sessions.id').onDelete('cascade'),
      )
      .addColumn('comment', 'text', (col) => col.notNull())
      .addColumn('offset_time', 'integer')
      .addColumn('kind', 'text'),
  ).execute();
  await db.schema.createIndex('incidents_session').on('incidents').column('student_session_id').execute();

  await withId(db.schema.createTable('session_files'), dialect)
    .addColumn('student_session_id', 'integer', (col) =>
      col.notNull().references('student_sessions.id').onDelete('cascade'),
    )
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('file_id', 'integer', (col) => col.notNull().references('files.id'))
    .addColumn('sequence', 'integer', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('session_files_session_kind')
    .on('session_files')
    .columns(['student_session_id', 'kind', 'sequence'])
    .unique()
    .execute();

  await db.schema
    .createTable('nonces')
    .addColumn('user_id', 'integer', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('nonce', 'text', (col) => col.notNull())
    .addColumn('scope', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('nonces_pk', ['user_id', 'nonce', 'scope'])
    .execute();
  await db.schema.createIndex('nonces_expires').on('nonces').column('expires_at').execute();

  await withTimes(
    withId(db.schema.createTable('jobs'), dialect)
      .addColumn('kind', 'text', (col) => col.notNull())
      .addColumn('payload', 'text', (col) => col.notNull())
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('dedupe_key', 'text')
      .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
      .addColumn('max_attempts', 'integer', (col) => col.notNull())
      .addColumn('run_at', 'bigint', (col) => col.notNull())
      .addColumn('locked_by', 'text')
      .addColumn('locked_until', 'bigint')
      .addColumn('last_error', 'text')
      .addColumn('progress', 'text'),
  )
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('jobs_claim').on('jobs').columns(['status', 'run_at']).execute();
  await db.schema.createIndex('jobs_dedupe').on('jobs').columns(['dedupe_key', 'status']).execute();

  await withId(db.schema.createTable('outbox'), dialect)
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('to_address', 'text', (col) => col.notNull())
    .addColumn('subject', 'text', (col) => col.notNull())
    .addColumn('text_body', 'text', (col) => col.notNull())
    .addColumn('html_body', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (col) => col.notNull())
    .addColumn('last_error', 'text')
    .addColumn('student_session_id', 'integer', (col) =>
      col.references('student_sessions.id').onDelete('set null'),
    )
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('sent_at', 'bigint')
    .execute();
  await db.schema.createIndex('outbox_pending').on('outbox').columns(['status', 'next_attempt_at']).execute();

  await withTimes(
    withId(db.schema.createTable('exam_zip_exports'), dialect)
      .addColumn('exam_id', 'integer', (col) => col.notNull().references('exams.id').onDelete('cascade'))
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('job_id', 'integer', (col) => col.references('jobs.id').onDelete('set null'))
      .addColumn('file_id', 'integer', (col) => col.references('files.id'))
      .addColumn('error', 'text'),
  ).execute();
  await db.schema.createIndex('exam_zip_exports_exam').on('exam_zip_exports').column('exam_id').execute();

  // Keeps the compiler from flagging `sql` as unused if a later edit drops its last use.
  void sql;
}
