import crypto from 'node:crypto';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../clock.ts';
import { hashToken } from '../../security/keys.ts';

/**
 * Single-use tickets (`lti_tickets`) that carry a verified launch across a step the browser makes:
 * continuing in a top-level window (`continue`), the platform-storage check (`binding`), a
 * deep-linking choice (`deep_link`). Only the ticket's hash is stored; the ticket itself travels in
 * an address or a form.
 */

/** What a ticket is for; a ticket is consumed only for its own purpose. */
export type TicketPurpose = 'continue' | 'binding' | 'deep_link';

/** How long a ticket lasts unless the creator says otherwise, in ms. */
export const TICKET_MS = 10 * 60_000;
/** Tickets are 43 base64url characters; anything longer is not one. */
const TICKET_MAX = 100;

/**
 * Stores a ticket carrying `payload` (JSON-serialisable) for `purpose`, lasting `ttlMs`. Returns the
 * ticket (random, 256 bits); throws what the database throws.
 */
export async function createTicket(
  deps: { db: Db; clock: Clock },
  purpose: TicketPurpose,
  payload: unknown,
  ttlMs: number = TICKET_MS,
): Promise<string> {
  const { db, clock } = deps;
  const ticket = crypto.randomBytes(32).toString('base64url');
  const now = clock.now();
  // Expired tickets go here, so the table holds about the last few minutes of them.
  await db.deleteFrom('lti_tickets').where('expires_at', '<', now).execute();
  await db
    .insertInto('lti_tickets')
    .values({
      ticket_hash: hashToken(ticket),
      purpose,
      payload: JSON.stringify(payload),
      created_at: now,
      expires_at: now + ttlMs,
    })
    .execute();
  return ticket;
}

/**
 * Consumes a ticket of `purpose`: marked used in the statement that finds it, so it works once.
 * Returns its payload (parsed JSON), or undefined when the ticket is unknown, of another purpose,
 * used or expired.
 */
export async function consumeTicket(
  deps: { db: Db; clock: Clock },
  purpose: TicketPurpose,
  ticket: string | undefined,
): Promise<unknown> {
  if (ticket === undefined || ticket === '' || ticket.length > TICKET_MAX) return undefined;
  const { db, clock } = deps;
  const now = clock.now();
  const row = await db
    .updateTable('lti_tickets')
    .set({ used_at: now })
    .where('ticket_hash', '=', hashToken(ticket))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['payload'])
    .executeTakeFirst();
  if (row === undefined) return undefined;
  try {
    return JSON.parse(row.payload) as unknown;
  } catch {
    return undefined;
  }
}
