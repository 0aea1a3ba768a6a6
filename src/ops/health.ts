import { Status, type Client } from 'discord.js';
import type { Db } from '../db/database.ts';
import { writeTx } from '../db/write.ts';
import type { BotMetrics } from './metrics.ts';
import type { Check, OpsEndpoints, Readiness } from './ops-server.ts';

// A bot process is ready when every gateway shard it runs is ready and its database
// takes a write. Nothing of a bot process is "degraded" today: it needs no ffmpeg (the cache's
// Ogg Opus and uncached MP3s are both made in-process), the one part that once could be missing.

/** What a bot process's readiness reads. */
export interface BotHealthDeps {
  client: Pick<Client, 'ws'>;
  /** The extra accounts' clients (EXTRA_DISCORD_TOKENS): their shards must be ready too, named `account<N>:<shard>`. */
  extras?: ReadonlyArray<Pick<Client, 'ws'>>;
  db: Db;
}

export interface ReadinessOptions {
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
    for (const [i, extra] of (deps.extras ?? []).entries()) {
      const theirs = [...extra.ws.shards.values()];
      if (theirs.length === 0) down.push(`account${i + 1}:none`);
      for (const s of theirs) if (s.status !== Status.Ready) down.push(`account${i + 1}:${s.id}`);
    }
    const gateway: Check =
      shards.length > 0 && down.length === 0
        ? { ok: true }
        : { ok: false, detail: shards.length === 0 ? 'not_connected' : `shards_not_ready:${down.join(',')}` };
    const db = await database();
    return { ready: gateway.ok && db.ok, degraded: [], checks: { gateway, database: db } };
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
