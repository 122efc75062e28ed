import type { Db } from '../../db/database.ts';
import { type Actor, canManageExam, canReadExam } from '../access.ts';
import { Forbidden, NotFound } from '../errors.ts';
import { parseId } from '../ids.ts';
import type { Exam } from './exam.ts';
import { findExam } from './exams.repository.ts';

/**
 * The exam `id` names, when the actor may see it. Returns it; throws NotFound when it is missing,
 * deleted or outside the actor's scope (the three answer alike).
 */
export async function findVisibleExam(db: Db, actor: Actor, id: string | number): Promise<Exam> {
  const numeric = parseId(id);
  const exam = numeric === undefined ? undefined : await findExam(db, numeric);
  if (exam === undefined || exam.status === 'deleted' || !canReadExam(actor, exam))
    throw new NotFound('Exam', id);
  return exam;
}

/**
 * The exam `id` names, when the actor may change it and what lies under it. Returns it; throws
 * NotFound as findVisibleExam does, or Forbidden when the actor sees it but may not change it.
 */
export async function findManageableExam(db: Db, actor: Actor, id: string | number): Promise<Exam> {
  const exam = await findVisibleExam(db, actor, id);
  if (!canManageExam(actor, exam)) throw new Forbidden();
  return exam;
}
