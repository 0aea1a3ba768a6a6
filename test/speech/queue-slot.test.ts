import { describe, expect, it } from 'vitest';
import { Grants, Slot, type SlotState } from '../../src/speech/queue-slot.ts';
import type { RateGrant } from '../../src/tts/limiter/limiter.ts';

// A batch's lifecycle is one state union changed through one setter (as @discordjs/voice's
// AudioPlayer), and its rate grants have one owner that gives back what no request spent.

function grant(log: string[], name: string): RateGrant {
  let state: 'held' | 'used' | 'released' = 'held';
  return {
    kind: 'standard',
    use: () => (state === 'held' ? ((state = 'used'), true) : false),
    release: () => {
      if (state !== 'held') return;
      state = 'released';
      log.push(`released ${name}`);
    },
  };
}

describe('Slot', () => {
  it('GIVEN a batch stepped from planning to playing THEN every change is one stateChange with the old and the new state', () => {
    const slot = new Slot();
    const seen: Array<[SlotState['status'], SlotState['status']]> = [];
    slot.on('stateChange', (from, to) => seen.push([from.status, to.status]));
    const { controller } = slot.state as Extract<SlotState, { status: 'planning' }>;
    slot.state = { status: 'synthesizing', controller, items: [], estimateMs: 0 };
    slot.state = { status: 'ready', items: [], results: [] };
    slot.state = { status: 'playing', items: [], upcoming: [], current: null };
    expect(seen).toEqual([
      ['planning', 'synthesizing'],
      ['synthesizing', 'ready'],
      ['ready', 'playing'],
    ]);
  });

  it('GIVEN a slot aborted while it waits for its grant THEN its signal carries the reason', () => {
    const slot = new Slot();
    const { controller } = slot.state as Extract<SlotState, { status: 'planning' }>;
    slot.abort(new Error('cleared'));
    expect(controller.signal.aborted).toBe(true);
  });
});

describe('Grants', () => {
  it('GIVEN three grants, one spent by its request, one handed to a cache hit, one never handed THEN the two unspent go back, once each', () => {
    const log: string[] = [];
    const grants = new Grants();
    for (const name of ['a', 'b', 'c']) grants.add(grant(log, name));
    const spent = grants.hand()!;
    expect(spent.use()).toBe(true);
    grants.done(spent);
    const hit = grants.hand();
    grants.done(hit);
    grants.settle();
    grants.settle();
    expect(log).toEqual(['released b', 'released c']);
    expect(grants.count).toBe(0);
  });

  it('GIVEN a batch that keeps one grant of two THEN only the extra goes back', () => {
    const log: string[] = [];
    const grants = new Grants();
    grants.add(grant(log, 'first'));
    grants.add(grant(log, 'extra'));
    grants.settle(1);
    expect(log).toEqual(['released extra']);
    expect(grants.count).toBe(1);
  });
});
