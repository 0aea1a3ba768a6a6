import { REST, Routes, type RESTOptions } from 'discord.js';
import { ConfigError, type Config } from '../config.ts';
import { shardPlanProblem, splitShards } from '../util/shards.ts';

/** What this host runs: the bot's total shard count, this host's ids, one group per process. */
export interface ShardPlan {
  count: number;
  ids: number[];
  groups: number[][];
}

/**
 * Discord's recommended shard count (GET /gateway/bot `shards`), through DISCORD_API_URL when set.
 * `agent` is the REST client's own, as every REST client of the bot's (src/discord/rest-agent.ts;
 * main.ts passes it, so ops does not reach up into src/discord).
 */
export async function recommendedShardCount(discord: Config['discord'], agent: NonNullable<RESTOptions['agent']>): Promise<number> {
  const rest = new REST({ agent, ...(discord.apiUrl ? { api: discord.apiUrl } : {}) }).setToken(discord.token);
  const answer = (await rest.get(Routes.gatewayBot())) as { shards?: unknown };
  if (typeof answer.shards !== 'number' || !Number.isInteger(answer.shards) || answer.shards < 1) {
    throw new Error('GET /gateway/bot answered without a shard count');
  }
  return answer.shards;
}

/**
 * The shards of this host, `auto` resolved by `recommended` (recommendedShardCount); undefined when SHARD_COUNT is unset (one shard, the
 * bot unsharded). Throws ConfigError when SHARD_IDS or SHARD_PROCESSES do not fit the count.
 */
export async function resolveShardPlan(config: Config, recommended: () => Promise<number>): Promise<ShardPlan | undefined> {
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
