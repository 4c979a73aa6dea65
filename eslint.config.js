import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { floorRules } from './tools/floors.mjs';

export default tseslint.config(
  // bench/ is checked on its own (`npm --prefix bench run check`): its types come from its own
  // dependencies and the build in dist/, which a fresh checkout does not have.
  // tools/consumer/ is a separate project, compiled against the packed package (tools/check-consumers.sh).
  { ignores: ['dist/', 'docs/api/', 'node_modules/', 'bench/', 'tools/consumer/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', 'tools/*.mjs'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // Waits reject with the AbortSignal's reason, whatever the caller put there (as p-queue does).
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  // The floors of lib/ (tools/floors.mjs): an import up a floor, or across rooms of one floor, fails.
  ...floorRules(),
);
