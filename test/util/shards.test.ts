/**
 * Discord's sharding rules as the bot states them (src/util/shards.ts), and the protocol facts the
 * bot and the local Discord each state on their side (the shard formula, the voice frame format):
 * both sides must agree.
 */
import { describe, expect, it } from 'vitest';
import * as localDiscord from '@yomiage/local-discord';
import { parseShardIds, shardOf, shardPlanProblem, splitShards } from '../../src/util/shards.ts';
import * as voiceFormat from '../../src/util/voice-format.ts';

describe('the shard rules (pure)', () => {
  it('GIVEN a guild id THEN its shard is (id >> 22) % count, as the local Discord routes it', () => {
    // 175928847299117063 is Discord's documentation example: (id >> 22) = 41944705796.
    expect(shardOf('175928847299117063', 16)).toBe(41944705796 % 16);
    for (const id of [
      '175928847299117063',
      localDiscord.DEFAULT_IDS.guild,
      ...[0, 1, 2].map((s) => localDiscord.guildOnShard(s, 3, 5).id),
    ]) {
      for (const count of [1, 2, 3, 16]) expect(shardOf(id, count)).toBe(localDiscord.shardOf(id, count));
    }
  });

  it('GIVEN SHARD_IDS text THEN ids and ranges, or what is wrong', () => {
    expect(parseShardIds('0,2-4, 9')).toEqual({ ok: true, ids: [0, 2, 3, 4, 9] });
    expect(parseShardIds('3-1')).toMatchObject({ ok: false, problem: expect.stringContaining('backwards') });
    expect(parseShardIds('one')).toMatchObject({ ok: false, problem: expect.stringContaining('"one"') });
  });

  it('GIVEN shards and processes THEN consecutive, even groups; impossible plans are named', () => {
    expect(splitShards([0, 1, 2, 3, 4], 2)).toEqual([
      [0, 1, 2],
      [3, 4],
    ]);
    expect(splitShards([4, 5], 2)).toEqual([[4], [5]]);
    expect(shardPlanProblem({ count: 4, ids: [3, 4], processes: 1 })).toMatchObject({ variable: 'SHARD_IDS' });
    expect(shardPlanProblem({ count: 4, ids: [0, 1], processes: 3 })).toMatchObject({ variable: 'SHARD_PROCESSES' });
    expect(shardPlanProblem({ count: 4, ids: [0, 1], processes: 2 })).toBeUndefined();
  });
});

describe('the voice frame format', () => {
  it('the bot and the local Discord state the same one', () => {
    for (const name of ['VOICE_SAMPLE_RATE', 'VOICE_CHANNELS', 'FRAME_MS', 'FRAME_SAMPLES'] as const)
      expect(voiceFormat[name]).toBe(localDiscord[name]);
  });
});
