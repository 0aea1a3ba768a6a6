import { describe, expect, it } from 'vitest';
import { Grants } from '../../src/speech/queue/grants.ts';
import { Slot, type SlotState } from '../../src/speech/queue/slot.ts';
import type { ReadyUtterance, Utterance } from '../../src/speech/queue/utterance.ts';
import { sequenceAudio, type ReadyAudio } from '../../src/speech/synthesis/synthesize.ts';
import { msg } from './queue-fakes.ts';
import type { RateGrant } from '../../src/tts/limiter/limiter.ts';

// A batch's lifecycle is one state union whose transitions are its own methods, through one setter
// that lets go of the clips the old state held and the new one does not (as @discordjs/voice's
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

/** A clip that counts how often it was let go. */
function clip(released: Map<string, number>, name: string, durationMs = 1_000): ReadyAudio {
  released.set(name, 0);
  return { durationMs, fromCache: true, key: name, release: () => void released.set(name, released.get(name)! + 1) };
}

let ids = 0;
function utterance(text: string, enqueuedAt: number): Utterance {
  return { ...msg('g1', 'u1', text), id: `id${++ids}`, enqueuedAt };
}

/** A slot stepped to ready with `results` (held to `paidCutMs` when they play). */
function readySlot(results: ReadyUtterance[], paidCutMs = Number.POSITIVE_INFINITY): Slot {
  const slot = new Slot();
  slot.synthesizing(
    results.flatMap((r) => r.items),
    0,
    paidCutMs,
  );
  slot.ready(results);
  return slot;
}

describe('Slot', () => {
  it('GIVEN a batch stepped from planning to done THEN every change is one stateChange with the old and the new state', () => {
    const slot = new Slot();
    const seen: Array<[SlotState['status'], SlotState['status']]> = [];
    slot.on('stateChange', (from, to) => seen.push([from.status, to.status]));
    slot.synthesizing([], 0, 60_000);
    slot.ready([]);
    slot.play();
    slot.retire();
    expect(seen).toEqual([
      ['planning', 'synthesizing'],
      ['synthesizing', 'ready'],
      ['ready', 'playing'],
      ['playing', 'done'],
    ]);
  });

  it('GIVEN a slot discarded while it waits for its grant THEN its signal carries the reason and it is done', () => {
    const slot = new Slot();
    const { controller } = slot.state as Extract<SlotState, { status: 'planning' }>;
    const reason = new Error('cleared');
    slot.discard(reason);
    expect(controller.signal.reason).toBe(reason);
    expect(slot.state.status).toBe('done');
  });

  it('GIVEN two deliveries played one after the other THEN each clip is let go exactly once, when its own delivery is done', () => {
    const released = new Map<string, number>();
    const [a, b] = [utterance('a', 0), utterance('b', 0)];
    const slot = readySlot([
      { id: a.id, guildId: 'g1', items: [a], audio: clip(released, 'a') },
      { id: b.id, guildId: 'g1', items: [b], audio: clip(released, 'b') },
    ]);
    slot.play();
    const first = slot.startNext(0)!;
    expect(first.ready?.items).toEqual([a]);
    expect(released).toEqual(
      new Map([
        ['a', 0],
        ['b', 0],
      ]),
    );
    expect(slot.delivered()).toEqual([a]);
    expect(released).toEqual(
      new Map([
        ['a', 1],
        ['b', 0],
      ]),
    );
    slot.startNext(1_000);
    slot.delivered();
    slot.retire();
    slot.retire();
    expect(released).toEqual(
      new Map([
        ['a', 1],
        ['b', 1],
      ]),
    );
  });

  it('GIVEN a delivery whose first line is past the cut at speaking THEN the clip that carried it is let go at once, the one that plays after it has played', () => {
    const released = new Map<string, number>();
    const [old, fresh] = [utterance('old', 0), utterance('fresh', 50_000)];
    const audio = sequenceAudio([clip(released, 'old'), clip(released, 'fresh')]);
    const slot = readySlot(
      [{ id: old.id, guildId: 'g1', items: [old, fresh], audio, carries: [[old], [fresh]], starts: [0, 1_000] }],
      40_000,
    );
    slot.play();
    const started = slot.startNext(50_000)!;
    expect(started.dropped).toEqual([old]);
    expect(started.ready?.items).toEqual([fresh]);
    expect(released).toEqual(
      new Map([
        ['old', 1],
        ['fresh', 0],
      ]),
    );
    expect(slot.delivered()).toEqual([fresh]);
    expect(released).toEqual(
      new Map([
        ['old', 1],
        ['fresh', 1],
      ]),
    );
  });

  it('GIVEN a result that comes back after its slot was cleared THEN the slot refuses it and lets its clips go, once', () => {
    const released = new Map<string, number>();
    const a = utterance('a', 0);
    const slot = new Slot();
    slot.synthesizing([a], 0, 60_000);
    slot.discard(new Error('cleared'));
    const late = sequenceAudio([clip(released, 'name'), clip(released, 'line')]);
    expect(slot.ready([{ id: a.id, guildId: 'g1', items: [a], audio: late }])).toBe(false);
    expect(slot.state.status).toBe('done');
    expect(released).toEqual(
      new Map([
        ['name', 1],
        ['line', 1],
      ]),
    );
  });

  it('GIVEN one cached name read in two deliveries of a batch THEN it stays pinned until the second is done', () => {
    const released = new Map<string, number>();
    const name = clip(released, 'name');
    const [a, b] = [utterance('a', 0), utterance('b', 0)];
    const slot = readySlot([
      { id: a.id, guildId: 'g1', items: [a], audio: sequenceAudio([name, clip(released, 'a')]), carries: [[a], [a]], starts: [0] },
      { id: b.id, guildId: 'g1', items: [b], audio: sequenceAudio([name, clip(released, 'b')]), carries: [[b], [b]], starts: [0] },
    ]);
    slot.play();
    slot.startNext(0);
    slot.delivered();
    expect(released).toEqual(
      new Map([
        ['name', 0],
        ['a', 1],
        ['b', 0],
      ]),
    );
    slot.startNext(2_000);
    slot.delivered();
    expect(released).toEqual(
      new Map([
        ['name', 1],
        ['a', 1],
        ['b', 1],
      ]),
    );
  });

  it('GIVEN a withdrawal that discards an upcoming result and a clear of the rest THEN every clip not played is let go once, the one playing only when it ends', () => {
    const released = new Map<string, number>();
    const [a, b, c] = [utterance('a', 0), utterance('b', 0), utterance('c', 0)];
    const results: ReadyUtterance[] = [
      { id: a.id, guildId: 'g1', items: [a], audio: clip(released, 'a') },
      { id: b.id, guildId: 'g1', items: [b], audio: clip(released, 'b') },
      { id: c.id, guildId: 'g1', items: [c], audio: clip(released, 'c') },
    ];
    const slot = readySlot(results);
    slot.play();
    const { controller } = slot.startNext(0)!;
    slot.keepUpcoming([results[2]!]);
    expect(released).toEqual(
      new Map([
        ['a', 0],
        ['b', 1],
        ['c', 0],
      ]),
    );
    expect(slot.stopDelivery(new Error('skipped'))).toBe(true);
    expect(controller?.signal.aborted).toBe(true);
    expect(slot.stopDelivery(new Error('skipped'))).toBe(false);
    expect(released.get('a')).toBe(0);
    slot.discard(new Error('closed'));
    expect(released).toEqual(
      new Map([
        ['a', 1],
        ['b', 1],
        ['c', 1],
      ]),
    );
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
