/**
 * The bot as users start it, for end-to-end tests: the command line of the `start`
 * script in package.json, run as a child process with an environment of its own and a working
 * directory without a `.env`, against the loopback Discord and the emulator in the test process.
 * Its JSON log lines (stdout) are parsed so a test can wait for an event instead of sleeping.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_TOKEN, type Emulator } from '@yomiage/tts-emulator';
import type { FakeDiscord } from '@yomiage/local-discord';
import { openDatabase } from '../../src/db/database.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** One pino record. */
export interface LogLine {
  level: number;
  msg?: string;
  [key: string]: unknown;
}

export interface ChildBot {
  readonly pid: number;
  readonly logs: LogLine[];
  /** stderr so far (config errors, crashes). */
  stderr(): string;
  /** The first log line (already written or future) matching `predicate`. */
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs?: number, what?: string): Promise<LogLine>;
  /** Sends a signal and waits for the process to end. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ChildBotOptions {
  discord: FakeDiscord;
  emulator: Emulator;
  /** DATA_DIR: keep the same one across a restart. */
  dataDir: string;
  /** PEM of a CA the child must trust (the fake voice server's certificate). */
  caCertPem?: string;
  env?: Record<string, string>;
  /** Resolve once this log message appears (default 'bot ready'); null: at once. */
  readyMessage?: string | null;
  readyTimeoutMs?: number;
}

/**
 * An npm script's command line (`npm start`'s by default), from package.json, with this Node and
 * absolute paths to its files (the Node launcher scripts/node24.cjs, the entry point).
 */
export function scriptCommand(name = 'start'): { command: string; args: string[] } {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const script = pkg.scripts[name];
  if (!script) throw new Error(`package.json has no "${name}" script`);
  const [node, ...args] = script.split(/\s+/);
  if (node !== 'node') throw new Error(`unexpected ${name} script: ${script}`);
  return { command: process.execPath, args: args.map((a) => (/\.(ts|cjs)$/.test(a) && !a.startsWith('-') ? join(ROOT, a) : a)) };
}

/** Starts the bot as a child process; resolves once it logged that it is ready. */
export async function startChildBot(options: ChildBotOptions): Promise<ChildBot> {
  // A working directory of its own: no developer's .env can leak in.
  const cwd = mkdtempSync(join(tmpdir(), 'yomiage-child-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? cwd,
    DISCORD_TOKEN: options.discord.token,
    DISCORD_API_URL: options.discord.apiUrl,
    TTS_TOKEN: DEFAULT_TOKEN,
    TTS_BASE_URL: options.emulator.baseUrl,
    DATA_DIR: options.dataDir,
    LOG_LEVEL: 'info',
    // Node's compile cache (vitest.config.ts): how fast the child loads, nothing of what it does.
    ...(process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE } : {}),
    ...options.env,
  };
  if (options.caCertPem) {
    const file = join(cwd, 'ca.pem');
    writeFileSync(file, options.caCertPem);
    env.NODE_EXTRA_CA_CERTS = file;
  }
  const { command, args } = scriptCommand('start');
  const child: ChildProcess = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: LogLine[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        logs.push({ level: 30, msg: line });
      }
    }
    for (const wake of waiters) wake();
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => {
      rmSync(cwd, { recursive: true, force: true });
      done({ code, signal });
      for (const wake of waiters) wake();
    }),
  );
  let ended = false;
  void exited.then(() => (ended = true));
  const bot: ChildBot = {
    pid: child.pid!,
    logs,
    stderr: () => stderr,
    exited,
    waitForLog(predicate, timeoutMs = 20_000, what = 'a log line') {
      return new Promise<LogLine>((resolveLine, reject) => {
        const check = () => {
          const found = logs.find(predicate);
          if (found) return finish(() => resolveLine(found));
          if (ended) return finish(() => reject(new Error(`bot exited before ${what}; stderr: ${stderr.slice(-2000)}`)));
        };
        const timer = setTimeout(
          () =>
            finish(() =>
              reject(
                new Error(`timed out waiting for ${what}; last logs: ${JSON.stringify(logs.slice(-5))}; stderr: ${stderr.slice(-1000)}`),
              ),
            ),
          timeoutMs,
        );
        const finish = (fn: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          fn();
        };
        waiters.add(check);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (!ended) child.kill(signal);
      return exited;
    },
  };
  const ready = options.readyMessage === undefined ? 'bot ready' : options.readyMessage;
  if (ready !== null) {
    try {
      await bot.waitForLog((l) => l.msg === ready, options.readyTimeoutMs ?? 30_000, `"${ready}"`);
    } catch (error) {
      await bot.stop('SIGKILL');
      throw error;
    }
  }
  return bot;
}

/**
 * Rows a child bot has accepted and not finished (of one guild, or all), read from its database file
 * in `dataDir` as another process would.
 */
export function pendingRows(dataDir: string, guildId?: string): number {
  const db = openDatabase(join(dataDir, 'bot.sqlite3'), { migrate: false });
  try {
    return guildId === undefined
      ? (db.prepare('SELECT COUNT(*) FROM pending_utterances').pluck().get() as number)
      : (db.prepare('SELECT COUNT(*) FROM pending_utterances WHERE guild_id = ?').pluck().get(guildId) as number);
  } finally {
    db.close();
  }
}
