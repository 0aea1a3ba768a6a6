/**
 * A test run's watchdog, started detached by its global setup (test-run-temp.ts) with a pipe from
 * the run's main process as stdin and that process's pid: once the pipe closes, whether the run
 * ended, crashed, or was interrupted (SIGINT, SIGTERM, kill -9 of vitest), it stops what the run left
 * running and removes its temp folder. Detached, so the Ctrl-C that stops the run does not stop it.
 *
 *   node --experimental-strip-types test/support/run-watchdog.ts RUN_DIR MAIN_PID
 */
import { removeRun } from './run-leftovers.ts';

const [dir, mainPid] = process.argv.slice(2);
if (!dir || !mainPid) throw new Error('usage: run-watchdog.ts RUN_DIR MAIN_PID');
process.on('SIGHUP', () => {});
process.on('SIGINT', () => {});
process.stdin.resume();
process.stdin.once('close', () => {
  // Still alive: the run's teardown closed the pipe, and its workers are its to end.
  const keepChildrenOf = isAlive(Number(mainPid)) ? Number(mainPid) : undefined;
  void removeRun(dir, { keepChildrenOf }).finally(() => process.exit(0));
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
