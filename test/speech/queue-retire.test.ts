import { describe, expect, it, vi } from 'vitest';
import { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import { type ReadyUtterance, textAudience, voiceAudience } from '../../src/speech/queue/utterance.ts';
import { RETIRE_IDLE_MS } from '../../src/speech/queue/retire.ts';
import { FakeSynth, msg } from './queue-fakes.ts';
import { FakeClock, SOON } from '../support/clock.ts';

// A bot running for weeks reads in thousands of channels, most of them once. The scheduler's queue
// of a channel that went quiet is retired, so the queues do not grow with every channel ever read;
// a channel read again gets a queue afresh, and what the retired ones counted is still counted.

describe('SpeechScheduler: queues of audiences that went quiet', () => {
  it('GIVEN 300 channels read once and quiet for longer than RETIRE_IDLE_MS THEN their queues go; each still reads when written to again', async () => {
    const clock = new FakeClock();
    const q = new SpeechScheduler({ synthesize: new FakeSynth(), clock, coalesce: { holdMs: 0 } });
    const seen: ReadyUtterance[] = [];
    q.setDefaultSink(async (r) => void seen.push(r));
    const say = (channel: number, text: string) =>
      q.enqueue(msg(`g${channel}`, 'alice', text, { kind: 'say', channelId: `c${channel}`, audience: textAudience(`c${channel}`) }));
    for (let c = 0; c < 300; c++) expect(say(c, `チャンネル${c}`).ok).toBe(true);
    await vi.waitUntil(() => seen.length === 300, SOON);
    expect(q.stats()).toHaveLength(300);

    await clock.advance(RETIRE_IDLE_MS + 1_000);
    // One busy voice channel meanwhile: it has work, so it stays whatever its age.
    q.enqueue(msg('gv', 'bob', '今話している', { audience: voiceAudience('v1') }));
    // Queues are looked over as new ones are made, once they have doubled since the last look (256 at first).
    for (let c = 1_000; c < 1_300; c++) expect(say(c, `新しいチャンネル${c}`).ok).toBe(true);
    await vi.waitUntil(() => seen.length === 601, SOON);
    const kept = q.stats().map((s) => s.audience);
    expect(kept.filter((a) => /^text:c\d{1,3}$/.test(a))).toEqual([]);
    expect(kept).toContain(voiceAudience('v1'));
    expect(kept.filter((a) => /^text:c1\d{3}$/.test(a))).toHaveLength(300);

    // A retired channel written to again is read as before.
    expect(say(7, 'また来た').ok).toBe(true);
    await vi.waitUntil(() => seen.some((r) => r.items.some((u) => u.text === 'また来た')), SOON);
    expect(q.stats(textAudience('c7'))).toMatchObject({ delivered: 1, queued: 0 });
  });

  it('GIVEN a channel quiet for less than RETIRE_IDLE_MS THEN its queue stays', async () => {
    const clock = new FakeClock();
    const q = new SpeechScheduler({ synthesize: new FakeSynth(), clock, coalesce: { holdMs: 0 } });
    const seen: ReadyUtterance[] = [];
    q.setDefaultSink(async (r) => void seen.push(r));
    for (let c = 0; c < 300; c++)
      q.enqueue(msg(`g${c}`, 'alice', `チャンネル${c}`, { kind: 'say', channelId: `c${c}`, audience: textAudience(`c${c}`) }));
    await vi.waitUntil(() => seen.length === 300, SOON);
    await clock.advance(RETIRE_IDLE_MS - 60_000);
    // Enough new queues that they are looked over (as in the test above): none of the old is idle long enough.
    for (let c = 1_000; c < 1_300; c++)
      q.enqueue(msg(`g${c}`, 'alice', `新しい${c}`, { kind: 'say', channelId: `c${c}`, audience: textAudience(`c${c}`) }));
    await vi.waitUntil(() => seen.length === 600, SOON);
    expect(q.stats()).toHaveLength(600);
  });
});
