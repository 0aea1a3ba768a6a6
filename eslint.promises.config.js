// The promise rules need TypeScript's types, which cost about three times the CPU of the rest of
// the lint (eslint.config.js says why), so they run as their own step: `npm run lint:promises`,
// which CI runs after `npm run lint`. A promise nobody awaits or handles is a rejection nobody sees.
import base from './eslint.config.js';
import { defineConfig } from 'eslint/config';

export default defineConfig(...base, {
  files: ['src/**/*.ts', 'commands/**/*.ts', 'packages/*/src/**/*.ts'],
  languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  rules: {
    '@typescript-eslint/no-floating-promises': 'error',
    '@typescript-eslint/no-misused-promises': 'error',
  },
});
