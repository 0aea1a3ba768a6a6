import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { ShardingManager, type Shard } from 'discord.js';
import type { Logger } from '../util/log.ts';
import type { CollectAnswer, CollectRequest } from './shard-ipc.ts';

// With SHARD_PROCESSES > 1, `npm start` runs this manager instead of a bot. It is
// discord.js's ShardingManager with clustering on top: each of the manager's "shards" is one bot
// process that runs a group of Discord shards (SHARDS / SHARD_COUNT in its environment are the
// group and the real count, which discord.js's Client reads). Every process is `src/main.ts` with
// SHARD_PROCESSES=1, so it is exactly the bot `npm start` runs on one process, sharing DATA_DIR's
// SQLite file (rate window, budgets, queued speech) with its siblings.
//
// A process that dies is started again after a backoff (1 s, doubling to 30 s; back to 1 s once
// it stayed up a minute). It speaks what it had accepted (written on accept).
//
// Seam for metrics: `collect(topic)` asks every live process over IPC and returns their
// answers; a process answers topics registered with `answerCollect` (src/ops/shard-ipc.ts). The
// manager serving METRICS_PORT aggregates `collect('metrics')` (prom-client's
// AggregatorRegistry.aggregate takes exactly such a list of per-process metric JSON).

interface ShardManagerOptions {
  token: string;
  /** Total shards of the bot across every host (the resolved SHARD_COUNT). */
  shardCount: number;
  /** One group of shard ids per process. */
  groups: number[][];
  logger: Logger;
  /** The entry point each process runs (default: src/main.ts). */
  file?: string;
  /** Node options of each process (default: this process's). */
  execArgv?: string[];
  backoff?: { firstMs?: number; maxMs?: number; stableMs?: number };
  /** How long a process may take to stop on SIGTERM before it is killed. */
  stopTimeoutMs?: number;
}

const SHARD_MANAGER_DEFAULTS = {
  file: fileURLToPath(new URL('../main.ts', import.meta.url)),
  backoff: { firstMs: 1_000, maxMs: 30_000, stableMs: 60_000 },
  stopTimeoutMs: 30_000,
} as const;

interface Slot {
  index: number;
  shards: number[];
  shard: Shard;
  delayMs: number;
  startedAt: number;
  restart: NodeJS.Timeout | undefined;
}

/** Runs and watches the bot processes of this host. */
export class ShardProcessManager {
  readonly #options: ShardManagerOptions;
  readonly #manager: ShardingManager;
  readonly #slots: Slot[] = [];
  readonly #logger: Logger;
  readonly #backoff: Required<NonNullable<ShardManagerOptions['backoff']>>;
  #stopping = false;
  #nonce = 0;

  constructor(options: ShardManagerOptions) {
    this.#options = options;
    this.#logger = options.logger;
    this.#backoff = { ...SHARD_MANAGER_DEFAULTS.backoff, ...options.backoff };
    this.#manager = new ShardingManager(options.file ?? SHARD_MANAGER_DEFAULTS.file, {
      totalShards: options.groups.length,
      shardList: options.groups.map((_, i) => i),
      mode: 'process',
      // Restarts are ours (with a backoff); the library's would loop at once on a crash at start.
      respawn: false,
      token: options.token,
      execArgv: options.execArgv ?? process.execArgv,
    });
  }

  /** Starts every process; resolves once each was spawned (not once ready: they log 'bot ready'). */
  async start(): Promise<void> {
    for (const [index, shards] of this.#options.groups.entries()) {
      const shard = this.#manager.createShard(index);
      // Clustering on top of the manager: the process's Client runs this group of real shards.
      Object.assign(shard.env as Record<string, unknown>, {
        SHARDS: JSON.stringify(shards),
        SHARD_COUNT: String(this.#options.shardCount),
        SHARD_IDS: shards.join(','),
        SHARD_PROCESSES: '1',
        YOMIAGE_SHARD_PROCESS: String(index),
        // Every shard of this host: the process serving the web dashboard answers for all of them.
        YOMIAGE_HOST_SHARDS: this.#options.groups.flat().join(','),
        // The manager serves METRICS_PORT (the sum over processes); a process answers over IPC.
        METRICS_PORT: '',
      });
      const slot: Slot = { index, shards, shard, delayMs: this.#backoff.firstMs, startedAt: 0, restart: undefined };
      shard.on('death', (child) => this.#onDeath(slot, child as { exitCode?: number | null; signalCode?: string | null }));
      shard.on('error', (error) => this.#logger.error({ err: error, process: index }, 'shard process error'));
      this.#slots.push(slot);
      await this.#spawn(slot);
    }
  }

  /** The pid of each running process, by index (undefined while it is down). */
  pids(): Array<number | undefined> {
    return this.#slots.map((s) => s.shard.process?.pid);
  }

  /** Asks every live process for `topic` (see shard-ipc.ts); processes that do not answer in time are left out. */
  async collect<T>(topic: string, timeoutMs = 5_000): Promise<Array<{ process: number; shards: number[]; value: T }>> {
    const asks = this.#slots.map(async (slot) => {
      if (!slot.shard.process?.connected) return undefined;
      const a = await askProcess(slot.shard, { yomiage: 'collect', topic, nonce: ++this.#nonce }, timeoutMs);
      return a !== undefined && a.error === undefined ? { process: slot.index, shards: slot.shards, value: a.value as T } : undefined;
    });
    return (await Promise.all(asks)).filter((a) => a !== undefined);
  }

  /** SIGTERM to every process, waiting for each to stop (it keeps what it accepted on disk). */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(
      this.#slots.map(async (slot) => {
        clearTimeout(slot.restart);
        const child = slot.shard.process;
        if (!child || child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const kill = setTimeout(() => child.kill('SIGKILL'), this.#options.stopTimeoutMs ?? SHARD_MANAGER_DEFAULTS.stopTimeoutMs);
        await exited;
        clearTimeout(kill);
      }),
    );
  }

  async #spawn(slot: Slot): Promise<void> {
    slot.startedAt = Date.now();
    // -1: do not wait for the Client here; readiness is the process's own 'bot ready' log line.
    const child = (await slot.shard.spawn(-1)) as { pid?: number };
    // discord.js's `_ready` message once a shard of the group is ready; logged once per start.
    slot.shard.once('ready', () => this.#logger.info({ process: slot.index, shards: slot.shards, pid: child.pid }, 'shard process ready'));
    this.#logger.info({ process: slot.index, shards: slot.shards, pid: child.pid }, 'shard process started');
  }

  #onDeath(slot: Slot, child: { exitCode?: number | null; signalCode?: string | null }): void {
    slot.shard.removeAllListeners('ready');
    if (this.#stopping) return;
    const upMs = Date.now() - slot.startedAt;
    if (upMs >= this.#backoff.stableMs) slot.delayMs = this.#backoff.firstMs;
    const delayMs = slot.delayMs;
    slot.delayMs = Math.min(this.#backoff.maxMs, slot.delayMs * 2);
    this.#logger.warn(
      { process: slot.index, shards: slot.shards, code: child.exitCode ?? null, signal: child.signalCode ?? null, restartInMs: delayMs },
      'shard process exited; restarting it',
    );
    slot.restart = setTimeout(() => {
      slot.restart = undefined;
      if (this.#stopping) return;
      this.#spawn(slot).catch((error: unknown) =>
        this.#logger.error({ err: error, process: slot.index }, 'could not start a shard process'),
      );
    }, delayMs);
  }
}

/**
 * One process's answer to `request`, or undefined when it cannot be sent (the process is exiting)
 * or no answer comes within `timeoutMs`. Never rejects, and stops listening either way: a /metrics
 * scrape while a process dies must not leave a timer to fail later with nobody waiting.
 */
export async function askProcess(
  shard: Pick<Shard, 'on' | 'off' | 'send'>,
  request: CollectRequest,
  timeoutMs: number,
): Promise<CollectAnswer | undefined> {
  let settle: (answer: CollectAnswer | undefined) => void = () => {};
  const answer = new Promise<CollectAnswer | undefined>((resolve) => {
    const onMessage = (m: unknown) => {
      const a = m as CollectAnswer;
      if (a?.yomiage === 'collected' && a.nonce === request.nonce) settle(a);
    };
    const timer = setTimeout(() => settle(undefined), timeoutMs).unref();
    settle = (a) => {
      clearTimeout(timer);
      shard.off('message', onMessage);
      resolve(a);
    };
    shard.on('message', onMessage);
  });
  try {
    await shard.send(request);
  } catch {
    settle(undefined);
  }
  return answer;
}
