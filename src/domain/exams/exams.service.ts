import type { Db } from '../../db/database.ts';
import { type Actor, canCreateExam, examListScope } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, NotFound } from '../errors.ts';
import { findManageableExam, findVisibleExam } from './exam-access.ts';
import type { Params } from '../input.ts';
import { type Page, parseListQuery } from '../listing.ts';
import { canonicalLanguage } from '../languages.ts';
import {
  checkExam,
  EXAM_LIST_FIELDS,
  type Exam,
  type ExamAttributes,
  newExamDefaults,
  readExamChanges,
} from './exam.ts';
import { insertExam, instituteLanguage, listAllExams, listExams, updateExam } from './exams.repository.ts';

export interface ExamsService {
  /** Creates an exam owned by the actor. Throws Forbidden (role), ParamMissing or Invalid. */
  create(actor: Actor, params: Params): Promise<Exam>;
  /** Returns an exam the actor may see. Throws NotFound when it is missing, deleted or out of scope. */
  get(actor: Actor, id: string | number): Promise<Exam>;
  /** Applies the sent changes. Throws NotFound, Forbidden, ParamMissing or Invalid. */
  update(actor: Actor, id: string | number, params: Params): Promise<Exam>;
  /** Marks the exam deleted. Throws NotFound or Forbidden. */
  destroy(actor: Actor, id: string | number): Promise<void>;
  /** One page of the exams the actor may see, filtered and sorted by `params`. Throws Invalid. */
  list(actor: Actor, params: Params): Promise<Page<Exam>>;
  /** Every exam the actor owns or co-manages, not deleted (the legacy listing). */
  listOwned(actor: Actor): Promise<Exam[]>;
}

export function createExamsService(deps: { db: Db; clock: Clock }): ExamsService {
  const { db, clock } = deps;

  const visible = (actor: Actor, id: string | number) => findVisibleExam(db, actor, id);
  const manageable = (actor: Actor, id: string | number) => findManageableExam(db, actor, id);

  return {
    async create(actor, params) {
      if (!canCreateExam(actor)) throw new Forbidden();
      const changes = readExamChanges(params, 'create');
      // An exam speaks its institute's language unless the request names one; a language set
      // before the list of supported ones existed falls back to English.
      const language = canonicalLanguage((await instituteLanguage(db, actor.instituteId)) ?? 'en') ?? 'en';
      const attributes = { ...newExamDefaults(language), ...changes } as ExamAttributes;
      checkExam(attributes);
      return insertExam(db, { instituteId: actor.instituteId, userId: actor.id }, attributes, clock.now());
    },

    get: visible,

    async update(actor, id, params) {
      const exam = await manageable(actor, id);
      const changes = readExamChanges(params, 'update');
      checkExam({ ...exam, ...changes });
      const saved = await updateExam(db, exam.id, changes, clock.now());
      if (saved === undefined) throw new NotFound('Exam', id);
      return saved;
    },

    async destroy(actor, id) {
      const exam = await manageable(actor, id);
      await updateExam(db, exam.id, { status: 'deleted' }, clock.now());
    },

    async list(actor, params) {
      return listExams(db, examListScope(actor), parseListQuery(params, EXAM_LIST_FIELDS));
    },

    async listOwned(actor) {
      return listAllExams(db, { kind: 'own', instituteId: actor.instituteId, userId: actor.id });
    },
  };
}
