/** The staff roles as the administration pages name and explain them (contract §4). */
import { t } from '../../../shared/i18n.svelte.ts';

export const STAFF_ROLES = [
  'administrator',
  'teacher',
  'proctor',
  'reviewer',
  'auditor',
  'global_proctor',
  'global_reviewer',
  'superuser',
] as const;

export type StaffRole = (typeof STAFF_ROLES)[number];

const LABELS: Record<StaffRole, string> = {
  superuser: 'console.staffRoles.superuser',
  administrator: 'console.staffRoles.administrator',
  teacher: 'console.staffRoles.teacher',
  proctor: 'console.staffRoles.proctor',
  reviewer: 'console.staffRoles.reviewer',
  auditor: 'console.staffRoles.auditor',
  global_proctor: 'console.staffRoles.globalProctor',
  global_reviewer: 'console.staffRoles.globalReviewer',
};

const DESCRIPTIONS: Record<StaffRole, string> = {
  superuser: 'console.staffRoles.superuserDescription',
  administrator: 'console.staffRoles.administratorDescription',
  teacher: 'console.staffRoles.teacherDescription',
  proctor: 'console.staffRoles.proctorDescription',
  reviewer: 'console.staffRoles.reviewerDescription',
  auditor: 'console.staffRoles.auditorDescription',
  global_proctor: 'console.staffRoles.globalProctorDescription',
  global_reviewer: 'console.staffRoles.globalReviewerDescription',
};

/** "global proctor" for `global_proctor` (in the reader's language); an unknown role with spaces. */
export function roleLabel(role: string): string {
  const key = (LABELS as Record<string, string>)[role];
  return key === undefined ? role.replaceAll('_', ' ') : t(key);
}

/** One sentence saying what a role may do; an empty string for an unknown role. */
export function roleDescription(role: string): string {
  const key = (DESCRIPTIONS as Record<string, string>)[role];
  return key === undefined ? '' : t(key);
}

/** The roles `actorRole` may grant in the console (the service decides; only a superuser makes superusers). */
export function grantableRoles(actorRole: string): readonly StaffRole[] {
  return actorRole === 'superuser' ? STAFF_ROLES : STAFF_ROLES.filter((role) => role !== 'superuser');
}
