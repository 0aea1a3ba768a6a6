import { describe, expect, it } from 'vitest';
import { FloodGate, type FloodSummary } from '../../src/discord/events/flood.ts';
import type { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import type { UtteranceInput } from '../../src/speech/queue/utterance.ts';
import { FakeClock, settle } from '../support/clock.ts';

// The flood limit's counting and its summaries, stepped on a fake clock: a member past the limit is
// summarised once they pause, a flood that does not stop once per window, in the audience of its
// last message, and nothing is queued for what the gate did not summarise.

function gate(clock: FakeClock) {
  const queued: UtteranceInput[] = [];
  const scheduler = { enqueue: (u: UtteranceInput) => (queued.push(u), { ok: true, id: String(queued.length), position: 1 }) };
  const flood = new FloodGate({ scheduler: scheduler as unknown as SpeechScheduler, clock, quietMs: 2_000, longestMs: 10_000 });
  return { flood, queued };
}
const summary = (audience: string, name = 'Alice', lang: 'ja' | 'en' = 'ja'): FloodSummary => ({
  input: { guildId: 'g', userId: 'u', channelId: 'c', kind: 'auto', lang, voice: 'v', speed: 1, pitch: 0, audience },
  lang,
  name,
});

describe('GIVEN a flood limit of 3 messages per 10 s', () => {
  it('THEN the first 3 are read, the rest counted, and one line spoken once the member pauses', async () => {
    const clock = new FakeClock();
    const { flood, queued } = gate(clock);
    const over = [];
    for (let i = 0; i < 5; i++) over.push(flood.over('g', 'u', 3));
    expect(over).toEqual([false, false, false, true, true]);
    flood.count(summary('voice:1'));
    flood.count(summary('voice:1'));
    await clock.advance(1_999);
    await settle();
    expect(queued).toEqual([]);
    await clock.advance(1);
    await settle();
    expect(queued.map((u) => [u.text, u.audience, u.userId])).toEqual([['Aliceさんの連投2件を省略しました。', 'voice:1', 'u']]);
    // Another member, and the same member in another server, have windows of their own.
    expect(flood.over('g', 'other', 3)).toBe(false);
    expect(flood.over('g2', 'u', 3)).toBe(false);
    // Once the window moved on, the member is read again.
    await clock.advance(10_000);
    expect(flood.over('g', 'u', 3)).toBe(false);
    expect(flood.over('g', 'u', null)).toBe(false);
  });

  it('THEN a flood that does not stop is summarised once per window, in English too', async () => {
    const clock = new FakeClock();
    const { flood, queued } = gate(clock);
    for (let t = 0; t < 15_000; t += 1_000) {
      flood.count(summary('text:9', 'Bob', 'en'));
      await clock.advance(1_000);
      await settle();
    }
    expect(queued.map((u) => u.text)).toEqual(['Skipped 10 more messages from Bob.']);
    await clock.advance(2_000);
    await settle();
    expect(queued.map((u) => u.text)).toEqual(['Skipped 10 more messages from Bob.', 'Skipped 5 more messages from Bob.']);
  });

  it('THEN a member with no speakable name is summarised unnamed; closing drops what was not spoken', async () => {
    const clock = new FakeClock();
    const { flood, queued } = gate(clock);
    flood.count(summary('voice:1', ''));
    await clock.advance(2_000);
    await settle();
    expect(queued.map((u) => u.text)).toEqual(['連投1件を省略しました。']);
    flood.count(summary('voice:1'));
    flood.close();
    await clock.advance(20_000);
    await settle();
    expect(queued).toHaveLength(1);
    expect(flood.pending).toBe(0);
  });
});
