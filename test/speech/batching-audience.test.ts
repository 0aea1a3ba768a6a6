import { describe, expect, it, vi } from 'vitest';
import { isRipe, mergeable, mergeableRun, nextBatch } from '../../src/speech/queue/batching/merging.ts';
import { planBatch } from '../../src/speech/queue/batching/reuse.ts';
import { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import { type ReadyUtterance, textAudience, type Utterance, voiceAudience } from '../../src/speech/queue/utterance.ts';
import type { ReadyAudio, SynthesisRequest } from '../../src/speech/synthesis/synthesize.ts';
import { FakeClock, settle, SOON } from '../support/clock.ts';
import { NOW, RULES, u } from '../support/batching.ts';
import { FakeSynth, msg } from './queue-fakes.ts';

// One request carries the messages of one audience only: a staff channel's text must never be
// posted in #general inside a merged MP3. An audience is a voice session (everyone in the voice
// channel hears every channel read there) or one text channel (the MP3 is posted there).

const staff = { channelId: 'staff', audience: textAudience('staff') };
const general = { channelId: 'general', audience: textAudience('general') };
const inVoice = (channelId: string) => ({ channelId, audience: voiceAudience('vc1') });
const idle = { now: NOW, playing: false };

describe('mergeable: never across audiences', () => {
  it('GIVEN two text channels posting MP3s THEN their messages are never merged, whatever else they share', () => {
    expect(mergeable(u('スタッフ、BANの相談です', staff), u('こんにちは', general))).toBe(false);
    expect(mergeable(u('一行目', staff), u('二行目', staff))).toBe(true);
  });

  it('GIVEN messages of several text channels read in one voice session THEN they may share a request', () => {
    expect(mergeable(u('a', inVoice('general')), u('b', inVoice('staff')))).toBe(true);
  });

  it('GIVEN a voice-session message and a text-channel one (even of the same channel) THEN they are not merged', () => {
    expect(mergeable(u('a', inVoice('general')), u('b', general))).toBe(false);
    expect(mergeable(u('a', inVoice('vc1')), u('b', { channelId: 'vc1', audience: voiceAudience('vc2') }))).toBe(false);
  });

  it('GIVEN no audience said THEN a message merges only with others of its own text channel', () => {
    expect(mergeable(u('a', { channelId: 'staff' }), u('b', { channelId: 'general' }))).toBe(false);
    expect(mergeable(u('a', { channelId: 'staff' }), u('b', staff))).toBe(true);
  });
});

describe('the rules that form a batch keep one audience', () => {
  const pending = () => [u('スタッフ、BANの相談です', staff), u('こんにちは', general), u('またね', general)];

  it("GIVEN staff then #general THEN the next request is the staff line alone, and #general's lines go together after it", () => {
    const queue = pending();
    expect(nextBatch(queue, idle, RULES)).toEqual({ stale: 0, take: 1 });
    expect(mergeableRun(queue, 0, 10)).toBe(1);
    expect(nextBatch(queue.slice(1), idle, RULES)).toEqual({ stale: 0, take: 2 });
  });

  it('GIVEN another audience behind a lone message THEN the run cannot grow: it is ripe at once under pressure', () => {
    expect(isRipe(pending(), NOW, 10_000, RULES)).toBe(true);
  });

  it('GIVEN parts cached (names, short lines) THEN the plan of a run never reaches past its audience', () => {
    const queue = [u('たろう、ひみつ', { ...staff, prefix: 'たろう、' }), u('たろう、やあ', { ...general, prefix: 'たろう、' })];
    const run = queue.slice(0, mergeableRun(queue, 0, 10));
    const plan = planBatch(run, () => true, { maxRequests: 1, reusableChars: 8, maxItems: run.length }, RULES);
    expect(plan.take).toBe(1);
  });
});

describe('SpeechScheduler: requests carry one audience', () => {
  function setup(lookup?: (req: SynthesisRequest) => ReadyAudio | null) {
    const synth = lookup ? Object.assign(new FakeSynth(), { lookup: async (req: SynthesisRequest) => lookup(req) }) : new FakeSynth();
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock() });
    const spoken: ReadyUtterance[] = [];
    q.setDefaultSink(async (r) => void spoken.push(r));
    return { synth, q, spoken };
  }
  const channelsOf = (r: ReadyUtterance) => [...new Set(r.items.map((i) => i.channelId))];

  it("GIVEN a staff line then #general lines queued together THEN no request carries both channels' text", async () => {
    const { synth, q, spoken } = setup();
    q.enqueue(msg('g1', 'a', 'スタッフ、BANの相談です', staff));
    q.enqueue(msg('g1', 'b', 'こんにちは', general));
    q.enqueue(msg('g1', 'c', 'またね', general));
    await vi.waitUntil(() => spoken.length === 2, SOON);
    expect(synth.calls.map((c) => c.req.text)).toEqual(['スタッフ、BANの相談です', 'こんにちは。またね']);
    expect(spoken.map(channelsOf)).toEqual([['staff'], ['general']]);
    q.close();
  });

  it('GIVEN the persisted queue restored after a restart THEN the restored lines are batched by audience as well', async () => {
    const { synth, q, spoken } = setup();
    const restored: Utterance[] = [u('スタッフだけの話', staff), u('みなさんこんにちは', general)].map((x) => ({
      ...x,
      enqueuedAt: Date.now(),
    }));
    q.restore(restored);
    await vi.waitUntil(() => spoken.length === 2, SOON);
    expect(synth.calls.map((c) => c.req.text)).toEqual(['スタッフだけの話', 'みなさんこんにちは']);
    q.close();
  });

  it("GIVEN an author's name cached as a clip THEN a batch still plays one audience's lines only", async () => {
    const name: ReadyAudio = { mp3: Buffer.from('name'), durationMs: 300, fromCache: true, key: 'name' };
    const hit = (req: SynthesisRequest): ReadyAudio | null => (req.text === 'たろう、' ? name : null);
    const { synth, q, spoken } = setup(hit);
    q.enqueue(msg('g1', 'a', 'たろう、ひみつの相談', { ...staff, prefix: 'たろう、' }));
    q.enqueue(msg('g1', 'a', 'たろう、こんにちは', { ...general, prefix: 'たろう、' }));
    await vi.waitUntil(() => spoken.length === 2, SOON);
    await settle();
    for (const r of spoken) expect(channelsOf(r)).toHaveLength(1);
    expect(synth.calls.some((c) => c.req.text.includes('ひみつ') && c.req.text.includes('こんにちは'))).toBe(false);
    q.close();
  });
});
