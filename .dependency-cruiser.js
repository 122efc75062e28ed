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
        'wires them. The domain imports no adapter, no composition root and nothing of the console.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: [ADAPTERS, ROOT, '^console/'] },
    },
    {
      name: 'db-not-upward',
      comment: 'src/db (connection, dialects, tables, migrations) knows nothing of what is built on it.',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: ['^src/domain/', ADAPTERS, ROOT] },
    },
    {
      name: 'console-only-shared-modules',
      comment:
        'The console reaches the server only through the API (its generated client types live in ' +
        'console/src/lib). Of src/ it may import the shared pure modules: the HTML rules, the live ' +
        "client the room's pages also run, and the live protocol's types.",
      severity: 'error',
      from: { path: '^console/' },
      to: {
        path: '^src/',
        pathNot: '^src/(security/html-rules[.]ts|http/live/page/live-client[.]js|live/protocol[.]ts)$',
      },
    },
    {
      name: 'console-protocol-types-only',
      comment: 'The live protocol module is server code: the console imports its types, never its values.',
      severity: 'error',
      from: { path: '^console/' },
      to: { path: '^src/live/protocol[.]ts$', dependencyTypesNot: ['type-only', 'type-import'] },
    },
  ],
  options: {
    // Type-only imports are dependencies too (a type from an adapter ties the domain to it).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
  },
};
