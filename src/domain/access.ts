/**
 * The one authorization policy. Every service asks it; no route decides access by itself.
 * A record outside the caller's scope is reported as missing by the service, never as forbidden.
 */

export const ROLES = [
  'superuser',
  'administrator',
  'teacher',
  'proctor',
  'reviewer',
  'auditor',
  'global_proctor',
  'global_reviewer',
] as const;
export type Role = (typeof ROLES)[number];

/** Who is asking: the authenticated user, reduced to what decisions need. */
export interface Actor {
  readonly id: number;
  readonly instituteId: number;
  readonly role: Role;
}

/** `global_proctor` and `global_reviewer` have the rights of the role without the prefix. */
export function baseRole(role: Role): Exclude<Role, 'global_proctor' | 'global_reviewer'> {
  if (role === 'global_proctor') return 'proctor';
  if (role === 'global_reviewer') return 'reviewer';
  return role;
}

export function isSuperuser(actor: Actor): boolean {
  return actor.role === 'superuser';
}

/** The facts about an exam that access depends on. */
export interface ExamScope {
  readonly instituteId: number;
  readonly userId: number;
  readonly comanagerIds: readonly number[];
}

function ownsOrComanages(actor: Actor, exam: ExamScope): boolean {
  return exam.userId === actor.id || exam.comanagerIds.includes(actor.id);
}

/** True when the actor may see the exam (and so learn that it exists). */
export function canReadExam(actor: Actor, exam: ExamScope): boolean {
  if (isSuperuser(actor)) return true;
  if (exam.instituteId !== actor.instituteId) return false;
  if (baseRole(actor.role) === 'teacher') return ownsOrComanages(actor, exam);
  return true;
}

/** True when the actor may change the exam and everything under it. */
export function canManageExam(actor: Actor, exam: ExamScope): boolean {
  if (isSuperuser(actor)) return true;
  if (exam.instituteId !== actor.instituteId) return false;
  const role = baseRole(actor.role);
  if (role === 'administrator') return true;
  return role === 'teacher' && ownsOrComanages(actor, exam);
}

/** True when the actor may create exams in its institute. */
export function canCreateExam(actor: Actor): boolean {
  const role = baseRole(actor.role);
  return role === 'superuser' || role === 'administrator' || role === 'teacher';
}

/**
 * Which exams a listing may return: every exam, one institute's, or one user's own and co-managed
 * exams within its institute.
 */
export type ExamListScope =
  | { readonly kind: 'all' }
  | { readonly kind: 'institute'; readonly instituteId: number }
  | { readonly kind: 'own'; readonly instituteId: number; readonly userId: number };

export function examListScope(actor: Actor): ExamListScope {
  if (isSuperuser(actor)) return { kind: 'all' };
  if (baseRole(actor.role) === 'teacher')
    return { kind: 'own', instituteId: actor.instituteId, userId: actor.id };
  return { kind: 'institute', instituteId: actor.instituteId };
}

/** True when the actor may record an incident on a session of the exam: proctors, reviewers, managers. */
export function canAddIncident(actor: Actor, exam: ExamScope): boolean {
  if (canManageExam(actor, exam)) return true;
  if (exam.instituteId !== actor.instituteId) return false;
  const role = baseRole(actor.role);
  return role === 'proctor' || role === 'reviewer';
}
