import type { FastifyInstance } from 'fastify';
import { NotFoundMessage } from '../../domain/errors.ts';
import { findExam } from '../../domain/exams/exams.repository.ts';
import { readPracticeExamKey } from '../../domain/practice/practice-link.ts';
import { NO_PRACTICE_EXAM, type PracticeService } from '../../domain/practice/practice.service.ts';
import { languageFacts, resolveCandidateLanguage } from '../../domain/room/language.ts';
import { translator } from '../../i18n/catalogues.ts';
import type { PageLocale } from '../../i18n/locales.ts';
import { loadServerKeys } from '../../security/keys.ts';
import { escapeHtml } from '../../security/html.ts';
import type { RouteDeps } from '../route-deps.ts';
import { languageRequestOf } from '../room/candidate-language.ts';
import {
  htmlOpenTag,
  notFoundHtml,
  roomContentSecurityPolicy,
  securityHeaders,
  sendTokenPage,
} from '../room/page.routes.ts';
import { registerPracticeRoutes } from '../room/practice.routes.ts';
import { practiceVisitorSchema } from '../room/practice.schemas.ts';
import { registerRoomRateLimit } from '../room/rate-limit.ts';
import { entryHeadTags, webBuild } from '../web-build.ts';

/** The `<head>` tags of the practice entry of the web build; empty when the build lacks it. */
function practiceHeadTags(locale: PageLocale): string {
  const files = webBuild().entry('practice');
  return files === undefined ? '' : entryHeadTags(files, locale);
}

/** The catalogue of `locale`, its messages escaped for HTML. */
function bound(locale: PageLocale): (key: string) => string {
  const translate = translator(locale);
  return (key) => escapeHtml(translate.t(key));
}

/**
 * The practice page's HTML: the practice script (web/practice) draws the page from the room and
 * practice APIs; the server names the exam and says the page is opening, in the candidate's
 * language, until the script replaces the body.
 */
function pageHtml(title: string, locale: PageLocale): string {
  const t = bound(locale);
  return `<!DOCTYPE html>
${htmlOpenTag(locale)}
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="/favicon.ico" sizes="16x16 32x32">
${practiceHeadTags(locale)}
</head>
<body>
<main id="main" tabindex="-1">
  <h1>${escapeHtml(title)}</h1>
  <p aria-busy="true">${t('server.room.opening')}</p>
  <noscript><p class="alert">${t('server.room.needsJavaScript')}</p></noscript>
</main>
</body>
</html>
`;
}

/**
 * Everything of the practice run (docs/practice.md), from one line of server.ts:
 * - the practice API under `/api/room/:token/practice` (src/http/room/practice.routes.ts);
 * - `POST /api/room/practice/exam/:key`, a visitor's practice of a `demo` exam from its public link
 *   (rate-limited per link);
 * - the pages: `GET /room/:token/practice` for a registered candidate and `GET
 *   /practice/exam/:key` for a demo exam's visitors, both loading the `practice` entry of the web
 *   build.
 * Returns the practice service (services.practice) once everything is registered.
 */
export async function registerPractice(app: FastifyInstance, deps: RouteDeps): Promise<PracticeService> {
  const { config, database, services } = deps;
  const { practice } = services;
  const secret = loadServerKeys(config.serverSecret, config.dataDir).urlSigning;
  const policy = roomContentSecurityPolicy(config, { detectors: false });

  await app.register((scope) => registerPracticeRoutes(scope, deps, practice), { prefix: '/api/room' });

  await app.register(
    (scope) => {
      registerRoomRateLimit(scope, deps, 'practice-exam');
      scope.post<{ Params: { key: string } }>(
        '/practice/exam/:key',
        { schema: practiceVisitorSchema },
        async (request, reply) => {
          const examId = readPracticeExamKey(secret, request.params.key);
          if (examId === undefined) throw new NotFoundMessage(NO_PRACTICE_EXAM);
          return reply.code(201).send({ token: await practice.visitorSession(examId) });
        },
      );
      return Promise.resolve();
    },
    { prefix: '/api/room' },
  );

  app.get<{ Params: { token: string } }>(
    '/room/:token/practice',
    { schema: { hide: true } },
    (request, reply) => sendTokenPage(request, reply, { services, config, policy, html: pageHtml }),
  );

  app.get<{ Params: { key: string } }>(
    '/practice/exam/:key',
    { schema: { hide: true } },
    async (request, reply) => {
      securityHeaders(reply, policy).header('cache-control', 'no-store');
      const reader = languageRequestOf(request, config, { withOverride: true });
      const examId = readPracticeExamKey(secret, request.params.key);
      const exam = examId === undefined ? undefined : await findExam(database.db, examId);
      if (exam === undefined || exam.type !== 'demo' || exam.status !== 'open') {
        const { current } = resolveCandidateLanguage(languageFacts(null, null, null), reader);
        return reply.code(404).type('text/html; charset=utf-8').send(notFoundHtml(current));
      }
      const { current } = resolveCandidateLanguage(languageFacts(null, exam, null), reader);
      return reply.type('text/html; charset=utf-8').send(pageHtml(exam.name, current));
    },
  );

  return practice;
}
