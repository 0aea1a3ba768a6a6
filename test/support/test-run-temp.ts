/**
 * Vitest's global setup (vitest.config.ts): the run's temp folder. Everything the tests put in
 * os.tmpdir() (SQLite files, PostgreSQL clusters, a child bot's working directory) goes into one
 * folder of this run, and a watchdog process (run-watchdog.ts) removes it, with whatever the run
 * started that is still running, when the run ends however it ends: a failed or interrupted run
 * (Ctrl-C, SIGTERM to vitest, a crash) once left PostgreSQL servers running under init, and their
 * clusters in /tmp. A cache meant to outlive runs (PostgreSQL's initdb template) stays in the
 * machine's temp folder, YOMIAGE_TEST_MACHINE_TMPDIR.
 *
 * The folder is in memory (/dev/shm) when the machine has one with room and TMPDIR does not say
 * otherwise: the suite makes thousands of files (SQLite databases and their journals, PostgreSQL
 * clusters of about a thousand files each, child bots' working directories, cached clips), and on
 * the development machine making a file in /tmp costs about 1 ms of kernel CPU (ext4 looks for a
 * free inode past the many its recent deletions left, all the engineers' test runs churning the
 * same directory), on tmpfs about 20 us.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, statfsSync } from 'node:fs';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const WATCHDOG = join(import.meta.dirname, 'run-watchdog.ts');
const MEMORY_DIR = '/dev/shm';
export const TMPFS_MAGIC = 0x01021994;
/** Free room the memory folder needs (a run keeps a few hundred MB at most: four PostgreSQL clusters, the databases, the clips). */
export const MEMORY_ROOM_BYTES = 2 * 1024 ** 3;

/** What the machine offers for the run's folder. */
export interface TempChoice {
  /** TMPDIR is set: whoever set it chose. */
  tmpdirSet: boolean;
  machineTmp: string;
  /** The memory folder, when there is one: its filesystem's type (statfs) and free bytes. */
  memory?: { dir: string; type: number; freeBytes: number } | undefined;
}

/** Where the run's folder goes: TMPDIR when set, else the memory folder when it is a tmpfs with room, else the machine's temp folder. */
export function runTempParent(choice: TempChoice): string {
  const { memory } = choice;
  if (choice.tmpdirSet || !memory) return choice.machineTmp;
  return memory.type === TMPFS_MAGIC && memory.freeBytes >= MEMORY_ROOM_BYTES ? memory.dir : choice.machineTmp;
}

function memoryFolder(): TempChoice['memory'] {
  try {
    const fs = statfsSync(MEMORY_DIR);
    return { dir: MEMORY_DIR, type: fs.type, freeBytes: fs.bavail * fs.bsize };
  } catch {
    return undefined;
  }
}

export default function runTemp(): () => Promise<void> {
  const machineTmp = tmpdir();
  const parent = runTempParent({ tmpdirSet: Boolean(process.env.TMPDIR), machineTmp, memory: memoryFolder() });
  const dir = mkdtempSync(join(parent, 'yomiage-run-'));
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
