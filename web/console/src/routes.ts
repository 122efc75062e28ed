/**
 * Every console screen: its path under /console, its title, whether it needs a signed-in user, and
 * which roles the navigation offers it to (a courtesy: the service refuses what a role may not do).
 * Screens are loaded when first shown, so the sign-in page does not carry the whole console.
 */
import type { Component } from 'svelte';
import { administers, managesExams, readsExams, worksOnSessions } from './lib/roles';

export interface ScreenProps {
  /** The named parts of the path (":id" → params.id). */
  readonly params: Record<string, string>;
}

export interface Route {
  readonly pattern: string;
  readonly title: string;
  /** Reachable without signing in (sign-in, password reset, invitation). */
  readonly public?: boolean;
  /** Roles the screen is meant for; undefined: every signed-in user. */
  readonly for?: (role: string) => boolean;
  readonly load: () => Promise<{ default: Component<ScreenProps> }>;
}

export const ROUTES: readonly Route[] = [
  { pattern: '/sign-in', title: 'Sign in', public: true, load: () => import('./screens/SignIn.svelte') },
  {
    pattern: '/forgot-password',
    title: 'Reset your password',
    public: true,
    load: () => import('./screens/ForgotPassword.svelte'),
  },
  {
    pattern: '/reset-password',
    title: 'Choose a new password',
    public: true,
    load: () => import('./screens/ResetPassword.svelte'),
  },
  {
    pattern: '/accept-invitation',
    title: 'Welcome',
    public: true,
    load: () => import('./screens/AcceptInvitation.svelte'),
  },
  { pattern: '/account', title: 'My account', load: () => import('./screens/Account.svelte') },
  // Every role: proctors and reviewers land here; an administrator may be assigned sessions too.
  { pattern: '/sessions', title: 'My sessions', load: () => import('./screens/MySessions.svelte') },
  { pattern: '/exams', title: 'Exams', for: readsExams, load: () => import('./screens/ExamList.svelte') },
  // Before /exams/:id. Offered to readers too: an auditor who comes here gets the service's refusal.
  {
    pattern: '/exams/new',
    title: 'New exam',
    for: readsExams,
    load: () => import('./screens/ExamEditor.svelte'),
  },
  {
    pattern: '/exams/:id',
    title: 'Exam settings',
    for: readsExams,
    load: () => import('./screens/ExamEditor.svelte'),
  },
  {
    pattern: '/exams/:id/instructions',
    title: 'Instructions',
    for: readsExams,
    load: () => import('./screens/Instructions.svelte'),
  },
  // Students and the monitor load for every role: proctors, reviewers and auditors read them; the service refuses the rest.
  { pattern: '/exams/:id/students', title: 'Students', load: () => import('./screens/StudentList.svelte') },
  {
    pattern: '/exams/:id/students/new',
    title: 'Add a student',
    load: () => import('./screens/StudentForm.svelte'),
  },
  {
    pattern: '/exams/:id/students/import',
    title: 'Import students',
    load: () => import('./screens/StudentImport.svelte'),
  },
  {
    pattern: '/exams/:id/students/emails',
    title: 'Exam emails',
    load: () => import('./screens/StudentEmails.svelte'),
  },
  {
    pattern: '/exams/:id/students/:studentId/edit',
    title: 'Edit student',
    load: () => import('./screens/StudentForm.svelte'),
  },
  { pattern: '/exams/:id/monitor', title: 'Live monitor', load: () => import('./screens/Monitor.svelte') },
  // The proctor wall: proctors watch their assigned candidates; the live socket refuses the rest.
  {
    pattern: '/exams/:id/live',
    title: 'Live proctoring',
    load: () => import('./screens/LiveWall.svelte'),
  },
  // Review loads for every role like the monitor: reviewers work here; the service refuses the rest.
  { pattern: '/exams/:id/review', title: 'Review queue', load: () => import('./screens/ReviewQueue.svelte') },
  {
    pattern: '/sessions/:id/review',
    title: 'Review a session',
    load: () => import('./screens/SessionReview.svelte'),
  },
  // Administration, the outbox and the export load for every role: the service's refusal (403) is what others see.
  { pattern: '/admin', title: 'Institute settings', load: () => import('./screens/AdminInstitute.svelte') },
  { pattern: '/admin/users', title: 'Users and roles', load: () => import('./screens/AdminUsers.svelte') },
  { pattern: '/admin/users/:id', title: 'User', load: () => import('./screens/AdminUser.svelte') },
  {
    pattern: '/admin/tool-providers',
    title: 'Tool providers',
    load: () => import('./screens/AdminToolProviders.svelte'),
  },
  // Reached from a learning platform's deep-linking launch (docs/lti.md); the ticket is in the query.
  {
    pattern: '/lti/deep-link',
    title: 'Add an exam to your course',
    load: () => import('./screens/LtiDeepLink.svelte'),
  },
  {
    pattern: '/admin/lti-resources',
    title: 'LTI resources',
    load: () => import('./screens/AdminLtiResources.svelte'),
  },
  {
    pattern: '/admin/identity-providers',
    title: 'Identity providers',
    load: () => import('./screens/AdminIdentityProviders.svelte'),
  },
  { pattern: '/admin/audit', title: 'Audit log', load: () => import('./screens/AdminAudit.svelte') },
  { pattern: '/admin/retention', title: 'Retention', load: () => import('./screens/AdminRetention.svelte') },
  { pattern: '/outbox', title: 'Outbox', load: () => import('./screens/Outbox.svelte') },
  { pattern: '/outbox/:id', title: 'Email', load: () => import('./screens/OutboxMessage.svelte') },
  { pattern: '/exams/:id/export', title: 'Export', load: () => import('./screens/ExamExport.svelte') },
];

/** The navigation's entries, in order, with who sees them. */
export const NAVIGATION: readonly { path: string; label: string; for: (role: string) => boolean }[] = [
  { path: '/exams', label: 'Exams', for: readsExams },
  { path: '/sessions', label: 'My sessions', for: worksOnSessions },
  { path: '/outbox', label: 'Outbox', for: administers },
  { path: '/admin', label: 'Administration', for: administers },
  { path: '/account', label: 'My account', for: () => true },
];

export { managesExams };
