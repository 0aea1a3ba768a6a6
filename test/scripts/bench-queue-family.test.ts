import { describe, expect, it } from 'vitest';
import { FAMILIES, familyMember, peakLoad } from '../../scripts/bench-queue-family.ts';
import { heldOutMember } from '../../scripts/bench-queue-heldout.ts';
import { judgeFamily, tenthPercentile, type Report } from '../../scripts/bench-queue-report.ts';
import { ServiceModel, VirtualClock } from '../../scripts/bench-queue-sim.ts';
import { emptyOutcome, needlessDrops, orderChanges } from '../../scripts/bench-queue-stats.ts';
import { asRead, type TraceLine } from '../../scripts/bench-queue-traces.ts';
import { batchRules } from '../../src/speech/queue/batching/merging.ts';

// The family bench's own measuring sticks: traces drawn from parameters, the 10th percentile, the
// lines dropped for nothing, order changes, and the virtual clock and service model the fast runs
// use. A wrong one would flatter the scheduler.

const RULES = batchRules({});
const minutes = (lines: readonly TraceLine[]) => (lines.at(-1)!.at_ms - lines[0]!.at_ms) / 60_000;

describe('families', () => {
  it.each(FAMILIES)(
    'GIVEN a seed THEN the %s member is the same every time, another seed another one; the held-out generator another still',
    (family) => {
      const a = familyMember(family, 3, RULES);
      expect(familyMember(family, 3, RULES)).toEqual(a);
      expect(familyMember(family, 4, RULES).lines).not.toEqual(a.lines);
      const held = heldOutMember(family, 3, RULES);
      expect(held.lines.map((l) => l.text)).not.toEqual(a.lines.map((l) => l.text));
      expect(asRead(held.lines).length).toBeGreaterThan(20);
    },
  );

  it('GIVEN 20 overload members THEN their parameters span the stated ranges and what they offer follows the drawn load', () => {
    const members = Array.from({ length: 20 }, (_, i) => familyMember('overload', i + 1, RULES));
    for (const m of members) {
      expect(m.params.servers).toBeGreaterThanOrEqual(10);
      expect(m.params.servers).toBeLessThanOrEqual(40);
      expect(m.params.load).toBeGreaterThanOrEqual(1.5);
      expect(m.params.load).toBeLessThanOrEqual(4);
      expect(m.params.ownVoice).toBeLessThanOrEqual(0.5);
      expect(m.params.second).toBeLessThanOrEqual(0.4);
      // Messages a minute against 30 requests a minute: the drawn load, give or take what chance does.
      const offered = m.lines.length / minutes(m.lines) / 30;
      expect(offered).toBeGreaterThan(m.params.load! * 0.6);
      expect(offered).toBeLessThan(m.params.load! * 1.4);
    }
    // Members with voices of their own and a second language, and some with a slow service.
    expect(members.some((m) => new Set(m.lines.filter((l) => l.guild === 'g01').map((l) => l.voice)).size > 1)).toBe(true);
    expect(members.some((m) => m.lines.some((l) => l.lang === 'en') && m.lines.some((l) => l.lang === 'ja'))).toBe(true);
    expect(members.filter((m) => m.latencyMs >= 1_000).length).toBeGreaterThan(0);
  });

  it('GIVEN staggered members THEN the busiest minute needs what was drawn of the budget: no more', () => {
    for (let seed = 1; seed <= 5; seed++) {
      const m = familyMember('staggered', seed, RULES);
      expect(peakLoad(m.lines, RULES)).toBeLessThanOrEqual(m.params.load! + 1e-9);
      expect(peakLoad(m.lines, RULES)).toBeGreaterThan(m.params.load! - 0.1);
    }
  });

  it('GIVEN busy members THEN one server writing 30 to 70 lines a minute', () => {
    const m = familyMember('busy', 2, RULES);
    expect(new Set(m.lines.map((l) => l.guild))).toEqual(new Set(['g01']));
    expect(m.lines.length / minutes(m.lines)).toBeGreaterThan(30 * 0.7);
    expect(m.lines.length / minutes(m.lines)).toBeLessThan(70 * 1.3);
  });
});

describe('judged at the 10th percentile', () => {
  it('GIVEN 20 members THEN the second worst is judged (the worst one alone does not fail a family); counts that must be zero, on every member', () => {
    const xs = Array.from({ length: 20 }, (_, i) => 0.4 + i * 0.03);
    expect(tenthPercentile(xs, true)).toBeCloseTo(0.43);
    expect(tenthPercentile(xs, false)).toBeCloseTo(0.94);
    const reports = xs.map((x) => ({ scheduler: { heard_within: { '20': x }, http_429: x > 0.9 ? 1 : 0 } }) as unknown as Report);
    const heard = { label: 'h', value: (r: Report) => r.scheduler.heard_within['20'], higher: true, threshold: 0.43 };
    expect(judgeFamily(heard, reports).pass).toBe(true);
    expect(judgeFamily({ ...heard, threshold: 0.44 }, reports).pass).toBe(false);
    const zero = { label: 'z', value: (r: Report) => r.scheduler.http_429, higher: false, threshold: 0, everyMember: true };
    expect(judgeFamily(zero, reports)).toMatchObject({ pass: false, worst: 1, p10: 1 });
  });
});

describe('lines dropped for nothing, and order changes', () => {
  const lines = (ats: number[]) =>
    asRead(
      ats.map((at, i) => ({
        at_ms: at,
        guild: 'g',
        user: `u${i}`,
        name: '',
        voice: 'v',
        lang: 'ja' as const,
        kind: 'auto' as const,
        text: `line${i}`,
      })),
    );

  it('GIVEN the newest line dropped 0.4 s after it was written, and its channel silent with nothing waiting before the horizon ran out THEN it counts', () => {
    const trace = lines([0, 10_000]);
    const o = emptyOutcome();
    trace.forEach((m) => o.arrived.set(m.index, m.at_ms));
    o.waits.set(0, 0);
    o.plays.set(trace[0]!.audience, [[0, 15_000]]);
    o.droppedAt.set(1, 10_400);
    expect(needlessDrops(trace, o, 20_000, 1_000)).toEqual([1]);
  });

  it('GIVEN the oldest dropped so newer lines are heard sooner, the channel playing them until past its horizon THEN it does not count', () => {
    const trace = lines([0, 1_000, 2_000]);
    const o = emptyOutcome();
    trace.forEach((m) => o.arrived.set(m.index, m.at_ms));
    o.droppedAt.set(0, 2_000);
    o.waits.set(1, 1_000);
    o.waits.set(2, 10_000);
    o.plays.set(trace[0]!.audience, [
      [2_000, 12_000],
      [12_000, 30_000],
    ]);
    expect(needlessDrops(trace, o, 20_000, 1_000)).toEqual([]);
  });

  it('GIVEN a line heard before one written 3 s earlier THEN one order change, of 3 s', () => {
    const trace = lines([0, 3_000, 4_000]);
    const o = emptyOutcome();
    trace.forEach((m) => o.arrived.set(m.index, m.at_ms));
    o.waits.set(0, 10_000);
    o.waits.set(1, 2_000);
    o.waits.set(2, 9_000);
    expect(orderChanges(trace, o)).toEqual({ count: 1, maxMs: 3_000 });
  });
});

describe('virtual time and the service model', () => {
  it('GIVEN sleeps of several lengths THEN they end in time order, time moving only while nothing else can run', async () => {
    const clock = new VirtualClock(0);
    const ended: Array<[string, number]> = [];
    for (const [name, ms] of [
      ['b', 2_000],
      ['a', 1_000],
      ['c', 2_000],
    ] as const)
      void clock.sleep(ms).then(() => ended.push([name, clock.now()]));
    let done = false;
    void clock.sleep(5_000).then(() => (done = true));
    await clock.run(() => done, 'sleeps');
    expect(ended).toEqual([
      ['a', 1_000],
      ['b', 2_000],
      ['c', 2_000],
    ]);
    expect(clock.now()).toBe(5_000);
  });

  it('GIVEN 31 requests within a minute THEN the last is refused with the wait until a slot frees; text already made is not charged again', async () => {
    const clock = new VirtualClock(0);
    const service = new ServiceModel(clock, () => 0);
    const req = (text: string) => ({ text, voice: 'ja-JP-Wavenet-B', speed: 1, pitch: 0 });
    let last: Awaited<ReturnType<ServiceModel['speak']>> | undefined;
    const all = (async () => {
      for (let i = 0; i < 30; i++) await service.speak(req(`あ${String(i % 29).padStart(2, '0')}`));
      last = await service.speak(req('い'));
    })();
    await clock.run(() => last !== undefined, 'requests');
    await all;
    expect(last).toEqual({ resetInMs: 60_000 });
    expect(service.http429).toBe(1);
    expect(service.charged).toBe(29 * 3);
  });
});
