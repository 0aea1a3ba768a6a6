import { defineConfig } from 'vitest/config';

// Tests start real loopback servers (the emulator, the fake Discord), so they need more than the
// default 5 s on a shared 2-core machine; each file runs in its own forked process.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The browser test has a config of its own (vitest.browser.config.ts, `npm run test:browser`).
    exclude: ['test/browser/**', '**/node_modules/**'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
  },
});
