import type { Db } from '../../db/database.ts';
import type { Actor } from '../access.ts';
import { accommodationsChanged, recordAccommodationsChange } from '../audit/accommodations-audit.ts';
import type { AuditClient } from '../audit/audit.service.ts';
import type { Clock } from '../clock.ts';
import { Taken } from '../errors.ts';
import type { Exam } from '../exams/exam.ts';
import { findManageableExam } from '../exams/exam-access.ts';
import { optionalBoolean, type Params } from '../input.ts';
import { withLtiResource } from '../lti-resources/session-link.ts';
import {
  type CheckedRow,
  type ExistingRowChoice,
  ignoredFieldList,
  ImportRejected,
  readExistingChoice,
  readImportRows,
  readRowAccommodations,
  type RowAction,
  type RowError,
  rowErrorOf,
  rowParams,
  sessionKey,
  unreadFields,
} from './student-import.ts';
import { hasNoAccommodations, NO_ACCOMMODATIONS } from './accommodations.ts';
import { attemptsByEmail, sessionsByKey, type StoredSession } from './student-import.repository.ts';
import {
  checkNewAttempt,
  checkOpenTime,
  generateFields,
  type NewStudentSession,
  newSessionDefaults,
  readAttempt,
  readSessionChanges,
  type StudentSession,
  type StudentSessionChanges,
} from './student-session.ts';
import {
  insertStudentSessions,
  uniqueViolationOn,
  updateStudentSession,
} from './student-sessions.repository.ts';

/**
 * What an import did: checked only (`dry_run`, every valid row with its action), or created the new
 * rows' sessions, updated the existing ones (`existing: update`) and counted the skipped ones.
 */
export type ImportOutcome =
  | {
      readonly dryRun: true;
      readonly existing: ExistingRowChoice;
      readonly rows: readonly CheckedRow[];
      readonly ignoredFields: readonly string[];
    }
  | {
      readonly dryRun: false;
      readonly existing: ExistingRowChoice;
      readonly sessions: readonly StudentSession[];
      readonly updated: readonly StudentSession[];
      readonly skipped: number;
      readonly ignoredFields: readonly string[];
    };

/** Bulk import of student sessions into one exam, all or nothing. */
export interface StudentImportService {
  /**
   * Checks every row of `students` (params; an array, or a string holding one) with the rules of
   * creating one session, plus duplicates within the file, then creates them all in one transaction,
   * or with `dry_run` only checks. A row whose email and attempt the exam already has is refused,
   * skipped or updates that session, as `existing` says (refuse, skip, update). Returns what was checked or created, in row order, with the row
   * fields no rule read. Throws NotFound (Exam) or Forbidden (the actor may not manage the exam),
   * ParamMissing or Invalid on `students` or `dry_run`, and ImportRejected naming every bad row
   * (nothing is created then). Rows may carry accommodations as columns (readRowAccommodations); a
   * session created with accommodations, or updated with changed ones, is audited in the import's
   * transaction (`student_session_accommodations_changed`, with `client` when over HTTP).
   */
  importStudents(
    actor: Actor,
    examId: string | number,
    params: Params,
    client?: AuditClient,
  ): Promise<ImportOutcome>;
}

/**
 * A row that passed the checks, with what it creates, or for an existing session (`sessionId`) the
 * changes an update writes (the row's fields but the email and attempt, which found the session).
 */
interface AcceptedRow {
  readonly row: number;
  readonly attributes: NewStudentSession;
  readonly action: RowAction;
  readonly sessionId?: number;
  readonly changes?: StudentSessionChanges;
  /** For an update: whether it changes the session's accommodations (then audited). */
  readonly accommodationsChange?: boolean;
}

/** How many times the transaction is tried when a unique index refuses it (see create). */
const CREATE_TRIES = 3;

/**
 * Rows per INSERT statement: 36 bound values each keeps a statement far below SQLite's limit
 * (32 766) and PostgreSQL's (65 535).
 */
const ROWS_PER_STATEMENT = 500;

/**
 * Builds the import use case over the database and the clock. Returns the service; building it
 * throws nothing.
 */
export function createStudentImportService(deps: { db: Db; clock: Clock }): StudentImportService {
  const { db, clock } = deps;

  /**
   * Reads and checks one row as `create` in student-sessions.service.ts reads a request, with the
   * same functions in the same order, up to the attempt rule (checkRows applies it after looking for
   * the same session earlier in the file). Returns what the row would create.
   */
  async function readRow(
    exam: Exam,
    params: Params,
  ): Promise<{ attributes: NewStudentSession; changes: StudentSessionChanges }> {
    const changes = await withLtiResource(db, exam, params, readSessionChanges(params, 'create'));
    const attempt = readAttempt(params);
    const attributes = { ...newSessionDefaults(), ...changes, attempt } as NewStudentSession;
    checkOpenTime(attributes.openTime, exam);
    return { attributes, changes };
  }

  async function checkRows(exam: Exam, rows: readonly unknown[], existing: ExistingRowChoice) {
    const attempts = await attemptsByEmail(db, exam.id);
    const stored =
      existing === 'refuse' ? new Map<string, StoredSession>() : await sessionsByKey(db, exam.id);
    const firstRowOf = new Map<string, number>();
    const accepted: AcceptedRow[] = [];
    const errors: RowError[] = [];
    const ignored = new Set<string>();
    for (const [index, raw] of rows.entries()) {
      const row = index + 1;
      try {
        const read = new Set<string>();
        const params = rowParams(raw, read);
        if (params === undefined) {
          errors.push({ row, field: null, message: 'must be an object' });
          continue;
        }
        const { attributes, changes } = await readRow(exam, params);
        const key = sessionKey(attributes.email, attributes.attempt);
        const earlier = firstRowOf.get(key);
        if (earlier !== undefined) {
          errors.push({ row, field: 'email', message: `has already been taken by row ${earlier}` });
          continue;
        }
        const storedSession = stored.get(key);
        if (storedSession !== undefined && existing !== 'refuse') {
          // The exam has this student already: skipped, or updated with the row's other fields;
          // its accommodations change only in what the row names.
          const { email: _sameEmail, ...update } = changes;
          const current = storedSession.accommodations;
          const accommodations = readRowAccommodations(params, current);
          if (accommodations === undefined) delete update.accommodations;
          else update.accommodations = accommodations;
          firstRowOf.set(key, row);
          accepted.push({
            row,
            attributes,
            action: existing,
            sessionId: storedSession.id,
            changes: update,
            accommodationsChange:
              accommodations !== undefined && accommodationsChanged(current, accommodations),
          });
          for (const name of unreadFields(raw, read)) ignored.add(name);
          continue;
        }
        // A new session's accommodations: the row's columns, or its `accommodations` object.
        const accommodations = readRowAccommodations(params, NO_ACCOMMODATIONS);
        if (accommodations !== undefined) attributes.accommodations = accommodations;
        // Against the exam's sessions and the rows before: a second attempt may follow the first.
        checkNewAttempt(attributes.attempt, attempts.get(attributes.email) ?? []);
        firstRowOf.set(key, row);
        attempts.set(attributes.email, [...(attempts.get(attributes.email) ?? []), attributes.attempt]);
        accepted.push({ row, attributes, action: 'create' });
        for (const name of unreadFields(raw, read)) ignored.add(name);
      } catch (error) {
        const problem = rowErrorOf(error);
        if (problem === undefined) throw error;
        errors.push({ row, ...problem });
      }
    }
    return { accepted, errors, ignored: ignoredFieldList(ignored) };
  }

  /**
   * Creates the new rows' sessions and updates the existing ones in `trx`, auditing each change of
   * accommodations as `audit` says (by whom, from where). Returns both, in row order.
   */
  async function writeAll(
    trx: Db,
    examId: number,
    accepted: readonly AcceptedRow[],
    audit: { actor: Actor; client: AuditClient | undefined },
  ) {
    const now = clock.now();
    const created = accepted.filter((row) => row.action === 'create');
    const sessions: StudentSession[] = [];
    for (let at = 0; at < created.length; at += ROWS_PER_STATEMENT) {
      const chunk = created
        .slice(at, at + ROWS_PER_STATEMENT)
        .map(({ attributes }) => ({ ...attributes, ...generateFields() }));
      sessions.push(...(await insertStudentSessions(trx, examId, chunk, now)));
    }
    for (const session of sessions) {
      if (hasNoAccommodations(session.accommodations)) continue;
      await recordAccommodationsChange(trx, { ...audit, sessionId: session.id, status: 201, now });
    }
    const updated: StudentSession[] = [];
    for (const row of accepted) {
      if (row.action !== 'update' || row.sessionId === undefined) continue;
      const saved = await updateStudentSession(trx, row.sessionId, row.changes ?? {}, now);
      if (saved === undefined) continue;
      updated.push(saved);
      if (row.accommodationsChange === true) {
        await recordAccommodationsChange(trx, { ...audit, sessionId: saved.id, status: 200, now });
      }
    }
    return { sessions, updated };
  }

  /**
   * Creates the accepted rows' sessions in one transaction. When a unique index refuses them, either
   * a session created meanwhile (another import, a single create) took a row's email and attempt, and
   * the rows are checked again so the answer names them, or a fresh room token existed, and new
   * tokens are drawn. Returns the sessions in row order.
   */
  async function create(
    exam: Exam,
    rows: readonly unknown[],
    checked: readonly AcceptedRow[],
    existing: ExistingRowChoice,
    audit: { actor: Actor; client: AuditClient | undefined },
  ) {
    let accepted = checked;
    for (let tries = 1; ; tries += 1) {
      try {
        return await db.transaction().execute((trx) => writeAll(trx, exam.id, accepted, audit));
      } catch (error) {
        const violated = uniqueViolationOn(error);
        if (violated === undefined) throw error;
        if (tries >= CREATE_TRIES) throw violated === 'attempt' ? new Taken('email') : error;
        if (violated === 'attempt') {
          const again = await checkRows(exam, rows, existing);
          if (again.errors.length > 0) throw new ImportRejected(again.errors, rows.length);
          accepted = again.accepted;
        }
      }
    }
  }

  return {
    async importStudents(actor, examId, params, client) {
      const exam = await findManageableExam(db, actor, examId);
      const rows = readImportRows(params);
      const dryRun = optionalBoolean(params, 'dry_run') ?? false;
      const existing = readExistingChoice(params);
      const { accepted, errors, ignored } = await checkRows(exam, rows, existing);
      if (errors.length > 0) throw new ImportRejected(errors, rows.length);
      if (dryRun) {
        return {
          dryRun,
          existing,
          ignoredFields: ignored,
          rows: accepted.map(({ row, attributes, action }) => ({
            row,
            name: attributes.name,
            email: attributes.email,
            attempt: attributes.attempt,
            action,
          })),
        };
      }
      const { sessions, updated } = await create(exam, rows, accepted, existing, { actor, client });
      const skipped = accepted.filter((row) => row.action === 'skip').length;
      return { dryRun, existing, ignoredFields: ignored, sessions, updated, skipped };
    },
  };
}
