import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers of src/ (docs/architecture.md): git <- catalog <- checks <- handlers, commands, flows
// and the server; publish implements what checks declare; a flow's plan.ts (the catalog
// edit run past the checks, shared by App and CLI) imports only catalog, checks and other
// plans. Each folder may import only the folders named here (npm packages always): a
// relative import that climbs out of the folder to anywhere else fails `npm run lint`.
// test/architecture.test.ts checks the same rule over every import, dynamic ones included,
// and that there is no import cycle.
const LAYERS = {
  git: [],
  catalog: ['git'],
  checks: ['catalog', 'git'],
  publish: ['catalog', 'checks', 'git'],
};
// src/flows/<flow>/plan.ts: git, catalog and checks two folders up, only plan.ts one folder up or here.
const planRule = {
  files: ['src/flows/*/plan.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex:
              '^\\.\\./\\.\\./(?!(catalog|checks|git)/)|^\\.\\./[^./][^/]*/(?!plan\\.js$)|^\\./(?!plan\\.js$)',
            message:
              "a flow's plan.ts may import only src/git, src/catalog, src/checks and other plan.ts (docs/architecture.md, Layers)",
          },
        ],
      },
    ],
  },
};
const layerRules = Object.entries(LAYERS).flatMap(([folder, allowed]) =>
  [0, 1, 2, 3].map((depth) => ({
    files: [`src/${folder}/${'*/'.repeat(depth)}*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(\\.\\./){${depth + 1}}${allowed.length ? `(?!(${allowed.join('|')})/)` : ''}`,
              message: allowed.length
                ? `src/${folder} may import only ${allowed.map((a) => `src/${a}`).join(', ')} (layers: README, Development)`
                : `src/${folder} imports nothing outside itself (layers: README, Development)`,
            },
          ],
        },
      ],
    },
  })),
);

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        performance: 'readonly',
        structuredClone: 'readonly',
        fetch: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...layerRules,
  planRule,
);
