import { execFileSync, spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// The README's commands in the shell a newcomer has: the machine's older Node first on PATH, and
// Node 24 only where scripts/playground.sh put it (~/.cache/node24). Every npm script starts with
// scripts/node24.cjs, run by that older Node.

const ROOT = join(import.meta.dirname, '..', '..');
const LAUNCHER = join(ROOT, 'scripts', 'node24.cjs');
const LINE = /^yomiage needs Node >= 22\.12 and this is Node v\d+\.\d+\.\d+: run `bash scripts\/playground\.sh` once .*\.nvmrc.*\n$/;

/** A Node older than 22.12 on this machine (PATH, then the usual places), when there is one. */
function findOldNode(): string | undefined {
  const candidates = [...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'node')), '/usr/bin/node', '/usr/local/bin/node'];
  for (const candidate of new Set(candidates)) {
    if (!existsSync(candidate)) continue;
    try {
      const [major = 0, minor = 0] = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' })
        .trim()
        .split('.')
        .map(Number);
      if (major < 22 || (major === 22 && minor < 12)) return candidate;
    } catch {
      // not a Node that runs here
    }
  }
  return undefined;
}

const oldNode = findOldNode();
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** An empty home directory; with `cached`, one where scripts/bootstrap.sh left this test's Node as its Node 24. */
function home(cached: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'yomiage-home-'));
  dirs.push(dir);
  if (cached) {
    const pkg = join(dir, '.cache', 'node24', 'node_modules', `node-${process.platform}-${process.arch}`);
    mkdirSync(join(pkg, 'bin'), { recursive: true });
    symlinkSync(process.execPath, join(pkg, 'bin', 'node'));
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({ name: `node-${process.platform}-${process.arch}`, version: process.versions.node }),
    );
  }
  return dir;
}

/** The environment of a shell whose first `node` is the old one. */
function shell(homeDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: homeDir,
    PATH: [dirname(oldNode!), ...(process.env.PATH ?? '').split(delimiter)].join(delimiter),
    npm_config_update_notifier: 'false',
  };
}

function launch(homeDir: string, args: string[]): SpawnSyncReturns<string> {
  return spawnSync(oldNode!, [LAUNCHER, ...args], { cwd: ROOT, env: shell(homeDir), encoding: 'utf8', timeout: 20_000 });
}

describe.skipIf(!oldNode)(`npm scripts from a shell whose Node is older (${oldNode ?? 'none on this machine'})`, () => {
  it('GIVEN no Node 24 anywhere THEN the script stops at once with one line saying what to run, and runs nothing', () => {
    const empty = home(false);
    const marker = join(empty, 'ran');
    const result = launch(empty, ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`]);
    expect({ status: result.status, stdout: result.stdout }).toEqual({ status: 1, stdout: '' });
    expect(result.stderr).toMatch(LINE);
    expect(existsSync(marker)).toBe(false);

    // Through npm itself, as the README has it typed: the same line, not Node's "bad option".
    const npm = spawnSync('npm', ['run', 'tts', '--', '--help'], { cwd: ROOT, env: shell(empty), encoding: 'utf8', timeout: 20_000 });
    expect(npm.status).not.toBe(0);
    expect(`${npm.stderr.split('\n').find((line) => line.startsWith('yomiage needs Node'))}\n`).toMatch(LINE);
    expect(npm.stderr).not.toContain('bad option');
    expect(npm.stdout).not.toContain('usage: tts');
  });

  it('GIVEN Node 24 where scripts/playground.sh keeps it THEN the script runs under it, and so does every `node` it starts', () => {
    const cached = home(true);
    const probe = `
      const { execFileSync } = require('child_process');
      const byName = execFileSync('node', ['-p', 'process.version'], { encoding: 'utf8' }).trim();
      console.log(JSON.stringify({ version: process.version, byName, args: process.argv.slice(1) }));
      process.exitCode = 3;`;
    const result = launch(cached, ['-e', probe, 'two words', '--flag']);
    expect(result.stderr).toBe('');
    expect({ status: result.status, ...JSON.parse(result.stdout) }).toEqual({
      status: 3,
      version: process.version,
      byName: process.version,
      args: ['two words', '--flag'],
    });

    const npm = spawnSync('npm', ['run', 'tts', '--', '--help'], { cwd: ROOT, env: shell(cached), encoding: 'utf8', timeout: 20_000 });
    expect({ status: npm.status, usage: npm.stdout.includes('usage: tts <command>') }).toEqual({ status: 0, usage: true });
  });

  it('GIVEN the script runs under Node 24 THEN a stop signal reaches it and the exit is the one it chose (Ctrl-C, systemctl stop)', async () => {
    const child = spawn(
      oldNode!,
      [
        LAUNCHER,
        '-e',
        `process.on('SIGTERM', () => { console.log('stopping cleanly'); process.exit(0); }); console.log('ready'); setInterval(() => {}, 1000);`,
      ],
      { cwd: ROOT, env: shell(home(true)), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((done) =>
      child.once('exit', (code, signal) => done([code, signal])),
    );
    await expect.poll(() => out, { timeout: 10_000 }).toContain('ready');
    child.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);
    expect(out).toContain('stopping cleanly');

    const killed = launch(home(true), ['-e', `process.kill(process.pid, 'SIGKILL')`]);
    expect(killed.signal).toBe('SIGKILL');
  });
});

describe('npm scripts under this Node', () => {
  it('GIVEN a recent Node THEN the launcher becomes the script itself: the same process, no parent left behind', () => {
    const out = execFileSync(process.execPath, [LAUNCHER, '-p', 'JSON.stringify([process.pid, process.ppid])'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const [, ppid] = JSON.parse(out) as [number, number];
    expect(ppid).toBe(process.pid);
  });

  it('GIVEN package.json THEN every script starts Node through the launcher, never a bin by its name', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const commands = Object.entries(scripts).flatMap(([name, script]) =>
      script.split('&&').map((command) => ({ name, command: command.trim() })),
    );
    expect(commands.filter(({ command }) => !command.startsWith('node scripts/node24.cjs '))).toEqual([]);
  });
});
