import { Status, type Client } from 'discord.js';
import type { Db } from '../db/database.ts';
import { writeTx } from '../db/write.ts';
import type { BotMetrics } from './metrics.ts';
import type { Check, OpsEndpoints, Readiness } from './ops-server.ts';

// A bot process is ready when every gateway shard it runs is ready and its database
// takes a write. An extra account that cannot log in (retried meanwhile: account-logins.ts) makes
// it degraded, not unready: the main account and the other extras serve on. It needs no ffmpeg
// (the cache's Ogg Opus and uncached MP3s are both made in-process).

/** What a bot process's readiness reads. */
export interface BotHealthDeps {
  client: Pick<Client, 'ws'>;
  /**
   * The extra accounts (EXTRA_DISCORD_TOKENS), read at each probe: a serving or starting one's
   * shards must be ready too, named `account<N>:<shard>`; one that cannot log in is degraded (`account<N>`).
   */
  extras?: () => ReadonlyArray<{ client: Pick<Client, 'ws'>; state: 'starting' | 'serving' | 'down' }>;
  db: Db;
}

interface ReadinessOptions {
  /** Shortest time between two database probes; answers in between reuse the last result. */
  probeEveryMs?: number;
  /** Monotonic milliseconds (tests step it). */
  now?: () => number;
  /** The database probe (tests count its calls). */
  probeDatabase?: (db: Db) => Promise<Check>;
}

/**
 * A process's readiness, check by check. The database probe is a write transaction on the thread
 * that also drives the audio loop: however often /readyz is asked (a scraper, a load balancer, the
 * shard manager), it runs at most once per `probeEveryMs`; answers in between (and requests that
 * arrive while a probe runs) take the last result, a failure included.
 */
export function botReadiness(deps: BotHealthDeps, options: ReadinessOptions = {}): () => Promise<Readiness> {
  const { probeEveryMs = 1_000, now = () => performance.now(), probeDatabase = databaseWritable } = options;
  let last: { at: number; check: Promise<Check> } | undefined;
  const database = (): Promise<Check> => {
    const at = now();
    if (last === undefined || at - last.at >= probeEveryMs) last = { at, check: probeDatabase(deps.db) };
    return last.check;
  };
  return async () => {
    const shards = [...deps.client.ws.shards.values()];
    const down: Array<string | number> = shards.filter((s) => s.status !== Status.Ready).map((s) => s.id);
    const degraded: string[] = [];
    const extras = deps.extras?.() ?? [];
    for (const [i, extra] of extras.entries()) {
      if (extra.state === 'down') {
        degraded.push(`account${i + 1}`);
        continue;
      }
      const theirs = [...extra.client.ws.shards.values()];
      if (theirs.length === 0) down.push(`account${i + 1}:none`);
      for (const s of theirs) if (s.status !== Status.Ready) down.push(`account${i + 1}:${s.id}`);
    }
    const gateway: Check =
      shards.length > 0 && down.length === 0
        ? { ok: true }
        : { ok: false, detail: shards.length === 0 ? 'not_connected' : `shards_not_ready:${down.join(',')}` };
    const db = await database();
    const accounts: Check = degraded.length === 0 ? { ok: true } : { ok: false, detail: `cannot_log_in:${degraded.join(',')}` };
    return {
      ready: gateway.ok && db.ok,
      degraded: degraded.length > 0 ? ['accounts'] : [],
      checks: { gateway, database: db, ...(extras.length > 0 ? { accounts } : {}) },
    };
  };
}

/** One empty write transaction (BEGIN IMMEDIATE ... COMMIT): the database file takes writes. */
async function databaseWritable(db: Db): Promise<Check> {
  try {
    await writeTx(db, () => undefined);
    return { ok: true };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { ok: false, detail: typeof code === 'string' ? code.toLowerCase() : 'write_failed' };
  }
}

/** The endpoints of one bot process's METRICS_PORT. */
export function botEndpoints(metrics: BotMetrics, readiness: () => Promise<Readiness>): OpsEndpoints {
  return {
    metrics: async () => ({ contentType: metrics.registry.contentType, body: await metrics.text() }),
    readiness,
  };
}
