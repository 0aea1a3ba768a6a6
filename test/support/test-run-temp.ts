/**
 * Vitest's global setup (vitest.config.ts): the run's temp folder. Everything the tests put in
 * os.tmpdir() (SQLite files, PostgreSQL clusters, a child bot's working directory) goes into one
 * folder of this run, and a watchdog process (run-watchdog.ts) removes it, with whatever the run
 * started that is still running, when the run ends however it ends: a failed or interrupted run
 * (Ctrl-C, SIGTERM to vitest, a crash) once left PostgreSQL servers running under init, and their
 * clusters in /tmp. A cache meant to outlive runs (PostgreSQL's initdb template) stays in the
 * machine's temp folder, YOMIAGE_TEST_MACHINE_TMPDIR.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const WATCHDOG = join(import.meta.dirname, 'run-watchdog.ts');

export default function runTemp(): () => Promise<void> {
  const machineTmp = tmpdir();
  const dir = mkdtempSync(join(machineTmp, 'yomiage-run-'));
  // As root, PostgreSQL runs as the `postgres` user, which must reach its cluster in here.
  chmodSync(dir, 0o711);
  const saved = { TMPDIR: process.env.TMPDIR, YOMIAGE_TEST_MACHINE_TMPDIR: process.env.YOMIAGE_TEST_MACHINE_TMPDIR };
  process.env.YOMIAGE_TEST_MACHINE_TMPDIR ??= machineTmp;
  // Set before the workers are forked: they and what they start inherit it.
  process.env.TMPDIR = dir;
  const watchdog = spawn(process.execPath, ['--experimental-strip-types', WATCHDOG, dir, String(process.pid)], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  // Neither keeps this process alive; the pipe closes when this process ends, however it ends.
  watchdog.unref();
  (watchdog.stdin as unknown as Socket).unref();
  return async () => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    if (watchdog.exitCode !== null) return;
    watchdog.ref();
    const exited = once(watchdog, 'exit');
    watchdog.stdin!.end();
    await exited;
  };
}
