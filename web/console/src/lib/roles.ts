/**
 * What each role is offered in the console. A courtesy only: the service enforces every rule
 * (src/domain/access.ts), and a screen that shows a button the role may not use would get 403.
 */

/** The role without its `global_` prefix (a global proctor has a proctor's rights everywhere). */
export function baseRole(role: string): string {
  return role.startsWith('global_') ? role.slice('global_'.length) : role;
}

/** May create exams and manage their own (and, for administrators, every exam of the institute). */
export function managesExams(role: string): boolean {
  return ['superuser', 'administrator', 'teacher'].includes(baseRole(role));
}

/** Sees every exam of the institute without managing it. */
export function readsExams(role: string): boolean {
  return managesExams(role) || baseRole(role) === 'auditor';
}

/** Administers the institute: settings, users, connections, the audit log, the outbox. */
export function administers(role: string): boolean {
  return role === 'superuser' || role === 'administrator';
}

/** Works on assigned sessions (proctors, reviewers): lands on them. */
export function worksOnSessions(role: string): boolean {
  return ['proctor', 'reviewer'].includes(baseRole(role));
}

/** Where a role lands after signing in. */
export function homeFor(role: string): string {
  return worksOnSessions(role) ? '/sessions' : '/exams';
}

/** May record a verdict and dismiss automatic flags (reviewers and exam managers; not proctors or auditors). */
export function reviewsSessions(role: string): boolean {
  return ['superuser', 'administrator', 'teacher', 'reviewer'].includes(baseRole(role));
}
