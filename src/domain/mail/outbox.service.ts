import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import { type Actor, outboxScope } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, NotFoundMessage, StateConflictMessage } from '../errors.ts';
import { parseId } from '../ids.ts';
import { has, optionalEnum, param, type Params } from '../input.ts';
import { type ListFields, type ListQuery, type Page, parseListQuery } from '../listing.ts';
import type { JobQueue } from '../ports/jobs.ts';
import { enqueueDelivery } from './outbox-writer.ts';
import {
  OUTBOX_STATUS_FILTER_NAMES,
  type OutboxMessage,
  type OutboxStatus,
  outboxStatusesOf,
} from './outbox.ts';
import {
  findOutboxMessage,
  listOutboxPage,
  type OutboxScope,
  type OutboxSummary,
  requeueOutboxMessage,
} from './outbox.repository.ts';

/** The statuses a message may be delivered again from: kept (no SMTP) or given up on. */
export const REDELIVERABLE: readonly OutboxStatus[] = ['held', 'failed'];

/** Filterable and sortable outbox fields (API name → column). */
export const OUTBOX_LIST_FIELDS: ListFields = {
  id: { column: 'id', type: 'integer', notNull: true },
  institute_id: { column: 'institute_id', type: 'integer' },
  kind: { column: 'kind', type: 'string', notNull: true },
  to: { column: 'to_address', type: 'string', notNull: true },
  subject: { column: 'subject', type: 'string', notNull: true },
  status: { column: 'status', type: 'string', notNull: true },
  attempts: { column: 'attempts', type: 'integer', notNull: true },
  student_session_id: { column: 'student_session_id', type: 'integer' },
  created_at: { column: 'created_at', type: 'time', notNull: true },
  sent_at: { column: 'sent_at', type: 'time' },
};

/** Kinds whose body holds a one-time link that sets the recipient's password. */
const ACCOUNT_LINK_KINDS: readonly string[] = ['staff_invitation', 'password_reset'];

/** What stands in a shown body for a one-time link's token. */
export const HIDDEN_TOKEN = '[hidden]';

/**
 * The body of an email as staff may read it: the token of an invitation or password-reset link is
 * replaced by HIDDEN_TOKEN. Such a link sets the recipient's password, so a reader of the outbox (an
 * administrator, who may not manage a superuser of its institute) must not be able to use it; the
 * recipient's copy is untouched. Returns the text.
 */
export function shownText(message: Pick<OutboxMessage, 'kind' | 'text'>): string {
  if (!ACCOUNT_LINK_KINDS.includes(message.kind)) return message.text;
  return message.text.replace(/([?&]token=)[^\s&#"'<>]+/g, `$1${HIDDEN_TOKEN}`);
}

/** Staff's view of the outbox (docs/mail.md, "The outbox API"). */
export interface OutboxService {
  /**
   * One page of the emails the actor may read, newest first unless `sort` says otherwise; `status`
   * (held, failed, sent, queued, pending, sending) narrows it, as do `filter`, `page` and `limit`.
   * Returns the page without bodies; throws Forbidden (a role other than administrator or superuser)
   * or Invalid (a bad status, filter, sort, page or limit).
   */
  list(actor: Actor, params: Params): Promise<Page<OutboxSummary>>;
  /**
   * The email `id` names, with its text body (one-time link tokens hidden, see shownText). Throws
   * Forbidden, or NotFoundMessage for an id that names none or one outside the actor's institute.
   */
  get(actor: Actor, id: string | number): Promise<OutboxMessage>;
  /**
   * Queues a held or failed email for delivery again: back to `pending`, error cleared, a new
   * `mail.deliver` job, in one transaction. Returns the email as it now is (tokens hidden); throws
   * Forbidden, NotFoundMessage, or StateConflictMessage (409) for an email in another status.
   */
  redeliver(actor: Actor, id: string | number): Promise<OutboxMessage>;
}

function notFound(id: string | number): NotFoundMessage {
  return new NotFoundMessage(`Couldn't find Email with 'id'=${id}`);
}

/** Builds the outbox service. Returns it; throws nothing. */
export function createOutboxService(deps: {
  db: Db;
  clock: Clock;
  jobs: JobQueue;
  logger: Logger;
}): OutboxService {
  const { db, clock, jobs } = deps;
  const log = deps.logger.child({ component: 'mail' });

  function scopeOf(actor: Actor): OutboxScope {
    const scope = outboxScope(actor);
    if (scope === undefined) throw new Forbidden();
    return scope;
  }

  /** The message, when the actor's scope holds it; NotFoundMessage otherwise (the two answer alike). */
  async function visible(actor: Actor, id: string | number): Promise<OutboxMessage> {
    const scope = scopeOf(actor);
    const numeric = parseId(id);
    const message = numeric === undefined ? undefined : await findOutboxMessage(db, numeric);
    if (message === undefined) throw notFound(id);
    if (scope.kind === 'institute' && message.instituteId !== scope.instituteId) throw notFound(id);
    return message;
  }

  const shown = (message: OutboxMessage): OutboxMessage => ({ ...message, text: shownText(message) });

  return {
    async list(actor, params) {
      const scope = scopeOf(actor);
      const sent = param(params, 'status');
      const statusName =
        sent === undefined || sent === null || sent === ''
          ? undefined
          : optionalEnum(params, 'status', OUTBOX_STATUS_FILTER_NAMES);
      const parsed = parseListQuery(params, OUTBOX_LIST_FIELDS);
      // Like a log, the outbox is read from its end: without a sort, the newest email comes first.
      const unsorted = parsed.sort.length === 1 && parsed.sort[0]?.column === 'id' && !has(params, 'sort');
      const query: ListQuery = unsorted
        ? { ...parsed, sort: [{ column: 'id', direction: 'desc', notNull: true }] }
        : parsed;
      const statuses = statusName === undefined ? undefined : outboxStatusesOf(statusName);
      return listOutboxPage(db, { scope, ...(statuses === undefined ? {} : { statuses }) }, query);
    },

    async get(actor, id) {
      return shown(await visible(actor, id));
    },

    async redeliver(actor, id) {
      const message = await visible(actor, id);
      const conflict = (status: string) =>
        new StateConflictMessage(
          `Only a held or failed email can be delivered again; email ${message.id} is ${status}`,
        );
      if (!REDELIVERABLE.includes(message.status)) throw conflict(message.status);
      const requeued = await db.transaction().execute(async (trx) => {
        const row = await requeueOutboxMessage(trx, message.id, REDELIVERABLE, clock.now());
        if (row !== undefined) await enqueueDelivery(jobs, trx, row.id);
        return row;
      });
      // Another call (or the CLI's redeliver) took it between the read and the update.
      if (requeued === undefined) {
        throw conflict((await findOutboxMessage(db, message.id))?.status ?? 'gone');
      }
      log.info({ outboxId: message.id, userId: actor.id }, 'email queued for delivery again');
      return shown(requeued);
    },
  };
}
