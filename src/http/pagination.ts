import type { FastifyReply } from 'fastify';
import type { Page } from '../domain/listing.ts';

/** Sets the X-Pagination-* headers every list answer carries. */
export function setPaginationHeaders(reply: FastifyReply, page: Page<unknown>): void {
  reply.header('X-Pagination-Item-Count', String(page.total));
  reply.header('X-Pagination-Page-Count', String(Math.ceil(page.total / page.limit)));
  reply.header('X-Pagination-Page', String(page.page));
  reply.header('X-Pagination-Limit', String(page.limit));
}
