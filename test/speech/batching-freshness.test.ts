import { describe, expect, it } from 'vitest';
import { catchUp, cutAtSpeaking, keepUp, lullLookAgain, MAX_SPEED_UP, withinCut } from '../../src/speech/queue/batching/keeping-up.ts';
import { nextBatch } from '../../src/speech/queue/batching/merging.ts';
import { NOW, RULES, u } from '../support/batching.ts';

// Fresh speech as pure rules: how a busy voice channel keeps up (the cut tightening with the backlog,
// the speed-up, dropping the oldest), and the cut held at the moment
// each message's own words are heard.

const FRESH = { horizonMs: 20_000, speedUp: true };
const ago = (ms: number) => NOW - ms;

describe('keepUp', () => {
  it('GIVEN a backlog that can be heard within the horizon THEN the hard limit and the normal speed', () => {
    expect(keepUp(15_000, false, FRESH, 60_000)).toEqual({ cutMs: 60_000, speed: 1 });
  });

  it('GIVEN a backlog beyond the horizon THEN the cut is the horizon, the newest must be heard within a quarter of it, speech speeds up to 1.5x', () => {
    expect(keepUp(45_000, true, FRESH, 60_000)).toEqual({ cutMs: 20_000, speed: 1.25, catchUpMs: 5_000 });
    // Step by step (each time the oldest had to be dropped), never past 1.5x.
    expect(keepUp(45_000, true, FRESH, 60_000, 1.5).speed).toBe(MAX_SPEED_UP);
    expect(keepUp(45_000, true, FRESH, 60_000, 1.75).speed).toBe(1.5);
    expect(MAX_SPEED_UP).toBe(1.5);
    // Lately behind, caught up since: still tight.
    expect(keepUp(5_000, true, FRESH, 60_000)).toEqual({ cutMs: 20_000, speed: 1.25, catchUpMs: 5_000 });
  });

  it('GIVEN the admin turned speed-up off THEN never faster; GIVEN a horizon above the hard limit THEN the hard limit', () => {
    expect(keepUp(45_000, true, { ...FRESH, speedUp: false }, 60_000).speed).toBe(1);
    expect(keepUp(90_000, true, { horizonMs: 120_000, speedUp: true }, 60_000).cutMs).toBe(60_000);
  });
});

describe('catchUp', () => {
  it('GIVEN a backlog in which the newest would wait past the target THEN the oldest are dropped until it would not', () => {
    // 10 messages of 10 characters at 100 ms a character: 1 s each; the newest written just now.
    const pending = Array.from({ length: 10 }, (_, i) => u('あ'.repeat(10), { enqueuedAt: ago(9_000 - i * 1_000) }));
    // The newest would start after 9 s of the others: 5 must go for it to start within 4 s.
    expect(catchUp(pending, NOW, 100, 4_000, RULES)).toBe(5);
    expect(catchUp(pending, NOW, 100, 10_000, RULES)).toBe(0);
  });

  it('GIVEN an explicit request at the head THEN nothing is dropped past it (say and narrate are never cut)', () => {
    const pending = [u('読んで', { kind: 'say', enqueuedAt: ago(30_000) }), ...Array.from({ length: 5 }, () => u('あ'.repeat(50)))];
    expect(catchUp(pending, NOW, 100, 1_000, RULES)).toBe(0);
  });
});

describe('withinCut', () => {
  it('GIVEN a run read back to back THEN it ends before the first auto message whose words would start past its cut', () => {
    // Each message 20 characters at 100 ms: 2 s (and the separator's 0.1 s) each, from NOW.
    const run = [u('あ'.repeat(20), { enqueuedAt: ago(15_000) }), u('い'.repeat(20), { enqueuedAt: ago(17_000) }), u('う'.repeat(20))];
    // The second would start at 2.1 s: 19.1 s after it was written, within a 20 s cut, not within 18 s.
    expect(withinCut(run, NOW, 100, 20_000, RULES)).toBe(3);
    expect(withinCut(run, NOW, 100, 18_000, RULES)).toBe(1);
  });
});

describe('lullLookAgain', () => {
  // A line set aside, read in a lull: a request of 2 s expected latency, so its words start 2 s from NOW.
  const at = NOW + 2_000;

  it('GIVEN a line whose words would start well inside the cut THEN it is read now', () => {
    expect(lullLookAgain(u('あ', { enqueuedAt: ago(17_000) }), at, NOW, 20_000, 500)).toBeUndefined();
  });

  it('GIVEN a line whose words would start within the margin of the cut THEN it is not paid for, and looked at again once it is past the cut', () => {
    // Its words would start 19.7 s after it was written: a request 0.3 s slower than expected and it is dropped unheard.
    const line = u('あ', { enqueuedAt: ago(17_700) });
    const again = lullLookAgain(line, at, NOW, 20_000, 500);
    // Not dropped sooner: looked at again when even a request read next would be heard past the 20 s cut.
    expect(again).toBe(line.enqueuedAt + 20_000 - 2_000 + 1);
    expect(again! + 2_000 - line.enqueuedAt).toBeGreaterThan(20_000);
  });

  it('GIVEN an explicit request THEN it is always read (say and narrate are never cut)', () => {
    expect(lullLookAgain(u('読んで', { kind: 'say', enqueuedAt: ago(19_900) }), at, NOW, 20_000, 500)).toBeUndefined();
  });
});

describe('the cut held when words are heard', () => {
  it('GIVEN one merged sound THEN a message late in it is judged where its own words start, and the sound goes with it', () => {
    const first = u('あ'.repeat(10), { enqueuedAt: ago(10_000) });
    const last = u('い'.repeat(30), { enqueuedAt: ago(18_000) });
    // 8 s of audio: the last's words start 2 s in, 20 s after it was written.
    const clip = { durationMs: 8_000, items: [first, last] };
    expect(cutAtSpeaking([clip], NOW, 20_000).dropped).toEqual([]);
    expect(new Set(cutAtSpeaking([clip], NOW, 19_000).dropped)).toEqual(new Set([first, last]));
    // Judged at the clip's start, as before, it would have passed.
    expect(NOW - last.enqueuedAt).toBeLessThanOrEqual(19_000);
  });

  it('GIVEN a cut tightened to the horizon THEN nextBatch drops at the head what would be heard past it', () => {
    const pending = [u('古い', { enqueuedAt: ago(25_000) }), u('新しい')];
    expect(nextBatch(pending, { now: NOW, playing: false, cutMs: 20_000 }, RULES)).toMatchObject({ stale: 1, take: 1 });
    expect(nextBatch(pending, { now: NOW, playing: false }, RULES)).toMatchObject({ stale: 0, take: 2 });
  });
});
