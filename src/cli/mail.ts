import { parseArgs } from 'node:util';
import { createCore } from '../app.ts';
import type { Config } from '../config/config.ts';
import { NotFoundMessage } from '../domain/errors.ts';
import {
  findOutboxMessage,
  listOutboxMessages,
  type OutboxSummary,
} from '../domain/mail/outbox.repository.ts';
import {
  OUTBOX_STATUS_FILTER_NAMES,
  type OutboxMessage,
  type OutboxStatus,
  outboxStatusesOf,
} from '../domain/mail/outbox.ts';
import { print, UsageError } from './usage.ts';

/** How many messages `mail list` shows without `--limit`. */
const DEFAULT_LIMIT = 50;
/** The most `--limit` accepts: a listing is for reading, not for exporting the outbox. */
const MAX_LIMIT = 1000;

function iso(millis: number | null): string | null {
  return millis === null ? null : new Date(millis).toISOString();
}

/** A message's fields as the commands print them (snake case, ISO times), bodies aside. */
function presentSummary(message: OutboxSummary): Record<string, unknown> {
  return {
    id: message.id,
    kind: message.kind,
    to: message.to,
    subject: message.subject,
    status: message.status,
    attempts: message.attempts,
    last_error: message.lastError,
    student_session_id: message.studentSessionId,
    institute_id: message.instituteId,
    created_at: iso(message.createdAt),
    sent_at: iso(message.sentAt),
    next_attempt_at: iso(message.nextAttemptAt),
  };
}

/** The whole message: the summary plus its plain-text and HTML bodies. */
function presentMessage(message: OutboxMessage): Record<string, unknown> {
  return { ...presentSummary(message), text: message.text, html: message.html };
}

/** Reads `--status` and `--limit`. Returns the filter; throws UsageError for anything else. */
function listOptions(args: string[]): { statuses: readonly OutboxStatus[] | undefined; limit: number } {
  let values: { status?: string | undefined; limit?: string | undefined };
  try {
    values = parseArgs({
      args,
      options: { status: { type: 'string' }, limit: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  let statuses: readonly OutboxStatus[] | undefined;
  if (values.status !== undefined) {
    // The same filter as GET /api/v3/outbox?status= (OUTBOX_STATUS_FILTERS).
    statuses = outboxStatusesOf(values.status);
    if (statuses === undefined) {
      throw new UsageError(`--status must be one of ${OUTBOX_STATUS_FILTER_NAMES.join(', ')}`);
    }
  }
  let limit = DEFAULT_LIMIT;
  if (values.limit !== undefined) {
    if (!/^\d+$/.test(values.limit) || Number(values.limit) < 1 || Number(values.limit) > MAX_LIMIT) {
      throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}`);
    }
    limit = Number(values.limit);
  }
  return { statuses, limit };
}

/** Reads the one positional id of `mail show ID`. Throws UsageError unless it is a positive whole number. */
function messageId(args: string[]): number {
  const [id, ...extra] = args;
  if (id === undefined || extra.length > 0 || !/^\d+$/.test(id) || Number(id) < 1) {
    throw new UsageError('mail show needs one message id, a positive whole number');
  }
  return Number(id);
}

/**
 * Runs `mail list [--status held|failed|sent|queued|pending|sending] [--limit N]`, printing
 * `{"messages": [...]}` newest first without bodies, or `mail show ID`, printing `{"message": {...}}`
 * with both bodies. Resolves when printed; throws UsageError for bad arguments and NotFoundMessage
 * (exit 1) for an id that names no message.
 */
export async function runMailReadCommand(
  config: Config,
  action: 'list' | 'show',
  args: string[],
): Promise<void> {
  const request = action === 'list' ? { list: listOptions(args) } : { show: messageId(args) };
  const core = await createCore(config);
  try {
    const { db } = core.database;
    if (request.list !== undefined) {
      const messages = await listOutboxMessages(db, request.list);
      print({ messages: messages.map(presentSummary) });
      return;
    }
    const message = await findOutboxMessage(db, request.show);
    if (message === undefined) throw new NotFoundMessage(`Couldn't find the email with id ${request.show}`);
    print({ message: presentMessage(message) });
  } finally {
    await core.close();
  }
}
