import { REST, Routes } from 'discord.js';
import { ConfigError, type Config } from '../config.ts';
import { discordRestAgent } from '../discord/rest-agent.ts';
import { shardPlanProblem, splitShards } from '../util/shards.ts';

/** What this host runs (issue 14 §2): the bot's total shard count, this host's ids, one group per process. */
export interface ShardPlan {
  count: number;
  ids: number[];
  groups: number[][];
}

/** Discord's recommended shard count (GET /gateway/bot `shards`), through DISCORD_API_URL when set. */
export async function recommendedShardCount(discord: Config['discord']): Promise<number> {
  // Its own agent, as every REST client of the bot's (src/discord/rest-agent.ts, issue 9 §1).
  const rest = new REST({ agent: discordRestAgent(), ...(discord.apiUrl ? { api: discord.apiUrl } : {}) }).setToken(discord.token);
  const answer = (await rest.get(Routes.gatewayBot())) as { shards?: unknown };
  if (typeof answer.shards !== 'number' || !Number.isInteger(answer.shards) || answer.shards < 1) {
    throw new Error('GET /gateway/bot answered without a shard count');
  }
  return answer.shards;
}

/**
 * The shards of this host, `auto` resolved; undefined when SHARD_COUNT is unset (one shard, as
 * before sharding). Throws ConfigError when SHARD_IDS or SHARD_PROCESSES do not fit the count.
 */
export async function resolveShardPlan(config: Config, recommended = () => recommendedShardCount(config.discord)): Promise<ShardPlan | undefined> {
  const { count: configured, ids: chosen, processes } = config.sharding;
  if (configured === undefined) return undefined;
  const count = configured === 'auto' ? await recommended() : configured;
  const ids = chosen ?? Array.from({ length: count }, (_, i) => i);
  const problem = shardPlanProblem({ count, ids, processes });
  if (problem) {
    const why = configured === 'auto' ? ` (SHARD_COUNT=auto: Discord recommends ${count})` : '';
    throw new ConfigError({ issues: [{ variable: problem.variable, problem: problem.problem + why }] });
  }
  return { count, ids, groups: splitShards(ids, processes) };
}
