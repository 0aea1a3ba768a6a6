import { describe, expect, it } from 'vitest';
import { decideGrant, grantOrder, hasSpare, nextGrantAt, type PaceRules } from '../../src/tts/limiter/pacing.ts';
import type { WindowSnapshot } from '../../src/tts/limiter/types.ts';

// Pacing and order of the shared budget as pure functions: GIVEN the
// window THEN when the next grant may go out, and to whom.

const RULES: PaceRules = { limit: 30, occupiedMs: 60_000, burst: 15, spare: 5 };
const at = (n: number, from = 0, step = 0) => Array.from({ length: n }, (_, i) => from + i * step);
const snapshot = (over: Partial<WindowSnapshot> = {}): WindowSnapshot => ({
  grants: [],
  blockedUntil: 0,
  others: [],
  lastGrant: new Map(),
  ...over,
});

describe('nextGrantAt', () => {
  it('GIVEN a window less than burst full THEN the grant goes out at once (a quiet bot never waits)', () => {
    expect(nextGrantAt([], 1_000, RULES)).toBe(1_000);
    expect(nextGrantAt(at(14, 0, 10), 1_000, RULES)).toBe(1_000);
  });

  it('GIVEN a window past burst THEN the free slots are spread until the oldest frees, not spent at once', () => {
    // 15 grants at 0..140 ms; the oldest frees at 60 000; 15 free slots, so 16 gaps from the latest (140).
    const next = nextGrantAt(at(15, 0, 10), 200, RULES);
    expect(next).toBeCloseTo(140 + (60_000 - 140) / 16, 6);
    // Unpaced, the whole window would be gone within the first second; paced, a late guild finds a slot later.
    expect(next).toBeGreaterThan(3_000);
  });

  it('GIVEN sustained demand THEN paced grants still reach the full rate: limit grants within one occupied window', () => {
    const times: number[] = [];
    let now = 0;
    while (times.length < 60) {
      const inWindow = times.filter((t) => t > now - RULES.occupiedMs);
      const next = nextGrantAt(inWindow, now, RULES);
      now = Math.max(now, next);
      times.push(now);
    }
    // Never more than `limit` in any window...
    for (const t of times) expect(times.filter((x) => x > t - RULES.occupiedMs && x <= t).length).toBeLessThanOrEqual(RULES.limit);
    // ...and the second window's 30 grants are done by the end of the second window (no slot left idle for long).
    expect(times[59]!).toBeLessThanOrEqual(2 * RULES.occupiedMs);
  });

  it('GIVEN a full window THEN nothing before the oldest grant leaves it', () => {
    expect(nextGrantAt(at(30, 100, 100), 5_000, RULES)).toBe(100 + 60_000);
  });

  it('GIVEN pacing off (burst = limit) THEN grants go out as fast as the window allows', () => {
    expect(nextGrantAt(at(29, 0, 1), 50, { ...RULES, burst: 30 })).toBe(50);
  });
});

describe('grantOrder', () => {
  it('GIVEN a guild never served and guilds served before THEN the new one goes first, then the least recently served', () => {
    const order = grantOrder(
      [
        { key: 'early', since: 0 },
        { key: 'late', since: 50_000 },
        { key: 'middle', since: 10_000 },
      ],
      new Map([
        ['early', 7],
        ['middle', 3],
      ]),
    );
    expect(order.map((d) => d.key)).toEqual(['late', 'middle', 'early']);
  });

  it('GIVEN guilds equally served THEN the one waiting longest first', () => {
    expect(
      grantOrder([
        { key: 'b', since: 20 },
        { key: 'a', since: 10 },
      ]).map((d) => d.key),
    ).toEqual(['a', 'b']);
  });

  it('GIVEN every waiter says what a grant buys THEN the most worth first, the turns between equals', () => {
    const waiting = [
      { key: 'stale', since: 0, worth: 0 },
      { key: 'two', since: 10, worth: 2 },
      { key: 'four-served', since: 20, worth: 4 },
      { key: 'four', since: 30, worth: 4 },
    ];
    // 'four-served' was served more recently than 'four': equal worth, so 'four' goes first.
    expect(grantOrder(waiting, new Map([['four-served', 3]])).map((d) => d.key)).toEqual(['four', 'four-served', 'two', 'stale']);
  });

  it('GIVEN one waiter of unknown worth (another process) THEN the turns decide as before', () => {
    const order = grantOrder(
      [
        { key: 'fresh', since: 10, worth: 5 },
        { key: 'elsewhere', since: 0 },
      ],
      new Map(),
    );
    expect(order.map((d) => d.key)).toEqual(['elsewhere', 'fresh']);
  });
});

describe('decideGrant', () => {
  it('GIVEN room in the window THEN the grant goes to the key whose turn it is', () => {
    const d = decideGrant(
      snapshot({ lastGrant: new Map([['g1', 5]]) }),
      [
        { key: 'g1', since: 0 },
        { key: 'g2', since: 100 },
      ],
      1_000,
      RULES,
      250,
    );
    expect(d).toEqual({ ok: true, key: 'g2' });
  });

  it("GIVEN another process's guild has the turn THEN this one holds back and looks again soon (pacing across processes)", () => {
    const s = snapshot({ others: [{ key: 'theirs', since: 500 }], lastGrant: new Map([['mine', 9]]) });
    expect(decideGrant(s, [{ key: 'mine', since: 0 }], 1_000, RULES, 250)).toEqual({ ok: false, retryInMs: 250 });
    // Once theirs was served (a later grant id), it is ours.
    const after = snapshot({
      others: [{ key: 'theirs', since: 500 }],
      lastGrant: new Map([
        ['mine', 9],
        ['theirs', 10],
      ]),
    });
    expect(decideGrant(after, [{ key: 'mine', since: 0 }], 1_000, RULES, 250)).toEqual({ ok: true, key: 'mine' });
  });

  it('GIVEN a block from the service THEN nothing until it ends, whoever waits', () => {
    expect(decideGrant(snapshot({ blockedUntil: 9_000 }), [{ key: 'g', since: 0 }], 1_000, RULES, 250)).toEqual({
      ok: false,
      retryInMs: 8_000,
    });
  });

  it('GIVEN a window being paced THEN the decision says when the next slot comes', () => {
    const grants = at(15, 0, 10).map((t) => ({ at: t, key: 'x' }));
    const d = decideGrant(snapshot({ grants }), [{ key: 'g', since: 0 }], 200, RULES, 250);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.retryInMs).toBe(Math.ceil(140 + (60_000 - 140) / 16 - 200));
  });
});

describe('hasSpare', () => {
  it('GIVEN a nearly empty window THEN a grant more than needed is to spare; not once it fills or while blocked', () => {
    expect(hasSpare({ grants: at(4).map((t) => ({ at: t, key: '' })), blockedUntil: 0 }, 10, RULES)).toBe(true);
    expect(hasSpare({ grants: at(5).map((t) => ({ at: t, key: '' })), blockedUntil: 0 }, 10, RULES)).toBe(false);
    expect(hasSpare({ grants: [], blockedUntil: 20 }, 10, RULES)).toBe(false);
  });
});
