// One lint tool: ESLint with typescript-eslint's type-aware rules. Formatting is Prettier's job.
import js from '@eslint/js';
import svelte from 'eslint-plugin-svelte';
import tseslint from 'typescript-eslint';
import svelteConfig from './web/svelte.config.js';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'dist/', 'test-output/', 'bench/results/', 'scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  ...svelte.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test's describe/it return promises the runner itself awaits.
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] },
          ],
        },
      ],
    },
  },
  {
    // Migrations receive Kysely<any> by Kysely's own contract; they are frozen and schema-only.
    files: ['src/db/migrations/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
  {
    // The Svelte components of web/: TypeScript inside, type-checked against web/tsconfig.json;
    // svelte-check and tsc know the browser's globals, so no-undef stays off there.
    files: ['web/**/*.svelte', 'web/**/*.svelte.ts'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        extraFileExtensions: ['.svelte'],
        parser: tseslint.parser,
        svelteConfig,
      },
    },
    rules: { 'no-undef': 'off' },
  },
  { files: ['web/**/*.ts'], rules: { 'no-undef': 'off' } },
  {
    files: ['eslint.config.js', 'web/svelte.config.js', '.dependency-cruiser.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
