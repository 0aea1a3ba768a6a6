import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import InterleavingSequencer from './test/support/sequencer.ts';

// Node's compile cache for every test process and the child processes they start (the bot as
// `npm start` runs it, the CLIs): loading discord.js and the sources costs about half the CPU the
// second time. Set before the workers are forked, so they and their children inherit it.
process.env.NODE_COMPILE_CACHE ??= join(import.meta.dirname, 'node_modules', '.cache', 'node-compile-cache');

// Tests start real loopback servers (the emulator, the local Discord), so they need more than the
// default 5 s on a shared 2-core machine.
export default defineConfig({
  test: {
    // The bot's tests and every workspace package's (each also runs its own with `npm test` there).
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // The browser test has a config of its own (vitest.browser.config.ts, `npm run test:browser`).
    exclude: ['packages/playground/test/browser/**', '**/node_modules/**'],
    // The run's own temp folder, removed with whatever the run left running however it ends; then,
    // on a fresh checkout, fills that compile cache before the workers and child bots start.
    globalSetup: ['test/support/test-run-temp.ts', 'test/support/warm-compile-cache.ts'],
    pool: 'forks',
    // Most long files wait on real time (audio played in real time, injected latency, child
    // processes), not on the CPU: more files than cores at once keep both cores busy, and the
    // sequencer starts the long files beside short ones rather than all together. Each worker costs
    // about 1 CPU-s to start (it loads the bot's modules once), so more is not always faster.
    // Measured on the 2-core machine, `npm run bench:suite -- --fresh --workers N`, alternated
    // (2026-11-28): 8 workers 69.2 / 72.3 s at 1.63-1.66 cores busy, 9: 67.9 / 68.9 s (1.75-1.80),
    // 10: 63.9 / 70.8 s (1.83-1.85), 12: 64.2 / 76.0 s (1.90, with 122 / 145 CPU-s).
    maxWorkers: 10,
    sequence: { sequencer: InterleavingSequencer },
    // A worker process runs file after file without re-importing what they share (discord.js, the
    // sources): about a third less CPU for the suite. So a file restores any global it changes
    // (fake timers, process.env) before it ends.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
  },
});
