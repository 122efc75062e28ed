/** The staff roles as the administration pages name and explain them (contract §4). */

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

const DESCRIPTIONS: Record<StaffRole, string> = {
  superuser: 'Everything in every institute, including creating institutes. Only a superuser grants it.',
  administrator: 'Everything in this institute: settings, users, connections, the audit log and every exam.',
  teacher: 'Creates exams and manages the ones they own or co-manage, with their students and exports.',
  proctor: 'Watches and reviews the sessions of the institute’s exams; may end a session assigned to them.',
  reviewer: 'Reviews the recorded sessions of the institute’s exams; changes nothing.',
  auditor: 'Reads everything in the institute; changes nothing.',
  global_proctor: 'The same rights as a proctor (kept for integrations that use this name).',
  global_reviewer: 'The same rights as a reviewer (kept for integrations that use this name).',
};

/** "global proctor" for `global_proctor`. */
export function roleLabel(role: string): string {
  return role.replaceAll('_', ' ');
}

/** One sentence saying what a role may do; an empty string for an unknown role. */
export function roleDescription(role: string): string {
  return (DESCRIPTIONS as Record<string, string>)[role] ?? '';
}

/** The roles `actorRole` may grant in the console (the service decides; only a superuser makes superusers). */
export function grantableRoles(actorRole: string): readonly StaffRole[] {
  return actorRole === 'superuser' ? STAFF_ROLES : STAFF_ROLES.filter((role) => role !== 'superuser');
}
