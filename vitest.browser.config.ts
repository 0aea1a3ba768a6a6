import { defineConfig } from 'vitest/config';

// `npm run test:browser`: the playground in a real browser (packages/playground/test/browser/). Kept out of `npm test`
// because it starts the whole playground and Chromium (about half a minute); `.ci/run` runs both
// and counts both reports.
export default defineConfig({
  test: {
    include: ['packages/playground/test/browser/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-browser-report.json' },
  },
});
