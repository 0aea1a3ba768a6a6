import { describe, expect, it, vi } from 'vitest';
import type { QueueJournal } from '../../src/speech/queue/options.ts';
import { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import type { ReadyUtterance, Utterance, UtteranceInput } from '../../src/speech/queue/utterance.ts';
import { AudienceQueue, type Forming } from '../../src/speech/queue/audience-queue.ts';
import { withdrawFrom } from '../../src/speech/queue/withdraw.ts';
import { FakeClock, settle, SOON } from '../support/clock.ts';
import { u } from '../support/batching.ts';
import { FakeSynth, msg, sessionOf } from './queue-fakes.ts';

// A deleted message is never read and an edited one is read as edited, wherever it waits: pending,
// in a request being synthesised, in audio ready to play, or playing (src/speech/queue/withdraw.ts).

/** A journal that records its writes: `+id` added, `-id` removed. */
function recordingJournal(): QueueJournal & { log: string[] } {
  const log: string[] = [];
  return { log, add: (x) => (log.push(`+${x.id}:${x.text}`), true), remove: (ids) => void log.push(...ids.map((id) => `-${id}`)) };
}

/** A scheduler whose requests wait for `synth.release(i)` and whose deliveries wait for `finish()` (signal kept). */
function setup() {
  const synth = new FakeSynth({ manual: true });
  const journal = recordingJournal();
  const q = new SpeechScheduler({ synthesize: synth, clock: new FakeClock(), journal, coalesce: { holdMs: 0 } });
  const delivered: Array<{ ready: ReadyUtterance; signal: AbortSignal; finish: () => void }> = [];
  q.setDefaultSink((ready, signal) => new Promise<void>((finish) => delivered.push({ ready, signal, finish })));
  const said = () => delivered.flatMap((d) => d.ready.items.map((x) => x.text));
  const enqueue = (text: string, extra: Partial<UtteranceInput> = {}) => {
    const r = q.enqueue(msg('g1', 'alice', text, { lang: 'ja', meta: text, ...extra }));
    if (!r.ok) throw new Error('refused');
    return r.id;
  };
  const byText = (text: string) => (x: Utterance) => x.meta === text;
  return { synth, journal, q, delivered, said, enqueue, byText };
}

describe('SpeechScheduler.withdraw', () => {
  it('GIVEN a message still pending WHEN it is deleted THEN it is never sent, the others are, and it leaves the journal', async () => {
    const { synth, journal, q, delivered, said, enqueue, byText } = setup();
    enqueue('一つ目');
    await vi.waitUntil(() => synth.calls.length === 1, SOON);
    enqueue('二つ目');
    const gone = enqueue('消される');
    enqueue('三つ目');
    await settle();
    expect(q.withdraw('g1', byText('消される')).map((x) => x.id)).toEqual([gone]);
    expect(journal.log).toContain(`-${gone}`);
    synth.release(0);
    await vi.waitUntil(() => synth.calls.length === 2, SOON);
    expect(synth.calls[1]!.req.text).toBe('二つ目。三つ目');
    delivered[0]!.finish();
    synth.release(1);
    await vi.waitUntil(() => said().length === 3, SOON);
    expect(said()).toEqual(['一つ目', '二つ目', '三つ目']);
  });

  it('GIVEN a merged request being synthesised WHEN one of its messages is deleted THEN the others are asked for without it', async () => {
    const { synth, q, said, enqueue, byText, delivered } = setup();
    enqueue('残る一');
    enqueue('消える');
    enqueue('残る二');
    await vi.waitUntil(() => synth.calls.length === 1, SOON);
    expect(synth.calls[0]!.req.text).toBe('残る一。消える。残る二');
    q.withdraw('g1', byText('消える'));
    expect(synth.calls[0]!.signal?.aborted).toBe(true);
    await vi.waitUntil(() => synth.calls.length === 2, SOON);
    // The new request costs what it reads, nothing for the text taken out; alice paid for these
    // once already (the aborted request), so the server pays for asking again.
    expect(synth.calls[1]!.req.text).toBe('残る一。残る二');
    expect(synth.calls[1]!.req.charges).toMatchObject([
      { guildId: 'g1', userId: 'g1', endpoint: 'standard', chars: [...'残る一。残る二'].length },
    ]);
    synth.release(1);
    await vi.waitUntil(() => delivered.length === 1, SOON);
    expect(said()).toEqual(['残る一', '残る二']);
  });

  it('GIVEN audio ready behind the one playing WHEN a message in it is deleted THEN that audio never plays, the rest is read anew', async () => {
    const { synth, q, said, enqueue, byText, delivered } = setup();
    enqueue('再生中');
    await vi.waitUntil(() => synth.calls.length === 1, SOON);
    synth.release(0);
    await vi.waitUntil(() => delivered.length === 1, SOON);
    enqueue('待つ一');
    enqueue('消える');
    await vi.waitUntil(() => synth.calls.length === 2, SOON);
    synth.release(1);
    await vi.waitUntil(() => q.stats(sessionOf('g1')).ready === 2, SOON);
    q.withdraw('g1', byText('消える'));
    expect(q.stats(sessionOf('g1'))).toMatchObject({ ready: 0, queued: 1 });
    await vi.waitUntil(() => synth.calls.length === 3, SOON);
    expect(synth.calls[2]!.req.text).toBe('待つ一');
    delivered[0]!.finish();
    synth.release(2);
    await vi.waitUntil(() => delivered.length === 2, SOON);
    expect(said()).toEqual(['再生中', '待つ一']);
  });

  it('GIVEN a message playing WHEN it is deleted THEN playback is stopped at once; WHEN one playing is edited THEN it plays on', async () => {
    const { synth, q, enqueue, byText, delivered } = setup();
    enqueue('編集される');
    await vi.waitUntil(() => synth.calls.length === 1, SOON);
    synth.release(0);
    await vi.waitUntil(() => delivered.length === 1, SOON);
    q.withdraw('g1', byText('編集される'), (old) => ({ ...old, text: '編集後' }));
    expect(delivered[0]!.signal.aborted).toBe(false);
    expect(q.withdraw('g1', byText('編集される'))).toHaveLength(1);
    expect(delivered[0]!.signal.aborted).toBe(true);
  });

  it('GIVEN a merged message playing WHEN it is deleted THEN the messages of that audio not reached yet are read afterwards', async () => {
    const { synth, journal, q, enqueue, byText, delivered } = setup();
    enqueue('始まった');
    enqueue('消える');
    const later = enqueue('まだ先');
    await vi.waitUntil(() => synth.calls.length === 1, SOON);
    synth.release(0);
    await vi.waitUntil(() => delivered.length === 1, SOON);
    q.withdraw('g1', byText('消える'));
    expect(delivered[0]!.signal.aborted).toBe(true);
    // Asked for again (its author paid once already: the server pays), and kept on disk meanwhile.
    await vi.waitUntil(() => synth.calls.length === 2, SOON);
    expect(synth.calls[1]!.req.text).toBe('まだ先');
    expect(synth.calls[1]!.req.charges.map((c) => c.userId)).toEqual(['g1']);
    delivered[0]!.finish();
    synth.release(1);
    await vi.waitUntil(() => delivered.length === 2, SOON);
    expect(delivered[1]!.ready.items.map((x) => x.text)).toEqual(['まだ先']);
    expect(journal.log.filter((e) => e === `-${later}`)).toHaveLength(0);
  });

  it('GIVEN a merged request WHEN a member edits theirs again and again THEN the server pays the others once, then the editor', async () => {
    const { synth, q, enqueue, byText } = setup();
    enqueue('他の人');
    enqueue('編集される', { userId: 'bob', meta: 'edited' });
    await vi.waitUntil(() => synth.calls.length === 1, SOON);
    const byUser = (i: number) => Object.fromEntries(synth.calls[i]!.req.charges.map((c) => [c.userId, c.chars]));
    q.withdraw('g1', byText('edited'), (old) => ({ ...old, text: '一回目' }));
    await vi.waitUntil(() => synth.calls.length === 2, SOON);
    expect(byUser(1)).toEqual({ g1: [...'他の人'].length, bob: [...'。一回目'].length });
    for (const [i, text] of ['二回目', '三回目'].entries()) {
      q.withdraw('g1', byText('edited'), (old) => ({ ...old, text }));
      await vi.waitUntil(() => synth.calls.length === 3 + i, SOON);
      expect(byUser(2 + i)).toEqual({ bob: [...`他の人。${text}`].length });
    }
  });

  it('GIVEN an edited message pending or being synthesised THEN the new text is asked for in its place, under the same id on disk', async () => {
    const { synth, journal, q, said, enqueue, byText, delivered } = setup();
    const first = enqueue('古い一');
    enqueue('そのまま');
    await vi.waitUntil(() => synth.calls.length === 1, SOON);
    const second = enqueue('古い二');
    // An update that does not change what is read (a link preview) leaves the request alone.
    q.withdraw('g1', byText('そのまま'), (old) => ({ ...old }));
    expect(synth.calls[0]!.signal?.aborted).toBe(false);
    q.withdraw('g1', byText('古い一'), (old) => ({ ...old, text: '新しい一' }));
    q.withdraw('g1', byText('古い二'), (old) => ({ ...old, text: '新しい二' }));
    expect(synth.calls[0]!.signal?.aborted).toBe(true);
    expect(journal.log).toEqual(expect.arrayContaining([`+${first}:新しい一`, `+${second}:新しい二`]));
    await vi.waitUntil(() => synth.calls.length === 2, SOON);
    expect(synth.calls[1]!.req.text).toBe('新しい一。そのまま。新しい二');
    // The new text is its author's cost; the unchanged message asked for again is the server's.
    const charged = Object.fromEntries(synth.calls[1]!.req.charges.map((c) => [c.userId, c.chars]));
    expect(charged).toEqual({ alice: [...'新しい一。新しい二'].length, g1: [...'。そのまま'].length });
    synth.release(1);
    await vi.waitUntil(() => delivered.length === 1, SOON);
    expect(said()).toEqual(['新しい一', 'そのまま', '新しい二']);
  });
});

describe('withdrawFrom', () => {
  it('GIVEN results of the batch being delivered THEN one carrying a withdrawn message is dropped and unpinned, its others queued first', () => {
    const g = new AudienceQueue('g1', 'text:c1', {} as Forming);
    const [a, b, c, d] = [u('a'), u('b'), u('c'), u('d')];
    let released = 0;
    const audio = () => ({ durationMs: 1, fromCache: false, key: 'k', release: () => void released++ });
    const delivering = (upcoming: ReadyUtterance[]) => {
      for (const s of g.slots) g.remove(s);
      const slot = g.start();
      slot.synthesizing(
        upcoming.flatMap((r) => r.items),
        0,
        Number.POSITIVE_INFINITY,
      );
      slot.ready(upcoming);
      slot.play();
    };
    const upcoming = () => (g.playing?.state.upcoming ?? []).map((r) => r.items);
    delivering([
      { id: a.id, guildId: 'g1', items: [a, b], audio: audio() },
      { id: c.id, guildId: 'g1', items: [c], audio: audio() },
    ]);
    g.replacePending([d]);
    const done = withdrawFrom(g, (x) => (x === b ? null : undefined), new Error('withdrawn'));
    expect(done.removed).toEqual([b]);
    expect(upcoming()).toEqual([[c]]);
    expect(released).toBe(1);
    expect(g.pending).toEqual([{ ...a, paidOnce: true }, d]);
    // Discarded again: the server asked for it once already; the member whose message went pays now.
    delivering([{ id: a.id, guildId: 'g1', items: [g.pending[0]!, c], audio: audio() }]);
    g.replacePending([]);
    withdrawFrom(g, (x) => (x === c ? null : undefined), new Error('withdrawn'));
    expect(g.pending).toEqual([{ ...a, paidOnce: true, chargedTo: c.userId }]);
  });
});
