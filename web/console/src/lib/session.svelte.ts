/**
 * The signed-in user and their institute: the only state the whole console shares. Loaded from
 * /auth/session at start and after sign-in; cleared on sign-out or when the session is found gone.
 */
import { api, setCsrfToken } from './api';
import { followUserLanguage } from './language';

export interface SignedInUser {
  readonly id: number;
  readonly instituteId: number;
  readonly email: string;
  readonly name: string;
  readonly role: string;
}

export interface ConsoleSession {
  readonly user: SignedInUser;
  readonly secondFactorEnabled: boolean;
  readonly enrolmentRequired: boolean;
  readonly expiresAt: string | undefined;
}

export const session = $state<{
  current: ConsoleSession | undefined;
  loaded: boolean;
  instituteName: string;
}>({
  current: undefined,
  loaded: false,
  instituteName: '',
});

interface SessionAnswer {
  readonly user?: {
    id?: number;
    institute_id?: number;
    email?: string;
    name?: string;
    role?: string;
    /** The console language the user picked (My account), or null to follow the browser. */
    language?: string | null;
  };
  readonly csrf_token?: string;
  readonly expires_at?: string;
  readonly second_factor_enabled?: boolean;
  readonly second_factor_enrolment_required?: boolean;
  /** Only GET /auth/session answers it: every member may know their institute's name. */
  readonly institute_name?: string;
}

/** Takes the answer of /auth/session or /auth/sign_in as the current session. */
export function adoptSession(answer: SessionAnswer): void {
  const user = answer.user;
  if (user?.id === undefined || user.institute_id === undefined) return;
  setCsrfToken(answer.csrf_token);
  session.current = {
    user: {
      id: user.id,
      instituteId: user.institute_id,
      email: user.email ?? '',
      name: user.name ?? '',
      role: user.role ?? '',
    },
    secondFactorEnabled: answer.second_factor_enabled === true,
    enrolmentRequired: answer.second_factor_enrolment_required === true,
    expiresAt: answer.expires_at,
  };
  session.loaded = true;
  void followUserLanguage(user.language);
  if (answer.institute_name !== undefined) session.instituteName = answer.institute_name;
  else void loadInstituteName();
}

/**
 * The institute's name for the header, from GET /auth/session (the institute record itself is for
 * administrators only, so a teacher or proctor could not read it there).
 */
async function loadInstituteName(): Promise<void> {
  const { data } = await api.GET('/auth/session');
  session.instituteName = data?.institute_name ?? '';
}

/** Asks the service who is signed in; leaves `current` undefined when nobody is. */
export async function loadSession(): Promise<void> {
  const { data } = await api.GET('/auth/session');
  if (data !== undefined) adoptSession(data);
  else forgetSession();
  session.loaded = true;
}

/** Drops the session on this side (the service has ended it, or is about to). */
export function forgetSession(): void {
  setCsrfToken(undefined);
  session.current = undefined;
  session.instituteName = '';
}

/** Signs out: ends the session on the service, then here. */
export async function signOut(everywhere = false): Promise<void> {
  if (everywhere) await api.POST('/auth/sign_out_everywhere');
  else await api.POST('/auth/sign_out');
  forgetSession();
}
