import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { leftoverProcesses, removeRun } from '../support/run-leftovers.ts';

// `npm test` stopped half-way, by a SIGTERM to vitest (a CI timeout) or by a crash, once left
// PostgreSQL servers running under init and their clusters in /tmp. Here a run of the suite's own
// configuration holds a PostgreSQL server, a temp folder and two child processes when it is
// interrupted, and nothing of it may be left.

const ROOT = join(import.meta.dirname, '..', '..');
const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const CONFIG = join(import.meta.dirname, 'fixtures', 'interrupted-run.config.ts');

const dirs: string[] = [];
afterAll(async () => {
  // Only when the run's watchdog failed: what it should have stopped is stopped here.
  for (const dir of dirs) await removeRun(dir, { graceMs: 2_000 });
});

/** Starts the run with its own temp folder, waits until the fixture holds everything, interrupts it. */
async function interruptedRun(signal: NodeJS.Signals) {
  const machineTmp = mkdtempSync(join(tmpdir(), `int-${signal}-`));
  // As /tmp is for everyone: as root, PostgreSQL runs as the `postgres` user, which must reach it.
  chmodSync(machineTmp, 0o711);
  const ready = join(mkdtempSync(join(tmpdir(), 'int-ready-')), 'ready.json');
  dirs.push(machineTmp, join(ready, '..'));
  const run = spawn(process.execPath, [VITEST, 'run', '--config', CONFIG], {
    cwd: ROOT,
    env: { ...process.env, TMPDIR: machineTmp, YOMIAGE_FIXTURE_READY: ready },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  run.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  run.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((done) => run.once('exit', () => done()));
  await Promise.race([
    vi.waitFor(() => expect(existsSync(ready)).toBe(true), { timeout: 20_000, interval: 100 }),
    exited.then(() => {
      throw new Error(`the run ended before it was interrupted:\n${output}`);
    }),
  ]);
  const held = JSON.parse(readFileSync(ready, 'utf8')) as { url: string };
  const running = leftoverProcesses(machineTmp);
  expect({
    postgres: running.some((p) => p.comm === 'postgres'),
    children: running.filter((p) => p.cmdline.includes('setInterval')).length,
  }).toEqual({ postgres: true, children: 2 });
  run.kill(signal);
  await exited;
  return { machineTmp, port: Number(new URL(held.url).port) };
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });
}

describe('a test run interrupted half-way', () => {
  // SIGTERM to vitest's main process alone, as a CI timeout sends it: its workers die without
  // running their hooks, which is what left the servers behind. (Ctrl-C reaches every process of
  // the run; kill -9 of vitest goes through the same watchdog.)
  it('GIVEN SIGTERM to vitest THEN no database server, process or temp folder of the run is left', async () => {
    const { machineTmp, port } = await interruptedRun('SIGTERM');
    await vi.waitFor(
      async () => {
        expect(leftoverProcesses(machineTmp).map((p) => `${p.pid} ${p.cmdline}`)).toEqual([]);
        expect(readdirSync(machineTmp)).toEqual([]);
        expect(await refused(port)).toBe(true);
      },
      { timeout: 15_000, interval: 100 },
    );
  });
});
