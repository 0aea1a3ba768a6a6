import { describe, expect, it } from 'vitest';
import { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import type { ReadyUtterance, Utterance } from '../../src/speech/queue/utterance.ts';
import type { ReadyAudio, SynthesisRequest, Synthesizer } from '../../src/speech/synthesis/synthesize.ts';
import { FakeClock, settle } from '../support/clock.ts';
import { msg, sessionOf } from './queue-fakes.ts';
import { catchUp, readMs, withinCut } from '../../src/speech/queue/batching/keeping-up.ts';
import { NOW, RULES, u } from '../support/batching.ts';

// Lines read at a speed of their own (a long message read fast, src/speech/text/fast-reading.ts) in
// the scheduler, on a manual clock: keeping up's speed-up on top of them never asks the service for
// more than its fastest 4.0 (a faster request is read at 1.0), and the scheduler's time estimates
// (what waits, what was offered lately) count such a line at its speed, so two fast long messages
// that fit in the horizon do not make a channel "behind" (its oldest dropped, the rest sped up).

/** Audio 100 ms a character at speed 1, shorter when faster, as the service reads (up to its 4.0). */
class TimedSynth implements Synthesizer {
  readonly requests: SynthesisRequest[] = [];
  async synthesize(req: SynthesisRequest): Promise<ReadyAudio> {
    this.requests.push(req);
    return {
      mp3: Buffer.from(req.text),
      durationMs: (100 * [...req.text].length) / req.speed,
      fromCache: false,
      key: `k${this.requests.length}`,
    };
  }
}

function channel() {
  const clock = new FakeClock();
  const synth = new TimedSynth();
  const q = new SpeechScheduler({ synthesize: synth, clock });
  const heard: string[] = [];
  const dropped: Utterance[] = [];
  q.on('dropped', ({ items }) => dropped.push(...items));
  q.setDefaultSink(async (r: ReadyUtterance, signal) => {
    heard.push(...r.items.map((u) => u.text));
    await clock.sleep(r.audio?.durationMs ?? 0, signal).catch(() => {});
  });
  const step = async (ms: number) => {
    await settle(3);
    await clock.advance(ms);
  };
  const drain = async () => {
    for (
      let i = 0;
      i < 300 && q.stats(sessionOf('g1')).queued + q.stats(sessionOf('g1')).ready + q.stats(sessionOf('g1')).synthesizing > 0;
      i++
    )
      await step(1_000);
    await step(60_000);
  };
  return { q, synth, heard, dropped, step, drain };
}

describe('a line read fast, in a channel that falls behind', () => {
  it('GIVEN chat three times faster than it can be read, then a long message at 3x THEN keeping up speeds up the chat, and asks for the long one at 4.0, not 3 x 1.5', async () => {
    const { q, synth, step, drain } = channel();
    for (let i = 0; i < 20; i++) {
      // 30 characters: 3 s of speech, one every second.
      q.enqueue(msg('g1', `u${i % 4}`, `${String(i).padStart(2, '0')}番目のメッセージです。`.padEnd(30, 'い')));
      await step(1_000);
    }
    // A member at 1.5x writes a long message, read 2x faster for its length: 3x.
    const long = '長いメッセージ'.padEnd(150, 'あ');
    q.enqueue(msg('g1', 'u1', long, { speed: 3 }));
    await drain();
    q.close();
    const chat = synth.requests.filter((r) => r.text !== long);
    // The channel fell behind: its chat was sped up step by step to 1.5x ...
    expect(Math.max(...chat.map((r) => r.speed))).toBe(1.5);
    // ... and the long message, asked for while it was, at the service's fastest.
    expect(synth.requests.filter((r) => r.text === long).map((r) => r.speed)).toEqual([4]);
    expect(Math.max(...synth.requests.map((r) => r.speed))).toBe(4);
  });
});

describe("the scheduler's estimate of a fast line", () => {
  it('GIVEN chat read at speed 1, then two long messages at 2x that take 15 s together (within the 20 s horizon) THEN the channel is not behind: both heard, at 2x, alone, nothing dropped or sped up', async () => {
    const { q, synth, heard, dropped, step, drain } = channel();
    // Chat at speed 1 first: the scheduler learns how long a character takes.
    for (let i = 0; i < 4; i++) {
      q.enqueue(msg('g1', 'u1', `${i}番目のふつうの発言です`));
      await step(3_000);
    }
    await drain();
    const from = synth.requests.length;
    // 150 characters each, at 2x: 7.5 s of speech each, 15 s for both (at speed 1 it would be 30 s).
    const one = '一つ目の長いメッセージ'.padEnd(150, 'あ');
    const two = '二つ目の長いメッセージ'.padEnd(150, 'い');
    q.enqueue(msg('g1', 'u2', one, { speed: 2 }));
    q.enqueue(msg('g1', 'u3', two, { speed: 2 }));
    // A short line of chat at speed 1 after them: never in the same request as a line at another speed.
    q.enqueue(msg('g1', 'u3', 'ふつうの一言'));
    await drain();
    q.close();
    expect(dropped).toEqual([]);
    expect(heard.slice(-3)).toEqual([one, two, 'ふつうの一言']);
    expect(synth.requests.slice(from).map((r) => [r.text, r.speed])).toEqual([
      [one, 2],
      [two, 2],
      ['ふつうの一言', 1],
    ]);
  });
});

describe('the batching rules count a line at its own speed', () => {
  it('GIVEN a line of 100 characters at 100 ms a character THEN 10 s at speed 1, 5 s at 2x, 2.5 s at 4x', () => {
    expect(readMs(u('あ'.repeat(100)), 0, 100, RULES)).toBe(10_000);
    expect(readMs(u('あ'.repeat(100), { speed: 2 }), 0, 100, RULES)).toBe(5_000);
    expect(readMs(u('あ'.repeat(100), { speed: 4 }), 0, 100, RULES)).toBe(2_500);
  });

  it('GIVEN a backlog of lines at 2x THEN fewer of the oldest are dropped to catch up than at speed 1', () => {
    // Ten lines of 10 characters, one a second; the newest just written; it must start within 4 s.
    const lines = (speed: number) =>
      Array.from({ length: 10 }, (_, i) => u('あ'.repeat(10), { speed, enqueuedAt: NOW - 9_000 + i * 1_000 }));
    expect(catchUp(lines(1), NOW, 100, 4_000, RULES)).toBe(5); // 9 s ahead of it
    expect(catchUp(lines(2), NOW, 100, 4_000, RULES)).toBe(1); // 4.5 s ahead of it
  });

  it('GIVEN a run whose second line was written 6 s ago, a 20 s cut THEN it may follow a first line at 2x, not one at speed 1', () => {
    const run = (speed: number) => [
      u('あ'.repeat(250), { speed, enqueuedAt: NOW - 14_000 }),
      u('い'.repeat(10), { enqueuedAt: NOW - 6_000 }),
    ];
    // The first (and its pause) takes 25.1 s at speed 1, 12.55 s at 2x: the second would start 31.1 s or 18.55 s after it was written.
    expect(withinCut(run(1), NOW, 100, 20_000, RULES)).toBe(1);
    expect(withinCut(run(2), NOW, 100, 20_000, RULES)).toBe(2);
  });
});
