import { defineConfig } from 'vitest/config';

// This package's own tests (`npm test` here); the root `npm test` runs them with the bot's, with the
// same settings (see the root vitest.config.ts).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    pool: 'forks',
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
