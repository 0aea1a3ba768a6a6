import { Status, type Client } from 'discord.js';
import type { Db } from '../db/database.ts';
import { writeTx } from '../db/write.ts';
import type { MediaSupport } from '../util/ffmpeg.ts';
import type { BotMetrics } from './metrics.ts';
import type { Check, OpsEndpoints, Readiness } from './ops-server.ts';

// Issue 14 §1: a bot process is ready when every gateway shard it runs is ready and its database
// takes a write. ffmpeg missing is "degraded" (speech is attached instead of played), not unready:
// restarting the process would not bring ffmpeg back, and the bot still does its job.

/** What a bot process's readiness reads. */
export interface BotHealthDeps {
  client: Pick<Client, 'ws'>;
  db: Db;
  media: MediaSupport;
}

/** Whether this process is ready to serve, check by check. */
export async function botReadiness(deps: BotHealthDeps): Promise<Readiness> {
  const shards = [...deps.client.ws.shards.values()];
  const down = shards.filter((s) => s.status !== Status.Ready).map((s) => s.id);
  const gateway: Check = shards.length > 0 && down.length === 0 ? { ok: true } : { ok: false, detail: shards.length === 0 ? 'not_connected' : `shards_not_ready:${down.join(',')}` };
  const database = await databaseWritable(deps.db);
  const ffmpeg: Check = deps.media.transcode || deps.media.playMp3 ? { ok: true } : { ok: false, detail: 'ffmpeg_missing' };
  return { ready: gateway.ok && database.ok, degraded: ffmpeg.ok ? [] : ['ffmpeg'], checks: { gateway, database, ffmpeg } };
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
export function botEndpoints(metrics: BotMetrics, deps: BotHealthDeps): OpsEndpoints {
  return {
    metrics: async () => ({ contentType: metrics.registry.contentType, body: await metrics.text() }),
    readiness: () => botReadiness(deps),
  };
}
