/**
 * What a test run left behind: the processes it started that are still running, found in /proc
 * (Linux) by what they carry of the run: its temp folder in their environment (TMPDIR, which every
 * process the run starts inherits unless given an environment of its own), as their working
 * directory (a child bot's), or on their command line (PostgreSQL's `-D`). Used by the run's
 * watchdog (run-watchdog.ts) and by the test that interrupts a run.
 */
import { readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Leftover {
  pid: number;
  ppid: number;
  /** The executable's name, as the kernel has it (`postgres`, `node`). */
  comm: string;
  cmdline: string;
}

/** Every process (but this one and `except`) holding `dir` in its environment, working directory or command line. */
export function leftoverProcesses(dir: string, except: ReadonlySet<number> = new Set()): Leftover[] {
  let pids: number[];
  try {
    pids = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return []; // no /proc: only the temp folder goes
  }
  const inside = (path: string) => path === dir || path.startsWith(`${dir}/`);
  const found: Leftover[] = [];
  for (const pid of pids) {
    if (pid === process.pid || except.has(pid)) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const tmp = environ.find((entry) => entry.startsWith('TMPDIR='))?.slice('TMPDIR='.length);
      if (!(tmp !== undefined && inside(tmp)) && !inside(readlinkSync(`/proc/${pid}/cwd`)) && !cmdline.includes(dir)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      found.push({ pid, ppid, comm, cmdline });
    } catch {
      // gone meanwhile, or another user's
    }
  }
  return found;
}

/**
 * Stops what `leftoverProcesses` finds (PostgreSQL with a fast shutdown, so it leaves no shared
 * memory behind; the rest with SIGTERM, then SIGKILL after `graceMs`), again until nothing new
 * turns up, then removes `dir`. Processes whose parent is `keepChildrenOf` are spared: a run's own
 * workers, while it is still alive to end them.
 */
export async function removeRun(dir: string, options: { keepChildrenOf?: number | undefined; graceMs?: number } = {}): Promise<void> {
  const graceMs = options.graceMs ?? 5_000;
  const spared = (p: Leftover) =>
    options.keepChildrenOf !== undefined && (p.pid === options.keepChildrenOf || p.ppid === options.keepChildrenOf);
  for (let round = 0; round < 5; round += 1) {
    const left = leftoverProcesses(dir).filter((p) => !spared(p));
    if (left.length === 0) break;
    for (const p of left) signal(p.pid, p.comm === 'postgres' ? 'SIGINT' : 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && left.some((p) => alive(p.pid))) await sleep(50);
    for (const p of left) if (alive(p.pid)) signal(p.pid, 'SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
