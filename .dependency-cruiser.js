/*
 * The layers of docs/architecture.md ("Layers as rules"), checked by `npm run lint`. Each rule names
 * what a part of the code may not import; no file is exempted from a rule. A type-only import counts
 * like any other.
 */

/** The adapters: they call the domain, never the other way round. */
const ADAPTERS = '^src/(http|jobs|mail|live|lti|cli)/';
/** The composition root and what only it assembles. */
const ROOT = '^src/(app|main|services)[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module may reach itself through its imports: a cycle hides which module is below which.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-not-to-adapters',
      comment:
        'src/domain owns the ports it calls (src/domain/ports); the adapters implement them and app.ts ' +
        'wires them. The domain imports no adapter, no composition root and nothing of web/.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: [ADAPTERS, ROOT, '^web/'] },
    },
    {
      name: 'db-not-upward',
      comment: 'src/db (connection, dialects, tables, migrations) knows nothing of what is built on it.',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: ['^src/domain/', ADAPTERS, ROOT] },
    },
    {
      name: 'web-only-shared-modules',
      comment:
        'The browser code (web/) reaches the server only through the API: its client types are ' +
        'generated from the OpenAPI document (web/shared/api-schema.d.ts). Of src/ it may import the ' +
        "shared pure modules: the HTML rules the server also applies, the live sockets' messages, and " +
        'the languages and message formatting (src/i18n, less the server-only catalogue reader).',
      severity: 'error',
      from: { path: '^web/' },
      to: {
        path: '^src/',
        pathNot: '^src/(security/html-rules|live/protocol|i18n/locales|i18n/translate|i18n/dates)[.]ts$',
      },
    },
    {
      name: 'i18n-pure',
      comment:
        'src/i18n (languages, message formatting, the catalogues) stands below everything: the domain, ' +
        'the adapters and web/ use it; it imports nothing else of the service.',
      severity: 'error',
      from: { path: '^src/i18n/' },
      to: { path: ['^src/', '^web/'], pathNot: '^src/i18n/' },
    },
    {
      name: 'web-protocol-types-only',
      comment: 'The live protocol module is server code: web/ imports its types, never its values.',
      severity: 'error',
      from: { path: '^web/' },
      to: { path: '^src/live/protocol[.]ts$', dependencyTypesNot: ['type-only', 'type-import'] },
    },
    {
      name: 'server-not-to-web',
      comment:
        'The server serves the build of web/ (src/http/web-build.ts reads its manifest); it imports none of it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^web/' },
    },
    {
      name: 'pages-apart',
      comment:
        'Each entry folder of web/ (the console, the room, the phone page, the practice page, the LTI scripts) stands on its ' +
        'own: what two of them need lives in web/shared, or in web/live for the live client.',
      severity: 'error',
      from: { path: '^web/(console|room|phone|lti|practice)/' },
      to: { path: '^web/', pathNot: ['^web/$1/', '^web/(shared|live)/'] },
    },
    {
      name: 'console-only-shared-modules',
      comment:
        "The console shares with the candidate's pages only what lives in web/shared and the live " +
        'client (web/live); the pages themselves (web/room, web/phone, web/practice, web/lti) are not its modules.',
      severity: 'error',
      from: { path: '^web/console/' },
      to: { path: '^web/', pathNot: '^web/(console|live|shared)/' },
    },
  ],
  options: {
    // Type-only imports are dependencies too (a type from an adapter ties the domain to it).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
  },
};
