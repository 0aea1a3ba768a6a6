// Discord's sharding rules as pure functions, shared by the bot, its shard manager and the guild
// export command. The local Discord states the formula on its side (test/util/shards.test.ts).
// https://discord.com/developers/docs/events/gateway#sharding

/** The shard that receives a guild's events: (guild_id >> 22) % shard_count. */
export function shardOf(guildId: string, shardCount: number): number {
  return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
}

/**
 * Parses a list of shard ids such as `0,1,4-7` (order kept, duplicates removed). Returns an
 * explanation instead when it is not one (a parser returns a result).
 */
export function parseShardIds(text: string): { ok: true; ids: number[] } | { ok: false; problem: string } {
  const ids: number[] = [];
  for (const part of text.split(',').map((p) => p.trim())) {
    const range = /^(\d+)(?:\s*-\s*(\d+))?$/.exec(part);
    if (!range) return { ok: false, problem: `"${part}" is not a shard id or a range like 0-3` };
    const from = Number(range[1]);
    const to = range[2] === undefined ? from : Number(range[2]);
    if (to < from) return { ok: false, problem: `the range ${part} runs backwards` };
    if (to - from > 100_000) return { ok: false, problem: `the range ${part} is too large` };
    for (let id = from; id <= to; id++) if (!ids.includes(id)) ids.push(id);
  }
  return ids.length > 0 ? { ok: true, ids } : { ok: false, problem: 'names no shard' };
}

/** What is wrong with running `ids` out of `count` shards in `processes` processes, or undefined. */
export function shardPlanProblem(plan: {
  count: number;
  ids: readonly number[];
  processes: number;
}): { variable: string; problem: string } | undefined {
  const outside = plan.ids.filter((id) => id >= plan.count);
  if (outside.length > 0)
    return {
      variable: 'SHARD_IDS',
      problem: `names shard ${outside.join(', ')}, but SHARD_COUNT is ${plan.count} (ids run from 0 to ${plan.count - 1})`,
    };
  if (plan.processes > plan.ids.length) {
    return {
      variable: 'SHARD_PROCESSES',
      problem: `is ${plan.processes}, more than the ${plan.ids.length} shard(s) this host runs; each process needs at least one shard`,
    };
  }
  return undefined;
}

/**
 * Splits a host's shards over its processes: consecutive ids, as even as possible, the first
 * processes taking one more when they do not divide evenly.
 */
export function splitShards(ids: readonly number[], processes: number): number[][] {
  const groups: number[][] = [];
  let start = 0;
  for (let p = 0; p < processes; p++) {
    const size = Math.floor(ids.length / processes) + (p < ids.length % processes ? 1 : 0);
    groups.push(ids.slice(start, start + size));
    start += size;
  }
  return groups;
}
