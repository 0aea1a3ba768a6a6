// The order the suite's files start in (test/support/sequencer.ts) changes how fast `npm test` runs,
// never what it runs: every file exactly once, whatever durations were recorded.
import { describe, expect, it } from 'vitest';
import { expectedSeconds, interleave } from './support/sequencer.ts';

/** Plays `order` on `workers` workers: when the last file ends. */
function makespan(order: string[], seconds: Record<string, number>, workers: number): number {
  const ends: number[] = [];
  let now = 0;
  for (const file of order) {
    if (ends.length === workers) {
      ends.sort((a, b) => a - b);
      now = ends.shift()!;
    }
    ends.push(now + seconds[file]!);
  }
  return Math.max(...ends);
}

/** Plays `order` on `workers` workers; how many long (>= 5 s) files ran at once, at most, before the last one started. */
function mostLongAtOnceWhileStarting(order: string[], seconds: Record<string, number>, workers: number): number {
  const running: { end: number; long: boolean }[] = [];
  let now = 0;
  let most = 0;
  for (const file of order) {
    if (running.length === workers) {
      running.sort((a, b) => a.end - b.end);
      now = running.shift()!.end;
    }
    running.push({ end: now + seconds[file]!, long: seconds[file]! >= 5 });
    most = Math.max(most, running.filter((r) => r.long).length);
  }
  return most;
}

describe('the order test files start in', () => {
  // Eight files that wait on real time and forty short ones, as in the suite.
  const seconds: Record<string, number> = {};
  for (let i = 0; i < 8; i++) seconds[`long-${i}`] = 30 - 2 * i;
  for (let i = 0; i < 40; i++) seconds[`short-${i}`] = 0.2 + (i % 7) * 0.5;
  const files = Object.entries(seconds).map(([item, s]) => ({ item, seconds: s }));

  it('starts every file exactly once', () => {
    const order = interleave(files, 6);
    expect(order).toHaveLength(files.length);
    expect([...order].sort()).toEqual(Object.keys(seconds).sort());
  });

  it('keeps short files running beside the long ones instead of starting every long file at once', () => {
    const order = interleave(files, 6);
    // Longest first, as vitest orders them, puts six long files on six workers.
    const longestFirst = [...files].sort((a, b) => b.seconds - a.seconds).map((f) => f.item);
    expect(mostLongAtOnceWhileStarting(longestFirst, seconds, 6)).toBe(6);
    expect(mostLongAtOnceWhileStarting(order, seconds, 6)).toBeLessThan(6);
    // The longest file still starts first: it cannot end the run late.
    expect(order[0]).toBe('long-0');
  });

  it('leaves no long file to end the run alone, and ends on the shortest files', () => {
    // Five long files and a hundred short ones of one or two seconds: three slots for the long ones.
    const mixed: Record<string, number> = {};
    for (let i = 0; i < 5; i++) mixed[`long-${i}`] = 20;
    for (let i = 0; i < 100; i++) mixed[`short-${i}`] = i % 2 === 0 ? 1.5 : 0.5;
    const order = interleave(
      Object.entries(mixed).map(([item, s]) => ({ item, seconds: s })),
      6,
    );
    // The work spread over every worker (about 33 s), where waiting for free slots ends at 40 s.
    const ideal = Object.values(mixed).reduce((a, b) => a + b, 0) / 6;
    expect(makespan(order, mixed, 6)).toBeLessThanOrEqual(ideal + 1.5);
    expect(order.slice(-10).every((f) => mixed[f] === 0.5)).toBe(true);
  });

  it('expects a file not recorded yet to take as long as the longest recorded file of its folder', () => {
    const recorded = { 'test/bot/a.test.ts': 30, 'test/bot/b.test.ts': 2, 'test/speech/c.test.ts': 0.4 };
    expect(expectedSeconds('test/bot/b.test.ts', recorded)).toBe(2);
    // A new whole-bot story starts among the first; a new rule's file among the short ones.
    expect(expectedSeconds('test/bot/new-story.test.ts', recorded)).toBe(30);
    expect(expectedSeconds('test/speech/new-rule.test.ts', recorded)).toBe(0.4);
    expect(expectedSeconds('test/brand-new-folder/x.test.ts', recorded)).toBe(1);
  });

  it('with nothing recorded, keeps the order it was given', () => {
    const unknown = ['c', 'a', 'b'].map((item) => ({ item, seconds: 1 }));
    expect(interleave(unknown, 6)).toEqual(['c', 'a', 'b']);
  });
});
