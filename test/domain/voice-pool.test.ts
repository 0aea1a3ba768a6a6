import { describe, expect, it } from 'vitest';
import { firstPoolVoice, POOL_CALL_MAX, poolVoiceFor, sharePool } from '../../src/domain/voice-pool.ts';
import { effectiveVoice, effectiveVolume } from '../../src/domain/member-settings.ts';
import { GUILD_SETTINGS_DEFAULTS } from '../../src/domain/guild-settings.ts';

// Voices told apart: which of the server's pool voices a member without a voice of their own
// speaks with. Members are Discord snowflakes of one family (ids a server hands out in a row differ
// only in their last digits), as a real server's are.

const POOL = ['ja-JP-Wavenet-A', 'ja-JP-Wavenet-B', 'ja-JP-Wavenet-C', 'ja-JP-Wavenet-D', 'ja-JP-NanamiNeural'];
/** `n` snowflakes in a row from one base: the family the rule must spread. */
const family = (n: number, base = 1_234_567_890_123_450_000n) => Array.from({ length: n }, (_, i) => String(base + BigInt(i)));
/** A seeded shuffle (the order of a call's voice states is no order at all). */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('a member alone: their first voice of the pool', () => {
  it('GIVEN the same member and pool THEN the same voice, in whatever order the pool is listed', () => {
    for (const id of family(50)) {
      const voice = firstPoolVoice(POOL, id);
      expect(POOL).toContain(voice);
      expect(firstPoolVoice([...POOL].reverse(), id)).toBe(voice);
      expect(poolVoiceFor(POOL, id)).toBe(voice);
    }
  });

  it('GIVEN 1000 ids in a row THEN every voice of the pool is someone’s, none of them for much more than its share', () => {
    const counts = new Map<string, number>();
    for (const id of family(1000)) counts.set(firstPoolVoice(POOL, id)!, (counts.get(firstPoolVoice(POOL, id)!) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual([...POOL].sort());
    // 200 each on average; a fair draw stays well within ±60 (about 5 standard deviations).
    for (const [voice, n] of counts) {
      expect(n, voice).toBeGreaterThan(140);
      expect(n, voice).toBeLessThan(260);
    }
  });

  it('GIVEN a voice added to the pool THEN only members whose first voice it becomes change; removed, only those who had it', () => {
    const ids = family(500);
    const before = new Map(ids.map((id) => [id, firstPoolVoice(POOL, id)]));
    const grown = [...POOL, 'ja-JP-KeitaNeural'];
    for (const id of ids) {
      const now = firstPoolVoice(grown, id);
      if (now !== 'ja-JP-KeitaNeural') expect(now, id).toBe(before.get(id));
    }
    const shrunk = POOL.filter((v) => v !== 'ja-JP-Wavenet-C');
    for (const id of ids) if (before.get(id) !== 'ja-JP-Wavenet-C') expect(firstPoolVoice(shrunk, id), id).toBe(before.get(id));
  });

  it('GIVEN an empty pool THEN no pool voice: the server’s voice, as before there was a pool', () => {
    expect(poolVoiceFor([], '1')).toBeUndefined();
    expect(sharePool([], ['1', '2']).size).toBe(0);
    const user = { voice: null, speed: null, pitch: null, volume: null, adminVolume: null } as const;
    const guild = { ...GUILD_SETTINGS_DEFAULTS, guildId: 'g', updatedAt: null };
    expect(effectiveVoice(guild, { ...user, guildId: 'g', userId: '1', nickname: null, muted: false, updatedAt: null }).voice).toBe(
      GUILD_SETTINGS_DEFAULTS.voice,
    );
    expect(
      effectiveVoice(guild, { ...user, guildId: 'g', userId: '1', nickname: null, muted: false, updatedAt: null }, 'ja-JP-Wavenet-D').voice,
    ).toBe('ja-JP-Wavenet-D');
    // A voice of their own always wins over the pool.
    expect(
      effectiveVoice(
        guild,
        { ...user, voice: 'en-US-Wavenet-A', guildId: 'g', userId: '1', nickname: null, muted: false, updatedAt: null },
        'ja-JP-Wavenet-D',
      ).voice,
    ).toBe('en-US-Wavenet-A');
  });
});

describe('members in one call: different voices while there are enough', () => {
  it('GIVEN every call of up to 5 members from a family of 40 ids THEN all voices differ, whatever the order of the call', () => {
    const ids = family(40);
    for (let start = 0; start + 5 <= ids.length; start++) {
      for (let size = 2; size <= 5; size++) {
        const call = ids.slice(start, start + size);
        const given = sharePool(POOL, call);
        expect(new Set(given.values()).size, call.join(',')).toBe(size);
        expect(sharePool(POOL, shuffled(call, start * 7 + size))).toEqual(given);
        for (const id of call)
          expect(poolVoiceFor(POOL, id, { members: call.filter((m) => m !== id), taken: new Set() })).toBe(given.get(id));
      }
    }
  });

  it('GIVEN two members whose first voice is the same THEN one keeps it, the other gets another; alone again, each has their first', () => {
    const ids = family(200);
    const [a, b] = (() => {
      for (const x of ids) for (const y of ids) if (x < y && firstPoolVoice(POOL, x) === firstPoolVoice(POOL, y)) return [x, y];
      throw new Error('no two ids share a first voice');
    })();
    const first = firstPoolVoice(POOL, a)!;
    const given = sharePool(POOL, [a, b]);
    expect([given.get(a), given.get(b)].filter((v) => v === first)).toHaveLength(1);
    expect(given.get(a)).not.toBe(given.get(b));
    expect(poolVoiceFor(POOL, a)).toBe(first);
    expect(poolVoiceFor(POOL, b)).toBe(first);
  });

  it('GIVEN voices members in the call chose for themselves THEN the others get the rest first', () => {
    const call = family(3);
    const taken = new Set(['ja-JP-Wavenet-A', 'ja-JP-Wavenet-B']);
    const given = sharePool(POOL, call, taken);
    expect([...given.values()].sort()).toEqual(['ja-JP-NanamiNeural', 'ja-JP-Wavenet-C', 'ja-JP-Wavenet-D']);
  });

  it('GIVEN more members than voices THEN every voice is used, and the members left over speak with their first voice', () => {
    const call = family(8);
    const given = sharePool(POOL, call);
    expect(new Set(given.values())).toEqual(new Set(POOL));
    // One member per voice was handed it; everyone else holds their own first voice.
    for (const voice of POOL) {
      const holders = call.filter((id) => given.get(id) === voice);
      expect(holders.filter((id) => firstPoolVoice(POOL, id) !== voice).length, voice).toBeLessThanOrEqual(1);
    }
    expect(call.filter((id) => given.get(id) !== firstPoolVoice(POOL, id)).length).toBeLessThanOrEqual(POOL.length);
  });

  it(`GIVEN a call bigger than ${POOL_CALL_MAX} (a stage) THEN each member speaks with their first voice`, () => {
    const call = family(POOL_CALL_MAX + 1);
    const given = sharePool(POOL, call);
    for (const id of call) expect(given.get(id)).toBe(firstPoolVoice(POOL, id));
  });
});

describe('volume', () => {
  it.each([
    [null, null, 1],
    [0.5, null, 0.5],
    [0.5, 1.5, 1.5],
    [null, 0, 0],
  ] as const)('GIVEN own %s and admin %s THEN played at %s (an admin’s volume wins)', (volume, adminVolume, expected) => {
    expect(effectiveVolume({ volume, adminVolume })).toBe(expected);
  });
});
