// ESLint (flat config): typescript-eslint's recommended rules over every file, eslint-config-prettier
// last so that no rule fights the formatter (`npm run lint` runs `prettier --check` too).
// The type-checked presets are not used: with TypeScript 7 the rules get their types from the
// TypeScript 6 API package, and on this project they cost about three times the CPU of the rest.
// The two promise rules that need types run apart, in CI: eslint.promises.config.js.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: ['**/node_modules/', '**/dist/', 'coverage/', 'test-results/', 'data/'],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      // A long file is a prompt to look at it, never a reason to split one job in two.
      'max-lines': ['warn', { max: 400, skipBlankLines: true, skipComments: true }],
      // `_name` says "deliberately unused"; `const { a, ...rest } = x` drops `a` from `rest`.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // Use cases take plain inputs: Discord stays in the adapters (test/structure.test.ts checks
    // what they reach too; this says it in the editor).
    files: ['src/usecases/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: ['discord.js'], patterns: ['@discordjs/*', '**/discord/**', '**/dashboard/**', '**/commands/**'] },
      ],
    },
  },
  {
    // Tests read JSON answers from real servers and poke at them field by field.
    files: ['test/**', 'packages/*/test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The playground's page and the dashboard's: ES modules in the browser.
    files: ['packages/playground/src/public/**/*.js', 'src/dashboard/page/**/*.js'],
    languageOptions: { sourceType: 'module', globals: globals.browser },
  },
  prettier,
);
