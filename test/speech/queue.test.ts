import { describe, expect, it, vi } from 'vitest';
import { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import type { ReadyUtterance } from '../../src/speech/queue/utterance.ts';
import { SpeechError } from '../../src/speech/errors.ts';
import { BudgetRefusedError } from '../../src/billing/errors.ts';
import { FakeSynth, msg, sessionOf } from './queue-fakes.ts';
import { FakeClock, settle, SOON } from '../support/clock.ts';

function collectingSink() {
  const seen: ReadyUtterance[] = [];
  let active = 0;
  let maxActive = 0;
  const sink = async (r: ReadyUtterance) => {
    active++;
    maxActive = Math.max(maxActive, active);
    seen.push(r);
    await settle(1);
    active--;
  };
  return { seen, sink, maxActive: () => maxActive };
}

const spokenTexts = (seen: ReadyUtterance[]) => seen.flatMap((r) => r.items.map((u) => u.text));

describe('SpeechScheduler coalescing', () => {
  it('GIVEN 20 short auto messages queued together THEN at most 5 requests and message order is kept', async () => {
    const synth = new FakeSynth();
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock() });
    const { seen, sink } = collectingSink();
    q.setDefaultSink(sink);
    const texts = Array.from({ length: 20 }, (_, i) => `メッセージ${i}`);
    texts.forEach((t, i) => expect(q.enqueue(msg('g1', `u${i % 4}`, t, { lang: 'ja' })).ok).toBe(true));
    await vi.waitUntil(() => spokenTexts(seen).length === 20, SOON);
    expect(synth.calls.length).toBeLessThanOrEqual(5);
    expect(spokenTexts(seen)).toEqual(texts);
    // The merged request reads every message, with a pause between them, in order.
    expect(synth.calls[0]!.req.text).toBe(texts.slice(0, 5).join('。'));
  });

  it('THEN each author is charged for their own characters, summing to the request', async () => {
    const synth = new FakeSynth();
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock() });
    q.setDefaultSink(async () => {});
    q.enqueue(msg('g1', 'alice', 'hello there', { lang: 'en' }));
    q.enqueue(msg('g1', 'bob', 'lol', { lang: 'en' }));
    q.enqueue(msg('g1', 'alice', 'ok', { lang: 'en' }));
    await vi.waitUntil(() => synth.calls.length === 1, SOON);
    const { req } = synth.calls[0]!;
    // One character of pause each (the ellipsis, read as a pause): the price of a merge.
    expect(req.text).toBe('hello there…lol…ok');
    const byUser = Object.fromEntries(req.charges.map((c) => [c.userId, c.chars]));
    expect(byUser).toEqual({ alice: 11 + 1 + 2, bob: 1 + 3 });
    expect(req.charges.reduce((n, c) => n + c.chars, 0)).toBe([...req.text].length);
  });

  it('does not merge different voices, explicit requests, or beyond maxChars', async () => {
    const synth = new FakeSynth();
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock(), coalesce: { maxChars: 10 } });
    const { seen, sink } = collectingSink();
    q.setDefaultSink(sink);
    q.enqueue(msg('g1', 'a', 'abc'));
    q.enqueue(msg('g1', 'a', 'def', { voice: 'other' }));
    q.enqueue(msg('g1', 'b', 'say this', { kind: 'say' }));
    q.enqueue(msg('g1', 'a', 'ghi'));
    q.enqueue(msg('g1', 'a', 'jkl'));
    q.enqueue(msg('g1', 'a', 'mnopqrs'));
    await vi.waitUntil(() => spokenTexts(seen).length === 6, SOON);
    expect(synth.calls.map((c) => c.req.text)).toEqual(['abc', 'def', 'say this', 'ghi…jkl', 'mnopqrs']);
    expect(spokenTexts(seen)).toEqual(['abc', 'def', 'say this', 'ghi', 'jkl', 'mnopqrs']);
  });
});

describe('SpeechScheduler order and delivery', () => {
  it('GIVEN failures in between THEN every message is delivered in order, failures carrying their error', async () => {
    const synth = new FakeSynth({
      failWhen: (r) => (r.text.includes('bad') ? Object.assign(new Error('nope'), { code: 'content_policy_violation' }) : null),
    });
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock() });
    const { seen, sink } = collectingSink();
    q.setDefaultSink(sink);
    const texts = ['one', 'bad two', 'three', 'bad four', 'five'];
    for (const t of texts) q.enqueue(msg('g1', 'u', t, { kind: 'say' }));
    await vi.waitUntil(() => seen.length === 5, SOON);
    expect(spokenTexts(seen)).toEqual(texts);
    expect(seen.map((r) => r.error?.code ?? 'ok')).toEqual(['ok', 'content_policy_violation', 'ok', 'content_policy_violation', 'ok']);
  });

  it('GIVEN a sink that throws or rejects THEN the queue advances exactly once per item and never stalls', async () => {
    const synth = new FakeSynth();
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock() });
    const delivered: string[] = [];
    let active = 0;
    let maxActive = 0;
    const errors: unknown[] = [];
    q.on('sinkError', (e) => errors.push(e.error));
    q.setDefaultSink((r) => {
      const text = r.items[0]!.text;
      delivered.push(text);
      if (text === 'sync-throw') throw new Error('sync boom');
      active++;
      maxActive = Math.max(maxActive, active);
      return settle(2).then(() => {
        active--;
        if (text.startsWith('reject')) throw new Error('async boom');
      });
    });
    const texts = ['a', 'sync-throw', 'b', 'reject-1', 'c', 'reject-2', 'd'];
    for (const t of texts) q.enqueue(msg('g1', 'u' + t, t, { kind: 'say' }));
    await vi.waitUntil(() => delivered.length === texts.length, SOON);
    await settle(10);
    expect(delivered).toEqual(texts); // each once, in order
    expect(maxActive).toBe(1); // never two deliveries at once
    expect(errors).toHaveLength(3);
    expect(q.stats(sessionOf('g1'))).toMatchObject({ delivered: 7, queued: 0, ready: 0, playing: false });
  });

  it('GIVEN a sink that never settles THEN the watchdog aborts it and the queue moves on', async () => {
    const clock = new FakeClock();
    const q = new SpeechScheduler({ synthesize: new FakeSynth(), clock, sinkTimeoutMs: 1_000 });
    const delivered: string[] = [];
    const signals: AbortSignal[] = [];
    q.setDefaultSink((r, signal) => {
      delivered.push(r.items[0]!.text);
      signals.push(signal);
      return new Promise(() => {});
    });
    q.enqueue(msg('g1', 'u', 'stuck', { kind: 'say' }));
    q.enqueue(msg('g1', 'u', 'next', { kind: 'say' }));
    await vi.waitUntil(() => delivered.length === 1, SOON);
    await clock.advance(1_100); // past durationMs(100) + timeout
    await settle();
    expect(signals[0]!.aborted).toBe(true);
    expect(delivered).toEqual(['stuck']);
    await clock.advance(1_000);
    await vi.waitUntil(() => delivered.length === 2, SOON);
    expect(delivered).toEqual(['stuck', 'next']);
  });

  it('holds ready audio until a sink is set, and uses the default sink', async () => {
    const q = new SpeechScheduler({ synthesize: new FakeSynth(), clock: new FakeClock() });
    q.enqueue(msg('g1', 'u', 'hi', { kind: 'say' }));
    await settle(10);
    expect(q.stats(sessionOf('g1'))).toMatchObject({ ready: 1, delivered: 0 });
    const { seen, sink } = collectingSink();
    q.setDefaultSink(sink);
    await vi.waitUntil(() => seen.length === 1, SOON);
  });

  it('prefetches at most K utterances ahead of playback', async () => {
    const synth = new FakeSynth();
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock(), prefetch: 2 });
    let finish: (() => void) | undefined;
    q.setDefaultSink(() => new Promise<void>((r) => (finish = r)));
    for (let i = 0; i < 6; i++) q.enqueue(msg('g1', `u${i}`, `s${i}`, { kind: 'say' }));
    await vi.waitUntil(() => synth.calls.length === 3, SOON);
    await settle(10);
    // One playing, two synthesised ahead, the rest waiting.
    expect(synth.calls.length).toBe(3);
    expect(q.stats(sessionOf('g1'))).toMatchObject({ playing: true, ready: 2, queued: 3 });
    finish!();
    await vi.waitUntil(() => synth.calls.length === 4, SOON);
  });
});

describe('SpeechScheduler spending the rate budget', () => {
  it('GIVEN a request waiting on the service THEN later messages wait and merge instead of taking a second request', async () => {
    const synth = new FakeSynth({ manual: true });
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock() });
    const { seen, sink } = collectingSink();
    q.setDefaultSink(sink);
    q.enqueue(msg('g1', 'a', 'first'));
    await vi.waitUntil(() => synth.calls.length === 1, SOON);
    q.enqueue(msg('g1', 'b', 'second'));
    await settle(5);
    q.enqueue(msg('g1', 'c', 'third'));
    await settle(5);
    expect(synth.calls).toHaveLength(1);
    synth.release(0);
    await vi.waitUntil(() => synth.calls.length === 2, SOON);
    expect(synth.calls[1]!.req.text).toBe('second…third');
    synth.release(1);
    await vi.waitUntil(() => seen.length === 2, SOON);
  });

  it('GIVEN the guild is playing THEN a lone auto message waits up to holdMs for company; an idle guild speaks at once', async () => {
    const clock = new FakeClock();
    const synth = new FakeSynth();
    const q = new SpeechScheduler({ synthesize: synth, clock, coalesce: { holdMs: 1_000 } });
    let finish: (() => void) | undefined;
    const played: string[] = [];
    q.setDefaultSink((r) => {
      played.push(r.items.map((u) => u.text).join('+'));
      return new Promise<void>((resolve) => (finish = resolve));
    });
    q.enqueue(msg('g1', 'a', 'one'));
    await vi.waitUntil(() => played.length === 1, SOON); // idle: no hold
    q.enqueue(msg('g1', 'b', 'two'));
    await settle(10);
    expect(synth.calls).toHaveLength(1); // held while 'one' plays
    q.enqueue(msg('g1', 'c', 'three'));
    await clock.advance(1_000);
    await vi.waitUntil(() => synth.calls.length === 2, SOON);
    expect(synth.calls[1]!.req.text).toBe('two…three');
    finish!();
    await vi.waitUntil(() => played.length === 2, SOON);
    expect(played).toEqual(['one', 'two+three']);
  });
});

describe('SpeechScheduler limits and dropping', () => {
  it('GIVEN a member with characters waiting up to the cap THEN more is refused with the limit, others are not', async () => {
    const q = new SpeechScheduler({ synthesize: new FakeSynth({ manual: true }), clock: new FakeClock(), maxPendingCharsPerMember: 10 });
    expect(q.enqueue(msg('g1', 'a', '1234')).ok).toBe(true);
    expect(q.enqueue(msg('g1', 'a', '5678', { kind: 'say' })).ok).toBe(true);
    expect(q.enqueue(msg('g1', 'a', 'abc'))).toEqual({ ok: false, reason: 'member_queue_full', limit: 10 });
    expect(q.enqueue(msg('g1', 'a', 'ab')).ok).toBe(true); // exactly 10
    expect(q.enqueue(msg('g1', 'b', 'other member')).ok).toBe(true);
    expect(q.enqueue(msg('g2', 'a', 'other guild')).ok).toBe(true);
  });

  it('GIVEN a member with nothing waiting THEN a text longer than the cap is still accepted (a long /narrate)', () => {
    const q = new SpeechScheduler({ synthesize: new FakeSynth({ manual: true }), clock: new FakeClock(), maxPendingCharsPerMember: 10 });
    expect(q.enqueue(msg('g1', 'a', 'x'.repeat(300), { kind: 'narrate' })).ok).toBe(true);
    expect(q.enqueue(msg('g1', 'a', 'y')).ok).toBe(false);
  });

  it('GIVEN a burst of 20 ordinary chat lines from 3 members THEN none is refused with the default cap', async () => {
    // The run: 20 lines from 3 members while the guild was busy; the old cap of 5 lines refused 3.
    const synth = new FakeSynth({ manual: true });
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock() });
    const lines = [
      'おはよう',
      '今日の配信何時から？',
      '21時からだよ',
      'りょうかい',
      'それまでに夕飯食べとく',
      'ｗ',
      '新しいマップ来てたね',
      'まだ見てない',
      'ボスが強いらしい',
      '装備整えないと',
      'わかる',
      '昨日の続きからやる？',
      'うん',
      'セーブどこだっけ',
      '城の前',
      'あーそうだった',
      '回復薬買っとこう',
      'いくら持ってる？',
      '3000くらい',
      '足りるね',
    ];
    const results = lines.map((text, i) =>
      q.enqueue(msg('g1', ['alice', 'bob', 'carol'][i % 3]!, `${['alice', 'bob', 'carol'][i % 3]}、${text}`)),
    );
    expect(results.filter((r) => !r.ok)).toEqual([]);
    // One member still cannot flood the queue.
    const flood = Array.from({ length: 40 }, () =>
      q.enqueue(msg('g1', 'mallory', 'これはとても長いメッセージで、同じ人が何度も何度も送り続けています。')),
    );
    expect(flood.some((r) => !r.ok)).toBe(true);
    expect(flood.filter((r) => r.ok).length).toBeLessThan(20);
  });

  it('GIVEN items older than maxAutoAgeMs at synthesis THEN auto ones are dropped and counted, say ones spoken', async () => {
    const clock = new FakeClock();
    const synth = new FakeSynth({ manual: true });
    const q = new SpeechScheduler({ synthesize: synth, clock, prefetch: 1, maxAutoAgeMs: 60_000 });
    const dropped: string[] = [];
    q.on('dropped', (e) => dropped.push(...e.items.map((u) => u.text)));
    const { seen, sink } = collectingSink();
    q.setDefaultSink(sink);
    q.enqueue(msg('g1', 'a', 'first', { kind: 'say' }));
    await vi.waitUntil(() => synth.calls.length === 1, SOON);
    q.enqueue(msg('g1', 'b', 'old auto 1'));
    q.enqueue(msg('g1', 'c', 'old say', { kind: 'say' }));
    q.enqueue(msg('g1', 'd', 'old auto 2'));
    await clock.advance(61_000);
    q.enqueue(msg('g1', 'e', 'fresh auto'));
    synth.release(0);
    await vi.waitUntil(() => synth.calls.length === 2, SOON);
    synth.release(1);
    await vi.waitUntil(() => synth.calls.length === 3, SOON);
    synth.release(2);
    await vi.waitUntil(() => seen.length === 3, SOON);
    expect(spokenTexts(seen)).toEqual(['first', 'old say', 'fresh auto']);
    expect(dropped).toEqual(['old auto 1', 'old auto 2']);
    expect(q.stats(sessionOf('g1')).dropped).toBe(2);
  });
});

describe('SpeechScheduler control', () => {
  it('skip aborts the current delivery and the next one plays', async () => {
    const q = new SpeechScheduler({ synthesize: new FakeSynth(), clock: new FakeClock() });
    const delivered: string[] = [];
    q.setDefaultSink((r, signal) => {
      delivered.push(r.items[0]!.text);
      return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
    });
    q.enqueue(msg('g1', 'u', 'long', { kind: 'say' }));
    q.enqueue(msg('g1', 'u', 'after', { kind: 'say' }));
    await vi.waitUntil(() => delivered.length === 1, SOON);
    expect(q.skip(sessionOf('g1'))).toBe(true);
    await vi.waitUntil(() => delivered.length === 2, SOON);
    expect(delivered).toEqual(['long', 'after']);
    expect(q.skip(sessionOf('nope'))).toBe(false);
  });

  it('clear drops pending and aborts in-flight synthesis, returning the count', async () => {
    const synth = new FakeSynth({ manual: true });
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock(), prefetch: 2, maxInFlight: 2 });
    const { seen, sink } = collectingSink();
    q.setDefaultSink(sink);
    for (let i = 0; i < 5; i++) q.enqueue(msg('g1', `u${i}`, `s${i}`, { kind: 'say' }));
    await vi.waitUntil(() => synth.calls.length === 2, SOON);
    const cleared: Array<{ texts: string[]; reason: string | undefined }> = [];
    q.on('cleared', (e) => cleared.push({ texts: e.items.map((u) => u.text), reason: e.reason }));
    expect(q.clear(sessionOf('g1'), 'leave')).toBe(5);
    // Whoever listens learns which utterances went and why, so each /say can be told.
    expect(cleared).toEqual([{ texts: ['s0', 's1', 's2', 's3', 's4'], reason: 'leave' }]);
    expect(synth.calls.every((c) => c.signal?.aborted)).toBe(true);
    await settle(10);
    expect(seen).toEqual([]);
    expect(q.stats(sessionOf('g1'))).toMatchObject({ queued: 0, synthesizing: 0, ready: 0, delivered: 0 });
    // The guild keeps working after a clear.
    synth.manual = false;
    q.enqueue(msg('g1', 'u', 'again', { kind: 'say' }));
    await vi.waitUntil(() => seen.length === 1, SOON);
  });

  it('reports positions and progress for explicit requests', async () => {
    const synth = new FakeSynth({ manual: true });
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock(), prefetch: 1 });
    const events: string[] = [];
    q.on('progress', (e) => events.push(`${e.state}${e.position ?? ''}`));
    q.setDefaultSink(async () => {});
    q.enqueue(msg('g1', 'a', 'auto'));
    const r = q.enqueue(msg('g1', 'b', 'explicit', { kind: 'say' }));
    expect(r).toMatchObject({ ok: true, position: 2 });
    await vi.waitUntil(() => synth.calls.length === 1, SOON);
    expect(q.stats(sessionOf('g1'))).toMatchObject({ synthesizing: 1, queued: 1 });
    synth.release(0);
    await vi.waitUntil(() => synth.calls.length === 2, SOON);
    synth.release(1);
    await vi.waitUntil(() => events.length === 3, SOON);
    expect(events).toEqual(['queued2', 'synthesizing', 'ready']);
  });

  it('GIVEN one merged author over budget THEN the others are still spoken, the refused one told why', async () => {
    const refusal = { scope: 'user' as const, used: 100, limit: 100, requested: 3, remaining: 0, resetsAt: 0 };
    const synth = new FakeSynth({
      failWhen: (r) => (r.charges.some((c) => c.userId === 'broke') ? new BudgetRefusedError({ refusal, guildId: 'g1' }) : null),
    });
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock() });
    const { seen, sink } = collectingSink();
    q.setDefaultSink(sink);
    q.enqueue(msg('g1', 'rich', 'aaa'));
    q.enqueue(msg('g1', 'broke', 'bbb'));
    q.enqueue(msg('g1', 'rich', 'ccc'));
    await vi.waitUntil(() => seen.length === 3, SOON);
    expect(seen.map((r) => [r.items[0]!.text, r.error?.code ?? 'ok'])).toEqual([
      ['aaa', 'ok'],
      ['bbb', 'budget_refused'],
      ['ccc', 'ok'],
    ]);
    expect((seen[1]!.error as BudgetRefusedError).refusal).toEqual(refusal);
  });

  it('close refuses new work and returns what was not spoken; restore re-queues it in order', async () => {
    const synth = new FakeSynth({ manual: true });
    const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock(), maxInFlight: 2 });
    for (const t of ['x', 'y', 'z']) q.enqueue(msg('g1', t, t, { kind: 'say' }));
    await vi.waitUntil(() => synth.calls.length === 2, SOON);
    const unspoken = q.close();
    expect(unspoken.map((u) => u.text)).toEqual(['x', 'y', 'z']);
    expect(q.enqueue(msg('g1', 'a', 'late'))).toEqual({ ok: false, reason: 'closed' });
    expect(synth.calls[0]!.signal?.reason).toBeInstanceOf(SpeechError);

    const q2 = new SpeechScheduler({ synthesize: new FakeSynth(), clock: new FakeClock() });
    const { seen, sink } = collectingSink();
    q2.setDefaultSink(sink);
    q2.restore(unspoken);
    await vi.waitUntil(() => seen.length === 3, SOON);
    expect(spokenTexts(seen)).toEqual(['x', 'y', 'z']);
  });
});
