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

// ---- Institutes, users and institute-wide configuration (step 3) ----

/**
 * How an actor stands towards something that belongs to an institute: `hidden` (answer 404 as if
 * it did not exist), `forbidden` (it may know the thing exists but not read it: 403), `read` (may
 * see it; a change is 403), `manage` (may also change it).
 */
export type Standing = 'hidden' | 'forbidden' | 'read' | 'manage';

/** Only a superuser lists, creates or destroys institutes. */
export function canAdministerInstitutes(actor: Actor): boolean {
  return isSuperuser(actor);
}

/**
 * An institute record: a superuser manages every one; an administrator manages its own; every
 * other member sees that its own institute exists but may not read its settings (403); any other
 * institute is hidden.
 */
export function instituteStanding(actor: Actor, instituteId: number): Standing {
  if (isSuperuser(actor)) return 'manage';
  if (actor.instituteId !== instituteId) return 'hidden';
  return baseRole(actor.role) === 'administrator' ? 'manage' : 'forbidden';
}

/**
 * An institute's record of processing (docs/data-protection.md): generated for its administrators
 * and superusers (`manage`); other members are refused (403); any other institute is hidden.
 */
export function processingRecordStanding(actor: Actor, instituteId: number): Standing {
  return instituteStanding(actor, instituteId);
}

/** The users of an institute: managed by its administrators and superusers, closed to other members. */
export function usersStanding(actor: Actor, instituteId: number): Standing {
  return instituteStanding(actor, instituteId);
}

/** Roles that may be given the role `role` by this actor: only a superuser makes superusers. */
export function canGrantRole(actor: Actor, role: Role): boolean {
  return role !== 'superuser' || isSuperuser(actor);
}

/**
 * Institute-wide configuration (tool providers, LTI resources): administrators manage it; teachers
 * and auditors read it; proctors and reviewers may not (403); other institutes are hidden.
 */
export function configStanding(actor: Actor, instituteId: number): Standing {
  if (isSuperuser(actor)) return 'manage';
  if (actor.instituteId !== instituteId) return 'hidden';
  const role = baseRole(actor.role);
  if (role === 'administrator') return 'manage';
  if (role === 'teacher' || role === 'auditor') return 'read';
  return 'forbidden';
}

/**
 * Whether the actor may change, deactivate or delete this user, once it may manage its institute's
 * users: a superuser's account is changed only by a superuser.
 */
export function canManageUser(actor: Actor, user: { role: Role }): boolean {
  return canGrantRole(actor, user.role);
}

/** Identity-provider configurations: every member reads its institute's and the global ones. */
export function canReadIdentityProvider(actor: Actor, instituteId: number | null): boolean {
  return isSuperuser(actor) || instituteId === null || instituteId === actor.instituteId;
}

// ---- Exam staff (step 3) ----

/** Who may be a co-manager: a teacher or administrator of the exam's institute. */
export function canCoManage(user: { instituteId: number; role: Role }, exam: ExamScope): boolean {
  const role = baseRole(user.role);
  return user.instituteId === exam.instituteId && (role === 'teacher' || role === 'administrator');
}

/** Who may be assigned to proctor a session: a proctor or administrator of the exam's institute. */
export function canProctor(user: { instituteId: number; role: Role }, exam: ExamScope): boolean {
  const role = baseRole(user.role);
  return user.instituteId === exam.instituteId && (role === 'proctor' || role === 'administrator');
}

/**
 * Who may end a student session: whoever manages the exam, and the proctor assigned to that session.
 */
export function canEndSession(actor: Actor, exam: ExamScope, session: { proctorId: number | null }): boolean {
  if (canManageExam(actor, exam)) return true;
  return (
    baseRole(actor.role) === 'proctor' &&
    session.proctorId === actor.id &&
    exam.instituteId === actor.instituteId
  );
}

// ---- Audit log (step 8) ----

/**
 * Which audit events the actor may read: every institute's (a superuser), its own institute's (an
 * administrator), or none (undefined: every other role is refused with 403).
 */
export function auditLogScope(
  actor: Actor,
): { readonly kind: 'all' } | { readonly kind: 'institute'; readonly instituteId: number } | undefined {
  if (isSuperuser(actor)) return { kind: 'all' };
  if (baseRole(actor.role) === 'administrator') return { kind: 'institute', instituteId: actor.instituteId };
  return undefined;
}

// ---- The outbox (step 8) ----

/**
 * Which outbox emails the actor may read and redeliver: the same rule as the audit log. Every
 * institute's and those of no institute (a superuser), its own institute's (an administrator), or
 * none (undefined: every other role is refused with 403).
 */
export function outboxScope(
  actor: Actor,
): { readonly kind: 'all' } | { readonly kind: 'institute'; readonly instituteId: number } | undefined {
  return auditLogScope(actor);
}

// ---- Live proctoring (step 10) ----

/**
 * Which of an exam's candidates the actor may watch live on the proctor wall: all of them (whoever
 * manages the exam), those assigned to it (a proctor of the exam's institute), or none (undefined).
 */
export function liveWatchScope(actor: Actor, exam: ExamScope): 'all' | 'assigned' | undefined {
  if (canManageExam(actor, exam)) return 'all';
  if (baseRole(actor.role) === 'proctor' && exam.instituteId === actor.instituteId) return 'assigned';
  return undefined;
}

// ---- Appeals (step 19) ----

/**
 * Who may decide a candidate's appeal against a verdict (docs/appeals.md): whoever may record a
 * verdict on the session (the exam's managers, administrators, superusers, the institute's
 * reviewers), except the reviewer who gave the appealed verdict (the appeals service refuses that
 * one with 422, naming why). Proctors, auditors and teachers of other exams read appeals but do
 * not decide them.
 */
export function canDecideAppeal(actor: Actor, exam: ExamScope): boolean {
  if (canManageExam(actor, exam)) return true;
  return exam.instituteId === actor.instituteId && baseRole(actor.role) === 'reviewer';
}
