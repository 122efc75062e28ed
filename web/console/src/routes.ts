/**
 * Every console screen: its path under /console, its title (a catalogue message), whether it needs a signed-in user, and
 * which roles the navigation offers it to (a courtesy: the service refuses what a role may not do).
 * Screens are loaded when first shown, so the sign-in page does not carry the whole console.
 */
import type { Component } from 'svelte';
import { t } from '../../shared/i18n.svelte.ts';
import { administers, managesExams, readsExams, worksOnSessions } from './lib/roles';

export interface ScreenProps {
  /** The named parts of the path (":id" → params.id). */
  readonly params: Record<string, string>;
}

export interface Route {
  readonly pattern: string;
  /** The screen's name, in the reader's language (the document title). */
  readonly title: () => string;
  /** Reachable without signing in (sign-in, password reset, invitation). */
  readonly public?: boolean;
  /** Roles the screen is meant for; undefined: every signed-in user. */
  readonly for?: (role: string) => boolean;
  readonly load: () => Promise<{ default: Component<ScreenProps> }>;
}

export const ROUTES: readonly Route[] = [
  {
    pattern: '/sign-in',
    title: () => t('console.routes.signIn'),
    public: true,
    load: () => import('./screens/SignIn.svelte'),
  },
  {
    pattern: '/forgot-password',
    title: () => t('console.routes.resetPassword'),
    public: true,
    load: () => import('./screens/ForgotPassword.svelte'),
  },
  {
    pattern: '/reset-password',
    title: () => t('console.routes.choosePassword'),
    public: true,
    load: () => import('./screens/ResetPassword.svelte'),
  },
  {
    pattern: '/accept-invitation',
    title: () => t('console.routes.welcome'),
    public: true,
    load: () => import('./screens/AcceptInvitation.svelte'),
  },
  {
    pattern: '/account',
    title: () => t('console.routes.myAccount'),
    load: () => import('./screens/Account.svelte'),
  },
  // Every role: proctors and reviewers land here; an administrator may be assigned sessions too.
  {
    pattern: '/sessions',
    title: () => t('console.routes.mySessions'),
    load: () => import('./screens/MySessions.svelte'),
  },
  {
    pattern: '/exams',
    title: () => t('console.routes.exams'),
    for: readsExams,
    load: () => import('./screens/ExamList.svelte'),
  },
  // Before /exams/:id. Offered to readers too: an auditor who comes here gets the service's refusal.
  {
    pattern: '/exams/new',
    title: () => t('console.routes.newExam'),
    for: readsExams,
    load: () => import('./screens/ExamEditor.svelte'),
  },
  {
    pattern: '/exams/:id',
    title: () => t('console.routes.examSettings'),
    for: readsExams,
    load: () => import('./screens/ExamEditor.svelte'),
  },
  {
    pattern: '/exams/:id/instructions',
    title: () => t('console.routes.instructions'),
    for: readsExams,
    load: () => import('./screens/Instructions.svelte'),
  },
  // Students and the monitor load for every role: proctors, reviewers and auditors read them; the service refuses the rest.
  {
    pattern: '/exams/:id/students',
    title: () => t('console.routes.students'),
    load: () => import('./screens/StudentList.svelte'),
  },
  {
    pattern: '/exams/:id/students/new',
    title: () => t('console.routes.addStudent'),
    load: () => import('./screens/StudentForm.svelte'),
  },
  {
    pattern: '/exams/:id/students/import',
    title: () => t('console.routes.importStudents'),
    load: () => import('./screens/StudentImport.svelte'),
  },
  {
    pattern: '/exams/:id/students/emails',
    title: () => t('console.routes.examEmails'),
    load: () => import('./screens/StudentEmails.svelte'),
  },
  {
    pattern: '/exams/:id/students/:studentId/edit',
    title: () => t('console.routes.editStudent'),
    load: () => import('./screens/StudentForm.svelte'),
  },
  {
    pattern: '/exams/:id/monitor',
    title: () => t('console.routes.liveMonitor'),
    load: () => import('./screens/Monitor.svelte'),
  },
  // The proctor wall: proctors watch their assigned candidates; the live socket refuses the rest.
  {
    pattern: '/exams/:id/live',
    title: () => t('console.routes.liveProctoring'),
    load: () => import('./screens/LiveWall.svelte'),
  },
  // Review loads for every role like the monitor: reviewers work here; the service refuses the rest.
  {
    pattern: '/exams/:id/review',
    title: () => t('console.routes.reviewQueue'),
    load: () => import('./screens/ReviewQueue.svelte'),
  },
  {
    pattern: '/sessions/:id/review',
    title: () => t('console.routes.reviewSession'),
    load: () => import('./screens/SessionReview.svelte'),
  },
  // Administration, the outbox and the export load for every role: the service's refusal (403) is what others see.
  {
    pattern: '/admin',
    title: () => t('console.routes.instituteSettings'),
    load: () => import('./screens/AdminInstitute.svelte'),
  },
  {
    pattern: '/admin/users',
    title: () => t('console.routes.usersAndRoles'),
    load: () => import('./screens/AdminUsers.svelte'),
  },
  {
    pattern: '/admin/users/:id',
    title: () => t('console.routes.user'),
    load: () => import('./screens/AdminUser.svelte'),
  },
  {
    pattern: '/admin/tool-providers',
    title: () => t('console.routes.toolProviders'),
    load: () => import('./screens/AdminToolProviders.svelte'),
  },
  // Reached from a learning platform's deep-linking launch (docs/lti.md); the ticket is in the query.
  {
    pattern: '/lti/deep-link',
    title: () => t('console.routes.ltiDeepLink'),
    load: () => import('./screens/LtiDeepLink.svelte'),
  },
  {
    pattern: '/admin/lti-resources',
    title: () => t('console.routes.ltiResources'),
    load: () => import('./screens/AdminLtiResources.svelte'),
  },
  {
    pattern: '/admin/identity-providers',
    title: () => t('console.routes.identityProviders'),
    load: () => import('./screens/AdminIdentityProviders.svelte'),
  },
  {
    pattern: '/admin/audit',
    title: () => t('console.routes.auditLog'),
    load: () => import('./screens/AdminAudit.svelte'),
  },
  {
    pattern: '/admin/retention',
    title: () => t('console.routes.retention'),
    load: () => import('./screens/AdminRetention.svelte'),
  },
  {
    pattern: '/admin/data-protection',
    // The institute's record of processing for its data protection officer (docs/data-protection.md).
    title: () => t('console.routes.dataProtection'),
    load: () => import('./screens/AdminDataProtection.svelte'),
  },
  {
    pattern: '/admin/wording',
    // The institute's own wording of the candidate pages and emails (message overrides).
    title: () => t('console.routes.wording'),
    load: () => import('./screens/AdminMessages.svelte'),
  },
  {
    pattern: '/outbox',
    title: () => t('console.routes.outbox'),
    load: () => import('./screens/Outbox.svelte'),
  },
  {
    pattern: '/outbox/:id',
    title: () => t('console.routes.email'),
    load: () => import('./screens/OutboxMessage.svelte'),
  },
  {
    pattern: '/exams/:id/export',
    title: () => t('console.routes.export'),
    load: () => import('./screens/ExamExport.svelte'),
  },
];

/** The navigation's entries, in order, with who sees them. */
export const NAVIGATION: readonly { path: string; label: () => string; for: (role: string) => boolean }[] = [
  { path: '/exams', label: () => t('console.navigation.exams'), for: readsExams },
  { path: '/sessions', label: () => t('console.navigation.mySessions'), for: worksOnSessions },
  { path: '/outbox', label: () => t('console.navigation.outbox'), for: administers },
  { path: '/admin', label: () => t('console.navigation.administration'), for: administers },
  { path: '/account', label: () => t('console.navigation.myAccount'), for: () => true },
];

export { managesExams };
