/**
 * The bot as `npm start` runs it, and `npm run deploy-commands`, as child processes of the
 * playground: the command lines come from package.json's scripts (same entry points), the
 * configuration from environment variables only (the same path as a deployment's), and the working
 * directory is the playground's own, so no developer's `.env` is read.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The bot's folder: the root of the workspace this package sits in (packages/playground/src). */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * An npm script's command line, with this Node and absolute paths to the project's files (the Node
 * launcher scripts/node24.cjs, the .ts entry point).
 */
function npmScriptCommand(name: 'start' | 'deploy-commands'): { command: string; args: string[] } {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const script = pkg.scripts[name];
  if (!script) throw new Error(`package.json has no "${name}" script`);
  const [node, ...args] = script.split(/\s+/);
  if (node !== 'node') throw new Error(`unexpected ${name} script: ${script}`);
  return { command: process.execPath, args: args.map((a) => (/\.(ts|cjs)$/.test(a) && !a.startsWith('-') ? join(ROOT, a) : a)) };
}

/** One of the bot's JSON log lines (pino). */
export interface BotLogLine {
  level: number;
  time?: number;
  msg?: string;
  [key: string]: unknown;
}

export type BotStatus = 'starting' | 'ready' | 'stopping' | 'exited';

export interface BotProcessEvents {
  log: [line: BotLogLine];
  status: [status: BotStatus, detail: { code: number | null; signal: NodeJS.Signals | null } | undefined];
}

const KEPT_LOG_LINES = 300;

/** The bot child: its recent log lines, its status, and a clean stop. */
export class BotProcess extends EventEmitter<BotProcessEvents> {
  readonly logs: BotLogLine[] = [];
  status: BotStatus = 'starting';
  readonly #child: ChildProcess;
  #stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(options: { cwd: string; env: Record<string, string> }) {
    super();
    const { command, args } = npmScriptCommand('start');
    this.#child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let pending = '';
    this.#child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const text of lines) if (text.trim()) this.#onLine(text);
    });
    this.#child.stderr!.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-8000);
    });
    this.exited = new Promise((done) =>
      this.#child.once('exit', (code, signal) => {
        this.#setStatus('exited', { code, signal });
        done({ code, signal });
      }),
    );
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** The end of stderr (start-up errors, crashes). */
  stderr(): string {
    return this.#stderr;
  }

  /** Resolves once the bot logged "bot ready"; rejects if it exits first or after `timeoutMs`. */
  waitForReady(timeoutMs = 60_000): Promise<void> {
    if (this.status === 'ready') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new Error(`the bot did not get ready within ${timeoutMs} ms; last log: ${JSON.stringify(this.logs.slice(-3))}`)),
        timeoutMs,
      );
      const onStatus = (status: BotStatus) => {
        if (status === 'ready') finish();
        else if (status === 'exited')
          finish(new Error(`the bot exited while starting: ${this.#stderr.trim().slice(-1500) || JSON.stringify(this.logs.slice(-3))}`));
      };
      const finish = (error?: Error) => {
        clearTimeout(timer);
        this.off('status', onStatus);
        if (error) reject(error);
        else resolve();
      };
      this.on('status', onStatus);
    });
  }

  /** SIGTERM (the bot stops cleanly, persisting its queue), then SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    if (this.status === 'exited') return;
    this.#setStatus('stopping', undefined);
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  #onLine(text: string): void {
    let line: BotLogLine;
    try {
      line = JSON.parse(text) as BotLogLine;
    } catch {
      line = { level: 30, msg: text };
    }
    this.logs.push(line);
    if (this.logs.length > KEPT_LOG_LINES) this.logs.splice(0, this.logs.length - KEPT_LOG_LINES);
    this.emit('log', line);
    if (line.msg === 'bot ready' && this.status === 'starting') this.#setStatus('ready', undefined);
  }

  #setStatus(status: BotStatus, detail: { code: number | null; signal: NodeJS.Signals | null } | undefined): void {
    this.status = status;
    this.emit('status', status, detail);
  }
}

/** Runs `npm run deploy-commands -- --guild <guildId>` as npm would; resolves with its output. */
export function deployCommands(options: { cwd: string; env: Record<string, string>; guildId: string }): Promise<string> {
  const { command, args } = npmScriptCommand('deploy-commands');
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, [...args, '--guild', options.guildId], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolvePromise(out.trim()) : reject(new Error(`deploy-commands exited with ${code}: ${out.trim().slice(-1500)}`)),
    );
  });
}
