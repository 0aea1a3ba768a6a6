import { defineConfig } from 'vitest/config';

// This package's own tests (`npm test` here); the root `npm test` runs them with the bot's, with the
// same settings (see the root vitest.config.ts).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The browser test runs from the root (npm run test:browser, vitest.browser.config.ts).
    exclude: ['test/browser/**', '**/node_modules/**'],
    pool: 'forks',
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
