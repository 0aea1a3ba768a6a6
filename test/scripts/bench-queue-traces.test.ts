import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { asRead, bound, playbackFloor, readTrace, scenarioTrace, SCENARIOS, type TraceLine } from '../../scripts/bench-queue-traces.ts';
import { SCHEDULER_DEFAULTS } from '../../src/speech/queue.ts';
import { batchRules } from '../../src/speech/queue-slot.ts';

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
      expect(read.length).toBeGreaterThan(100);
      expect(read.every((m, i) => i === 0 || m.at_ms >= read[i - 1]!.at_ms)).toBe(true);
    },
  );
});
