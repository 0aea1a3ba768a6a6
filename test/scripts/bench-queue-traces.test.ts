import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { targets, wordStarts, type ModeStats, type Report } from '../../scripts/bench-queue-report.ts';
import { asRead, bound, playbackFloor, readTrace, scenarioTrace, SCENARIOS, type TraceLine } from '../../scripts/bench-queue-traces.ts';
import { SCHEDULER_DEFAULTS } from '../../src/speech/queue/options.ts';
import { batchRules } from '../../src/speech/queue/batching/merging.ts';

// The benchmark's own measuring sticks: the trace format,
// the text as the bot reads it, and the offline bound. A wrong bound would flatter the scheduler.

const RULES = batchRules({});
const line = (at_ms: number, over: Partial<TraceLine> = {}): TraceLine => ({
  at_ms,
  guild: 'g01',
  user: 'u01',
  name: 'たろう',
  voice: 'ja-JP-Wavenet-B',
  lang: 'ja',
  kind: 'auto',
  text: `メッセージ${at_ms}`,
  ...over,
});

describe('bench:queue traces', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('GIVEN a trace file with a bad line THEN the error names the file and the line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trace-'));
    dirs.push(dir);
    const file = join(dir, 't.jsonl');
    writeFileSync(file, `${JSON.stringify(line(0))}\n{"at_ms": 5, "guild": "g01"}\n`);
    expect(() => readTrace(file)).toThrow(`${file}:2:`);
  });

  it("GIVEN one author's messages in a row THEN the name is read before the first only, as the bot reads it; /say never", () => {
    const read = asRead([line(0), line(1_000), line(2_000, { user: 'u02', name: 'はなこ' }), line(3_000, { kind: 'say' })]);
    expect(read.map((m) => m.prefix)).toEqual([expect.stringContaining('たろう'), '', expect.stringContaining('はなこ'), '']);
  });

  it('GIVEN 7 same-voice messages in one guild within the cut THEN the bound needs 2 requests; another voice in between breaks the run', () => {
    const seven = asRead(Array.from({ length: 7 }, (_, i) => line(i * 1_000, { name: '' })));
    expect(bound(seven, RULES).requests).toBe(2);
    const mixed = asRead(
      Array.from({ length: 7 }, (_, i) => line(i * 1_000, { name: '', voice: i === 3 ? 'ja-JP-Wavenet-D' : 'ja-JP-Wavenet-B' })),
    );
    expect(bound(mixed, RULES).requests).toBe(3);
    expect(RULES.maxMessages).toBe(SCHEDULER_DEFAULTS.coalesce.maxMessages);
  });

  it('GIVEN two messages at once in a guild THEN the playback floor makes the second wait for the first to be read', () => {
    const waits = playbackFloor(asRead([line(0, { name: '' }), line(0, { name: '', text: 'つぎ' })]));
    expect(waits[0]).toBe(0);
    expect(waits[1]).toBeGreaterThan(500);
  });

  it.each(SCENARIOS)(
    'GIVEN seed 1 THEN the %s scenario is the same trace every time, another seed another one, replayed in time order',
    (scenario) => {
      const a = scenarioTrace(scenario, 1);
      expect(scenarioTrace(scenario, 1)).toEqual(a);
      expect(scenarioTrace(scenario, 2)).not.toEqual(a);
      const read = asRead(a);
      expect(read.length).toBeGreaterThan(scenario === 'light' ? 5 : 100);
      expect(read.every((m, i) => i === 0 || m.at_ms >= read[i - 1]!.at_ms)).toBe(true);
    },
  );

  it('GIVEN one author in two voice channels of one guild THEN the bound never merges across them', () => {
    const two = asRead(Array.from({ length: 4 }, (_, i) => line(i * 1_000, { name: '', channel: i % 2 ? 'v2' : 'v1' })));
    expect(new Set(two.map((m) => m.audience))).toEqual(new Set(['g01/v1', 'g01/v2']));
    expect(bound(two, RULES).requests).toBe(2);
  });

  it('GIVEN the busy and voices shapes THEN busy is one guild of 8 members at 40-60 a minute, voices one guild with two busy channels', () => {
    const busy = asRead(scenarioTrace('busy', 7));
    const perMinute = busy.length / (busy.at(-1)!.at_ms / 60_000);
    expect(new Set(busy.map((m) => m.guild)).size).toBe(1);
    expect(new Set(busy.map((m) => m.user)).size).toBe(8);
    expect(perMinute).toBeGreaterThanOrEqual(40);
    expect(perMinute).toBeLessThanOrEqual(60);
    const voices = asRead(scenarioTrace('voices', 7));
    const g01 = voices.filter((m) => m.guild === 'g01');
    expect(new Set(g01.map((m) => m.audience))).toEqual(new Set(['g01/v1', 'g01/v2']));
    const count = (a: string) => voices.filter((m) => m.audience === a).length;
    // Each of g01's channels is about as busy as a busy server of its own, and far busier than the quiet ones.
    expect(count('g01/v2')).toBeGreaterThan(count('g02/voice') / 2);
    const quiet = Array.from({ length: 14 }, (_, i) => count(`g${i + 6}/voice`.replace(/^g(\d)\//, 'g0$1/')));
    expect(count('g01/v2')).toBeGreaterThan((2 * quiet.reduce((a, b) => a + b, 0)) / quiet.length);
  });

  it("GIVEN a delivery of clips, one of them merged THEN each message's words start at its clip, shares of a merged clip by characters", () => {
    const u = (text: string) => ({ text }) as never;
    // One merged sound: by characters (10 + 30 over 2,000 ms).
    expect(wordStarts({ items: [u('a'.repeat(10)), u('b'.repeat(30))] }, 2_000)).toEqual([0, 500]);
    // A name clip of the first, then one clip carrying the second and third.
    expect(wordStarts({ items: [u('ab'), u('cc'), u('dddddd')], starts: [0, 400, 400] }, 1_200)).toEqual([0, 400, 600]);
  });

  it('GIVEN figures of each shape THEN the targets print as the issue states them and fail where they are not met', () => {
    const mode = (over: Partial<ModeStats> = {}): ModeStats => ({
      requests: 30,
      http_429: 0,
      spoken: 90,
      dropped_stale: 10,
      dropped_at_speaking: 0,
      dropped_needlessly: 0,
      refused: 0,
      failed: 0,
      requests_per_spoken: 0.33,
      spoken_fraction: 0.9,
      wait_p50_s: 5,
      wait_p95_s: 15,
      heard_within: { '5': 0.5, '10': 0.6, '20': 0.8, '30': 0.9 },
      heard_max_s: 19,
      heard_max_auto_s: 19,
      jain_spoken_fraction: 0.97,
      jain_spoken_fraction_audience: 0.97,
      jain_mean_wait: 0.9,
      merged: 60,
      order_changes: 0,
      order_change_max_s: 0,
      chars_paid: 1_000,
      chars_full_price: 1_100,
      cpu_s: 1,
      ...over,
    });
    const report = (scheduler: ModeStats, naive = mode({ http_429: 50, spoken: 40 })): Report => ({
      trace: 't',
      messages: 100,
      scale: 10,
      first: 'naive',
      bound: { requests_per_spoken: 0.3 },
      playback_floor: { wait_p95_s: 1 },
      scheduler,
      naive,
    });
    const failed = (r: Report, shape: string) =>
      targets(r, shape)
        .filter(([, ok]) => !ok)
        .map(([l]) => l);
    expect(failed(report(mode()), 'overload')).toEqual([]);
    expect(failed(report(mode({ heard_within: { '5': 0, '10': 0, '20': 0.54, '30': 1 }, cpu_s: 1.6 })), 'overload')).toEqual([
      'overload: heard_within["20"] >= 0.55 (0.5400)',
      "overload: cpu_s <= 1.5 x naive's (1.60 <= 1.50)",
    ]);
    // Judged on the measurement, not on its rounding: 216 of 393 heard is under 0.55 though it shows as 0.550.
    expect(failed(report(mode({ heard_within: { '5': 0, '10': 0, '20': 216 / 393, '30': 1 } })), 'overload')).toEqual([
      'overload: heard_within["20"] >= 0.55 (0.5496)',
    ]);
    // The price of a merge (a pause per merged message) is accepted, and not one character more.
    expect(failed(report(mode({ heard_max_auto_s: 20.5, chars_paid: 1_160 })), 'busy')).toEqual([
      'busy: no auto-read message heard later than 20 s by default (longest 20.50 s)',
    ]);
    expect(failed(report(mode({ chars_paid: 1_161, dropped_needlessly: 1 })), 'busy')).toEqual([
      'everywhere: characters paid <= full price + messages merged (1161 <= 1100 + 60)',
      'everywhere: no line dropped while it could still be heard in time (1)',
    ]);
    expect(failed(report(mode({ heard_within: { '5': 1, '10': 1, '20': 0.79, '30': 1 } })), 'staggered')).toEqual([
      'staggered: heard_within["20"] >= 0.80 (0.7900)',
    ]);
    const light = { ...report(mode({ wait_p95_s: 0.4 }), mode({ wait_p95_s: 0.34 })), scale: 1 };
    expect(failed(light, 'light')).toEqual(["light, at --scale 1: p95 wait <= naive's + 0.05 s (0.400 <= 0.390)"]);
    expect(failed({ ...light, scale: 10 }, 'light')).toEqual([expect.stringContaining('not run at --scale 1')]);
  });
});
