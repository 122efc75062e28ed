import fs from 'node:fs';
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';

/**
 * The API documentation page at /api/docs (Swagger UI, served by @fastify/swagger-ui): its own
 * script, which lets a browser signed in to the console use "Try it out" on the V3 routes with its
 * session cookie (page/try-it-out.js, docs/console/account.md), and a strict Content-Security-Policy
 * (every script, style, font and image from this service; no inline script, no eval).
 */

/** The docs page's rules for the browser. Swagger UI draws its icons as data: images. */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The options of the Swagger UI plugin, with the page's script read once at start. */
export function docsPageOptions(): FastifySwaggerUiOptions {
  const tryItOut = fs.readFileSync(new URL('./page/try-it-out.js', import.meta.url), 'utf8');
  return {
    routePrefix: '/api/docs',
    theme: { title: 'Invigil API', js: [{ filename: 'try-it-out.js', content: tryItOut }] },
    uiConfig: {
      // Without Swagger UI's top bar: its logo carries an inline <style>, which the CSP refuses, and
      // its address box (explore another document) has no use here.
      layout: 'BaseLayout',
      // Tags start closed (hundreds of operations), with a box to filter them by tag; an address
      // such as /api/docs#/exams/get_api_v3_exams opens one operation.
      docExpansion: 'none',
      filter: true,
      deepLinking: true,
    },
    staticCSP: DOCS_CONTENT_SECURITY_POLICY,
  };
}
