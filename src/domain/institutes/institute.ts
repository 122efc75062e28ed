import { Invalid, ParamMissing } from '../errors.ts';
import { optionalBoolean, optionalInteger, optionalString, type Params } from '../input.ts';
import { readLanguage } from '../languages.ts';
import type { ListFields } from '../listing.ts';

export interface Institute {
  readonly id: number;
  readonly name: string;
  readonly shortName: string;
  readonly callbackUrl: string | null;
  readonly checkRequirementsEmailsEnabled: boolean;
  readonly reminderEmailsEnabled: boolean;
  readonly examLinkEmailsEnabled: boolean;
  readonly examChangedEmailsEnabled: boolean;
  readonly examFinalizedEmailsEnabled: boolean;
  readonly sessionRetentionPeriod: number | null;
  readonly defaultLanguage: string;
  /** Administrators must sign in with a second factor (docs/staff-sign-in.md, "Second factor"). */
  readonly requireSecondFactorForAdministrators: boolean;
  /** A `violation` verdict waits for a second, different reviewer (docs/review.md, "Second review"). */
  readonly secondReviewRequired: boolean;
  /** How candidates reach the institute about their data (shown in the room's privacy panel); null until set. */
  readonly privacyContact: string | null;
  /** The institute's data protection officer: name and address; null until set. */
  readonly dpoName: string | null;
  readonly dpoEmail: string | null;
  /** Days after a final `suspicious` or `violation` verdict in which the candidate may contest it. */
  readonly appealPeriodDays: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** The mail switches (contract §9): domain name → API and column name. All default to true. */
export const INSTITUTE_EMAIL_SWITCHES = {
  checkRequirementsEmailsEnabled: 'check_requirements_emails_enabled',
  reminderEmailsEnabled: 'reminder_emails_enabled',
  examLinkEmailsEnabled: 'exam_link_emails_enabled',
  examChangedEmailsEnabled: 'exam_changed_emails_enabled',
  examFinalizedEmailsEnabled: 'exam_finalized_emails_enabled',
} as const;
export type InstituteEmailSwitch = keyof typeof INSTITUTE_EMAIL_SWITCHES;

/** Everything a client can set on an institute. */
export type InstituteAttributes = {
  readonly name: string;
  readonly shortName: string;
  readonly callbackUrl: string | null;
  readonly sessionRetentionPeriod: number | null;
  readonly defaultLanguage: string;
  readonly requireSecondFactorForAdministrators: boolean;
  readonly secondReviewRequired: boolean;
  readonly privacyContact: string | null;
  readonly dpoName: string | null;
  readonly dpoEmail: string | null;
  readonly appealPeriodDays: number;
} & { readonly [K in InstituteEmailSwitch]: boolean };

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
export type InstituteChanges = Partial<Mutable<InstituteAttributes>>;

/** The create-time minimum (the CLI's `institute create` sends only these). */
export interface NewInstitute {
  readonly name: string;
  readonly shortName: string;
}

/** Filterable and sortable institute fields. */
export const INSTITUTE_LIST_FIELDS: ListFields = {
  id: { column: 'id', type: 'integer', notNull: true },
  name: { column: 'name', type: 'string', notNull: true },
  short_name: { column: 'short_name', type: 'string', notNull: true },
  callback_url: { column: 'callback_url', type: 'string' },
  session_retention_period: { column: 'session_retention_period', type: 'integer' },
  default_language: { column: 'default_language', type: 'string', notNull: true },
  created_at: { column: 'created_at', type: 'time', notNull: true },
  updated_at: { column: 'updated_at', type: 'time', notNull: true },
};

/** The longest appeal period an institute may set (days); 0 means no appeal after a final verdict. */
export const MAX_APPEAL_PERIOD_DAYS = 365;
/** The appeal period of a new institute (days), as the migration gives existing ones. */
export const DEFAULT_APPEAL_PERIOD_DAYS = 14;
/** The longest privacy contact, DPO name or DPO address accepted (characters). */
export const PRIVACY_TEXT_MAX = 500;

/** The largest retention period the integer column holds (days). */
const MAX_RETENTION_DAYS = 2_147_483_647;

/** A name that must not be blank when sent, and must be sent on create. Throws ParamMissing. */
function readName(params: Params, field: string, mode: 'create' | 'update'): string | undefined {
  const value = optionalString(params, field);
  if (value === undefined && mode === 'update') return undefined;
  if (value === undefined || value === null || value.trim() === '') throw new ParamMissing(field);
  return value;
}

function readCallbackUrl(params: Params): string | null | undefined {
  const value = optionalString(params, 'callback_url');
  if (value === undefined || value === null) return value;
  const text = value.trim();
  if (text === '') return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Invalid('callback_url', 'is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Invalid('callback_url', 'is not a valid URL');
  }
  return text;
}

/** An optional short text: blank clears it (null). Throws Invalid when it is too long. */
function readShortText(params: Params, field: string): string | null | undefined {
  const value = optionalString(params, field);
  if (value === undefined || value === null) return value;
  const text = value.trim();
  if (text === '') return null;
  if (text.length > PRIVACY_TEXT_MAX) {
    throw new Invalid(field, `is too long (maximum is ${PRIVACY_TEXT_MAX} characters)`);
  }
  return text;
}

/** The data protection officer's address: blank clears it. Throws Invalid unless it looks like one. */
function readDpoEmail(params: Params): string | null | undefined {
  const value = readShortText(params, 'dpo_email');
  if (value === undefined || value === null) return value;
  if (!/^[^\s@]+@[^\s@]+$/.test(value)) throw new Invalid('dpo_email', 'is invalid');
  return value;
}

/** What the room's privacy panel says about the institute (step 19), from a request. */
function readPrivacySettings(params: Params, changes: InstituteChanges): void {
  const contact = readShortText(params, 'privacy_contact');
  if (contact !== undefined) changes.privacyContact = contact;
  const dpoName = readShortText(params, 'dpo_name');
  if (dpoName !== undefined) changes.dpoName = dpoName;
  const dpoEmail = readDpoEmail(params);
  if (dpoEmail !== undefined) changes.dpoEmail = dpoEmail;
  const appeal = optionalInteger(params, 'appeal_period_days', 0, MAX_APPEAL_PERIOD_DAYS);
  if (appeal === null) throw new Invalid('appeal_period_days', 'is not a number');
  if (appeal !== undefined) changes.appealPeriodDays = appeal;
}

/**
 * Reads the institute settings a create or update request carries. Returns only what was sent;
 * throws ParamMissing (a blank or, on create, absent `name` or `short_name`) or Invalid naming the
 * first bad field.
 */
export function readInstituteChanges(params: Params, mode: 'create' | 'update'): InstituteChanges {
  const changes: InstituteChanges = {};
  const name = readName(params, 'name', mode);
  if (name !== undefined) changes.name = name;
  const shortName = readName(params, 'short_name', mode);
  if (shortName !== undefined) changes.shortName = shortName;
  const callbackUrl = readCallbackUrl(params);
  if (callbackUrl !== undefined) changes.callbackUrl = callbackUrl;
  for (const [key, field] of Object.entries(INSTITUTE_EMAIL_SWITCHES) as [InstituteEmailSwitch, string][]) {
    const value = optionalBoolean(params, field);
    if (value !== undefined) changes[key] = value;
  }
  const retention = optionalInteger(params, 'session_retention_period', 1, MAX_RETENTION_DAYS);
  if (retention !== undefined) changes.sessionRetentionPeriod = retention;
  const language = readLanguage(params, 'default_language');
  if (language !== undefined) changes.defaultLanguage = language;
  const requireSecondFactor = optionalBoolean(params, 'require_second_factor_for_administrators');
  if (requireSecondFactor !== undefined) changes.requireSecondFactorForAdministrators = requireSecondFactor;
  const secondReview = optionalBoolean(params, 'second_review_required');
  if (secondReview !== undefined) changes.secondReviewRequired = secondReview;
  readPrivacySettings(params, changes);
  return changes;
}

/** The defaults of a new institute, before the request's own values. */
export function newInstituteDefaults(): Omit<InstituteAttributes, 'name' | 'shortName'> {
  return {
    callbackUrl: null,
    checkRequirementsEmailsEnabled: true,
    reminderEmailsEnabled: true,
    examLinkEmailsEnabled: true,
    examChangedEmailsEnabled: true,
    examFinalizedEmailsEnabled: true,
    sessionRetentionPeriod: null,
    defaultLanguage: 'en',
    requireSecondFactorForAdministrators: false,
    secondReviewRequired: false,
    privacyContact: null,
    dpoName: null,
    dpoEmail: null,
    appealPeriodDays: DEFAULT_APPEAL_PERIOD_DAYS,
  };
}
