import { describe, expect, it } from 'vitest';
import { WorkerLiveness } from '../../src/voice/liveness.ts';

// When a voice worker counts as hung, as pure rules: the pool ticks every 250 ms; times in ms.
const policy = { pingEveryMs: 250, hangAfterMs: 1_500, startupGraceMs: 30_000 };

/** Ticks from `from` to `to` every 250 ms; the first 'hung' verdict's time, or undefined. */
function hungAt(l: WorkerLiveness, from: number, to: number, answerAt: (t: number) => boolean = () => false): number | undefined {
  for (let t = from; t <= to; t += 250) {
    if (l.tick(t) === 'hung') return t;
    if (answerAt(t)) l.answered();
  }
  return undefined;
}

describe('a voice worker judged hung (WorkerLiveness)', () => {
  it('GIVEN a worker that answers every ping THEN never hung', () => {
    const l = new WorkerLiveness(policy, 0);
    expect(hungAt(l, 0, 60_000, () => true)).toBeUndefined();
  });

  it('GIVEN a worker that stops answering THEN hung at the first tick 1.5 s after the ping it left unanswered', () => {
    const l = new WorkerLiveness(policy, 0);
    // The ping at 1 000 is the first left unanswered.
    expect(hungAt(l, 0, 5_000, (t) => t < 1_000)).toBe(1_000 + 1_500);
  });

  it('GIVEN a tick 2 s late (this thread was busy, the answer may be queued) THEN not hung at it: the wait starts over', () => {
    const l = new WorkerLiveness(policy, 0);
    expect(l.tick(0)).toBe('ping');
    l.answered();
    expect(l.tick(250)).toBe('ping');
    // Busy from 250 to 2 250: the answer to the 250 ping waits in the queue; the next tick is late.
    expect(l.tick(2_250)).toBe('ping');
    l.answered();
    expect(hungAt(l, 2_500, 10_000, () => true)).toBeUndefined();
    // Still silent after the late tick: hung 1.5 s later, not before.
    const m = new WorkerLiveness(policy, 0);
    m.tick(0);
    m.answered();
    m.tick(250);
    expect(m.tick(2_250)).toBe('ping');
    expect(hungAt(m, 2_500, 10_000)).toBe(2_250 + 1_500);
  });

  it('GIVEN a worker still loading (no answer yet) THEN hung only after the startup grace', () => {
    const l = new WorkerLiveness(policy, 0);
    expect(hungAt(l, 0, 40_000)).toBe(30_000);
  });
});
