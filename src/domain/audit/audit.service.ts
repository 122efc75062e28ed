import type { Db } from '../../db/database.ts';
import { type Actor, auditLogScope } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Forbidden } from '../errors.ts';
import { has, type Params } from '../input.ts';
import { type ListQuery, type Page, parseListQuery } from '../listing.ts';
import {
  AUDIT_EVENT_LIST_FIELDS,
  type AuditEvent,
  EMAIL_MAX,
  type SignInAction,
  USER_AGENT_MAX,
} from './audit-event.ts';
import { findUserByEmail, insertAuditEvent, listAuditEvents } from './audit.repository.ts';

/** Where a request came from, as the transports see it. */
export interface AuditClient {
  readonly ip: string | null;
  readonly userAgent: string | null;
}

/** An authenticated API write that succeeded. */
export interface AuditedWrite {
  readonly actor: Actor;
  /** `METHOD /api/v3/route/:template`: the route, never the values in it. */
  readonly action: string;
  readonly targetType: string | null;
  readonly targetId: number | null;
  readonly status: number;
  readonly client: AuditClient;
}

/** A sign-in outcome, sign-out or password change. */
export interface AuditedSignIn {
  readonly action: SignInAction;
  /** The signed-in user; absent for a refused sign-in, which names an account by `email` alone. */
  readonly actor?: Actor | undefined;
  /** The email typed into a sign-in (kept for failures), never the password. */
  readonly email?: string | undefined;
  /** The record the sign-in went through: an OpenID Connect sign-in names its identity provider. */
  readonly target?: { readonly type: 'identity_providers'; readonly id: number } | undefined;
  readonly status: number;
  readonly client: AuditClient;
}

export interface AuditService {
  /** Records a successful staff write. Resolves when written; throws what the database throws. */
  recordWrite(write: AuditedWrite): Promise<void>;
  /**
   * Records a sign-in outcome. For a refusal, the account is looked up by the email typed so its
   * institute's administrators see the attempt (an unknown email stays in no institute). Resolves
   * when written; throws what the database throws.
   */
  recordSignIn(event: AuditedSignIn): Promise<void>;
  /**
   * One page of the events the actor may read (its institute's for an administrator, every one for a
   * superuser). Throws Forbidden for any other role and Invalid for a bad filter, sort, page or limit.
   */
  list(actor: Actor, params: Params): Promise<Page<AuditEvent>>;
}

function clip(text: string | null | undefined, max: number): string | null {
  if (text === null || text === undefined) return null;
  return text.length > max ? text.slice(0, max) : text;
}

/** Builds the audit service. Returns it; throws nothing. */
export function createAuditService(deps: { readonly db: Db; readonly clock: Clock }): AuditService {
  const { db, clock } = deps;
  return {
    async recordWrite(write) {
      await insertAuditEvent(db, {
        instituteId: write.actor.instituteId,
        userId: write.actor.id,
        action: write.action,
        email: null,
        targetType: write.targetType,
        targetId: write.targetId,
        status: write.status,
        ip: write.client.ip,
        userAgent: clip(write.client.userAgent, USER_AGENT_MAX),
        createdAt: clock.now(),
      });
    },

    async recordSignIn(event) {
      const email = clip(event.email?.trim(), EMAIL_MAX);
      let who: { id: number; instituteId: number } | undefined = event.actor;
      if (who === undefined && email !== null) who = await findUserByEmail(db, email);
      await insertAuditEvent(db, {
        instituteId: who?.instituteId ?? null,
        userId: who?.id ?? null,
        action: event.action,
        email,
        targetType: event.target?.type ?? null,
        targetId: event.target?.id ?? null,
        status: event.status,
        ip: event.client.ip,
        userAgent: clip(event.client.userAgent, USER_AGENT_MAX),
        createdAt: clock.now(),
      });
    },

    async list(actor, params) {
      const scope = auditLogScope(actor);
      if (scope === undefined) throw new Forbidden();
      const parsed = parseListQuery(params, AUDIT_EVENT_LIST_FIELDS);
      // A log is read from its end: without a sort, the newest event comes first.
      const sorted = parsed.sort.length === 1 && parsed.sort[0]?.column === 'id' && !has(params, 'sort');
      const query: ListQuery = sorted
        ? { ...parsed, sort: [{ column: 'id', direction: 'desc', notNull: true }] }
        : parsed;
      return listAuditEvents(db, scope.kind === 'all' ? undefined : scope.instituteId, query);
    },
  };
}
