import type { Db } from '../../db/database.ts';
import { findManageableSession, findVisibleSession } from './session-access.ts';
import { type Actor, canAddIncident, canManageExam, examListScope } from '../access.ts';
import { accommodationsChanged, recordAccommodationsChange } from '../audit/accommodations-audit.ts';
import type { AuditClient } from '../audit/audit.service.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, NotFound, Taken } from '../errors.ts';
import type { Exam } from '../exams/exam.ts';
import { findManageableExam, findVisibleExam } from '../exams/exam-access.ts';
import type { FilesService } from '../files/files.service.ts';
import { parseId } from '../ids.ts';
import type { Params } from '../input.ts';
import { type Page, parseListQuery } from '../listing.ts';
import { withLtiResource } from '../lti-resources/session-link.ts';
import { hasNoAccommodations } from './accommodations.ts';
import type { ClockExam } from './deadline.ts';
import { findExamClocks } from './exam-clocks.repository.ts';
import { insertIncident } from './incidents.repository.ts';
import {
  checkNewAttempt,
  checkOpenTime,
  generateFields,
  type NewStudentSession,
  newSessionDefaults,
  readAttempt,
  readIncident,
  readSessionChanges,
  readStudentSessionId,
  STUDENT_SESSION_LIST_FIELDS,
  type StudentSession,
  withEmailFiltersNormalized,
} from './student-session.ts';
import {
  archiveStudentSession,
  attemptsOf,
  deleteStudentSession,
  findStudentSession,
  insertStudentSession,
  isAttemptTaken,
  listAllStudentSessionsOfExam,
  listStudentSessions,
  type SessionListScope,
  uniqueViolationOn,
  updateStudentSession,
} from './student-sessions.repository.ts';

/**
 * Student-session use cases, shared by V3, its deprecated exam endpoints and V2. Ids are taken as
 * sent (a 404 names them so); parameters are the merged request parameters.
 */
export interface StudentSessionsService {
  /**
   * Adds a student to an exam the actor manages (`name`, `email` required; `attempt`,
   * `individual_info`, `is_individual_info_html`, `skip_requirements`, `open_time`, `priority`,
   * `external_id`, `use_duration`, and from an LMS `student_lms_id`, `resource_link_id`,
   * `context_id`, `lti_resource_id`, and `accommodations`). Returns the new session. Throws
   * NotFound (exam, Lti Resource), Forbidden, ParamMissing, Invalid, or Taken on `email` when the
   * (email, attempt) pair exists. A session created with accommodations is audited
   * (`student_session_accommodations_changed`, with `client` when the request came over HTTP).
   */
  create(
    actor: Actor,
    examId: string | number,
    params: Params,
    client?: AuditClient,
  ): Promise<StudentSession>;
  /** Returns a session the actor may see (archived ones too). Throws NotFound (Student Session). */
  get(actor: Actor, id: string | number): Promise<StudentSession>;
  /**
   * The session the `student_session_id` parameter names, which must belong to the exam. Returns it;
   * throws ParamMissing, NotFound (Exam, then Student Session).
   */
  getInExam(actor: Actor, examId: string | number, params: Params): Promise<StudentSession>;
  /** The session the `student_session_id` parameter names, in any exam. Throws ParamMissing or NotFound. */
  getByParam(actor: Actor, params: Params): Promise<StudentSession>;
  /**
   * Applies the sent changes (the create fields except `attempt`; `accommodations` keys over the
   * session's own, `null` clearing them). Returns the session as saved; throws NotFound (Student
   * Session, Lti Resource), Forbidden, ParamMissing, Invalid or Taken on `email`. A change of the
   * accommodations is audited in the same transaction (`student_session_accommodations_changed`).
   */
  update(actor: Actor, id: string | number, params: Params, client?: AuditClient): Promise<StudentSession>;
  /**
   * Archives a session that has an end time, otherwise deletes it with its incidents and files.
   * Throws NotFound or Forbidden.
   */
  destroy(actor: Actor, id: string | number): Promise<void>;
  /**
   * As destroy, for the session the `student_session_id` parameter names within the exam. Throws
   * ParamMissing, NotFound (Exam, then Student Session) or Forbidden.
   */
  destroyInExam(actor: Actor, examId: string | number, params: Params): Promise<void>;
  /** One page of every session the actor may see, filtered and sorted by `params`. Throws Invalid. */
  list(actor: Actor, params: Params): Promise<Page<StudentSession>>;
  /** One page of an exam's sessions. Throws NotFound (Exam) or Invalid. */
  listForExam(actor: Actor, examId: string | number, params: Params): Promise<Page<StudentSession>>;
  /** Every session of an exam that is not archived, by id (the legacy listing). Throws NotFound (Exam). */
  listAllForExam(actor: Actor, examId: string | number): Promise<StudentSession[]>;
  /**
   * Records an incident (`comment` required, `offset_time`) on a session. Returns the session with
   * it; throws NotFound, Forbidden (the actor sees the session but is no proctor, reviewer or
   * manager), ParamMissing or Invalid.
   */
  addIncident(actor: Actor, id: string | number, params: Params): Promise<StudentSession>;
  /**
   * The clock fields (deadline.ts) of the exams `examIds` names, in one query, for presenting
   * `deadline_at` and `time_allowed_seconds`. Missing exams are left out. No access check: the
   * caller has the sessions already.
   */
  examClocks(examIds: readonly number[]): Promise<ReadonlyMap<number, ClockExam>>;
}

/** How many times a create draws a new token after hitting an existing one (128 bits: never, in practice). */
const TOKEN_TRIES = 3;

/**
 * Builds the student-session use cases over the database, the clock and the file store (a destroyed
 * session's files are removed through it). Returns the service; building it throws nothing.
 */
export function createStudentSessionsService(deps: {
  db: Db;
  clock: Clock;
  files: FilesService;
}): StudentSessionsService {
  const { db, clock, files } = deps;

  /** The session and its exam when the actor may see them; NotFound otherwise, whatever the reason. */

  /** The session `params.student_session_id` names within the visible exam; NotFound otherwise. */
  async function inExam(actor: Actor, examId: string | number, params: Params) {
    const exam = await findVisibleExam(db, actor, examId);
    const id = readStudentSessionId(params);
    const numeric = parseId(id);
    const session = numeric === undefined ? undefined : await findStudentSession(db, numeric);
    if (session === undefined || session.examId !== exam.id) throw new NotFound('Student Session', id);
    return { session, exam };
  }

  /**
   * Inserts the session, drawing a new token on a clash; a session created with accommodations is
   * audited in the same transaction (`audit` says by whom, from where).
   */
  async function insert(
    exam: Exam,
    attributes: NewStudentSession,
    audit: { actor: Actor; client: AuditClient | undefined },
  ): Promise<StudentSession> {
    const audited = !hasNoAccommodations(attributes.accommodations);
    for (let attempt = 1; ; attempt += 1) {
      try {
        const now = clock.now();
        const fields = { ...attributes, ...generateFields() };
        if (!audited) return await insertStudentSession(db, exam.id, fields, now);
        return await db.transaction().execute(async (trx) => {
          const session = await insertStudentSession(trx, exam.id, fields, now);
          await recordAccommodationsChange(trx, { ...audit, sessionId: session.id, status: 201, now });
          return session;
        });
      } catch (error) {
        const violated = uniqueViolationOn(error);
        // A concurrent create of the same (email, attempt) got there first.
        if (violated === 'attempt') throw new Taken('email');
        if (violated !== 'token' || attempt >= TOKEN_TRIES) throw error;
      }
    }
  }

  async function remove(session: StudentSession): Promise<void> {
    if (session.endTime !== null) {
      await archiveStudentSession(db, session.id, clock.now());
      return;
    }
    const fileIds = await db.transaction().execute((trx) => deleteStudentSession(trx, session.id));
    // Records and stored objects go after the session that pointed at them (a foreign key).
    await files.remove(fileIds);
  }

  async function listIn(scope: SessionListScope, params: Params) {
    const list = withEmailFiltersNormalized(parseListQuery(params, STUDENT_SESSION_LIST_FIELDS));
    return listStudentSessions(db, scope, list);
  }

  return {
    async create(actor, examId, params, client) {
      const exam = await findManageableExam(db, actor, examId);
      const changes = await withLtiResource(db, exam, params, readSessionChanges(params, 'create'));
      const attempt = readAttempt(params);
      const attributes = { ...newSessionDefaults(), ...changes, attempt } as NewStudentSession;
      checkOpenTime(attributes.openTime, exam);
      checkNewAttempt(attempt, await attemptsOf(db, exam.id, attributes.email));
      return insert(exam, attributes, { actor, client });
    },

    async get(actor, id) {
      return (await findVisibleSession(db, actor, id)).session;
    },

    async getInExam(actor, examId, params) {
      return (await inExam(actor, examId, params)).session;
    },

    async getByParam(actor, params) {
      return (await findVisibleSession(db, actor, readStudentSessionId(params))).session;
    },

    async update(actor, id, params, client) {
      const { session, exam } = await findManageableSession(db, actor, id);
      const changes = await withLtiResource(
        db,
        exam,
        params,
        readSessionChanges(params, 'update', session.accommodations),
      );
      checkOpenTime(changes.openTime, exam);
      if (
        changes.email !== undefined &&
        changes.email !== session.email &&
        (await isAttemptTaken(db, exam.id, changes.email, session.attempt, session.id))
      ) {
        throw new Taken('email');
      }
      let saved: StudentSession | undefined;
      const audited =
        changes.accommodations !== undefined &&
        accommodationsChanged(session.accommodations, changes.accommodations);
      try {
        const now = clock.now();
        saved = audited
          ? await db.transaction().execute(async (trx) => {
              const written = await updateStudentSession(trx, session.id, changes, now);
              if (written !== undefined) {
                await recordAccommodationsChange(trx, {
                  actor,
                  client,
                  sessionId: session.id,
                  status: 200,
                  now,
                });
              }
              return written;
            })
          : await updateStudentSession(db, session.id, changes, now);
      } catch (error) {
        if (uniqueViolationOn(error) === 'attempt') throw new Taken('email');
        throw error;
      }
      if (saved === undefined) throw new NotFound('Student Session', id);
      return saved;
    },

    async destroy(actor, id) {
      await remove((await findManageableSession(db, actor, id)).session);
    },

    async destroyInExam(actor, examId, params) {
      const { session, exam } = await inExam(actor, examId, params);
      if (!canManageExam(actor, exam)) throw new Forbidden();
      await remove(session);
    },

    async list(actor, params) {
      return listIn({ kind: 'exams', exams: examListScope(actor) }, params);
    },

    async listForExam(actor, examId, params) {
      const exam = await findVisibleExam(db, actor, examId);
      return listIn({ kind: 'exam', examId: exam.id }, params);
    },

    async listAllForExam(actor, examId) {
      const exam = await findVisibleExam(db, actor, examId);
      return listAllStudentSessionsOfExam(db, exam.id);
    },

    async addIncident(actor, id, params) {
      const { session, exam } = await findVisibleSession(db, actor, id);
      if (!canAddIncident(actor, exam)) throw new Forbidden();
      await insertIncident(db, session.id, readIncident(params), clock.now());
      const saved = await findStudentSession(db, session.id);
      if (saved === undefined) throw new NotFound('Student Session', id);
      return saved;
    },

    async examClocks(examIds) {
      return findExamClocks(db, examIds);
    },
  };
}
