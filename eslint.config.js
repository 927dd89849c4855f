import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers of src/ (README, Development): catalog <- checks <- handlers, commands and the
// server; publish implements what checks declare; promotion runs catalog edits past the
// checks. Each folder may import only the folders named here (npm packages always): a
// relative import that climbs out of the folder to anywhere else fails `npm run lint`.
// test/architecture.test.ts checks the same rule over every import, dynamic ones included,
// and that there is no import cycle.
const LAYERS = {
  catalog: [],
  checks: ['catalog'],
  publish: ['catalog', 'checks'],
  promotion: ['catalog', 'checks'],
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
);
