import { describe, expect, it } from 'vitest';
import type { NewHistoryEntry } from '../../src/db/repositories.ts';
import type { CachedAudio } from '../../src/speech/cache.ts';
import type { Reservation } from '../../src/speech/budget.ts';
import {
  BudgetRefusedError,
  createSynthesizer,
  type AudioCacheLike,
  type BudgetLike,
  type SynthesisRequest,
  type TtsClientLike,
} from '../../src/speech/synthesize.ts';

function fakes(options: { refuse?: boolean; failSpeak?: boolean } = {}) {
  const log: string[] = [];
  const speakSignals: AbortSignal[] = [];
  const gates: Array<() => void> = [];
  const store = new Map<string, CachedAudio>();
  const client: TtsClientLike = {
    async speak(req, { key, signal } = {}) {
      log.push(`speak:${key}:${req.text}`);
      speakSignals.push(signal!);
      await new Promise<void>((resolve, reject) => {
        gates.push(resolve);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
      if (options.failSpeak) throw Object.assign(new Error('boom'), { code: 'internal_error' });
      return { url: `http://x/${req.text}.mp3`, pk: 7, text: req.text, substituted: {} };
    },
    async narrate() {
      throw new Error('not used');
    },
    async download(url) {
      log.push(`download:${url}`);
      return Buffer.from('mp3');
    },
  };
  const cache: AudioCacheLike = {
    get: async (k) => store.get(k) ?? null,
    put: async (k) => {
      const e = { key: k, mp3Path: `/c/${k}.mp3`, oggPath: `/c/${k}.ogg`, mp3Bytes: 3, durationMs: 1234 };
      store.set(k, e);
      log.push('put');
      return e;
    },
  };
  const reservation = (charges: Reservation['charges']): Reservation => ({ id: 'r', periodStart: 0, charges, total: 0, createdAt: 0 });
  const budget: BudgetLike = {
    reserve(charges) {
      log.push(`reserve:${charges.map((c) => `${c.userId}=${c.chars}`).join(',')}`);
      if (options.refuse) return { ok: false, refusal: { scope: 'user', used: 90, limit: 100, requested: charges[0]!.chars, remaining: 10, resetsAt: 5 } };
      return { ok: true, reservation: reservation(charges) };
    },
    commit: () => log.push('commit'),
    release: () => log.push('release'),
  };
  const history: NewHistoryEntry[] = [];
  const synth = createSynthesizer({ client, cache, budget, history: { record: (e) => history.push(e) } });
  const openGates = () => gates.splice(0).forEach((g) => g());
  return { synth, log, history, store, openGates, speakSignals };
}

const charge = (userId: string, chars: number) => ({ guildId: 'g1', userId, endpoint: 'standard' as const, chars });
const req = (text: string, charges = [charge('u1', [...text].length)]): SynthesisRequest => ({
  guildId: 'g1',
  endpoint: 'standard',
  text,
  voice: 'ja-JP-Wavenet-B',
  speed: 1,
  pitch: 0,
  charges,
});

const tick = () => new Promise((r) => setImmediate(r));

describe('createSynthesizer', () => {
  it('GIVEN a miss THEN reserves, speaks keyed by guild, downloads, caches, commits and records per author', async () => {
    const f = fakes();
    const p = f.synth.synthesize(req('おはよう。草', [charge('a', 4), charge('b', 2)]));
    await tick();
    f.openGates();
    const audio = await p;
    expect(audio).toMatchObject({ fromCache: false, mp3Path: expect.stringContaining('.mp3'), durationMs: 1234 });
    expect(f.log).toEqual(['reserve:a=4,b=2', 'speak:g1:おはよう。草', 'download:http://x/おはよう。草.mp3', 'commit', 'put']);
    expect(f.history.map((h) => [h.userId, h.characters, h.pk])).toEqual([['a', 4, 7], ['b', 2, 7]]);
  });

  it('GIVEN a cache hit THEN no budget and no request', async () => {
    const f = fakes();
    const first = f.synth.synthesize(req('lol'));
    await tick();
    f.openGates();
    await first;
    f.log.length = 0;
    const audio = await f.synth.synthesize(req('lol'));
    expect(audio.fromCache).toBe(true);
    expect(f.log).toEqual([]);
  });

  it('GIVEN identical requests in flight THEN they share one call', async () => {
    const f = fakes();
    const a = f.synth.synthesize(req('草'));
    const b = f.synth.synthesize({ ...req('草'), guildId: 'g2' });
    await tick();
    f.openGates();
    const [ra, rb] = await Promise.all([a, b]);
    expect(f.log.filter((l) => l.startsWith('speak'))).toHaveLength(1);
    expect(f.log.filter((l) => l.startsWith('reserve'))).toHaveLength(1);
    expect(ra.key).toBe(rb.key);
    expect(rb.shared).toBe(true);
  });

  it('GIVEN one of two waiters aborts THEN the shared call goes on; when all abort it is cancelled and released', async () => {
    const f = fakes();
    const c1 = new AbortController();
    const c2 = new AbortController();
    const a = f.synth.synthesize(req('hello'), { signal: c1.signal });
    const b = f.synth.synthesize(req('hello'), { signal: c2.signal });
    await tick();
    c1.abort(new Error('skip'));
    await expect(a).rejects.toMatchObject({ code: 'aborted' });
    expect(f.speakSignals[0]!.aborted).toBe(false);
    c2.abort(new Error('skip'));
    await expect(b).rejects.toMatchObject({ code: 'aborted' });
    expect(f.speakSignals[0]!.aborted).toBe(true);
    await tick();
    expect(f.log).toContain('release');
    expect(f.log).not.toContain('commit');
  });

  it('GIVEN the budget refuses THEN a typed error carries the numbers and nothing is sent', async () => {
    const f = fakes({ refuse: true });
    const err = await f.synth.synthesize(req('abc')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetRefusedError);
    expect((err as BudgetRefusedError).refusal).toEqual({ scope: 'user', used: 90, limit: 100, requested: 3, remaining: 10, resetsAt: 5 });
    expect((err as BudgetRefusedError).code).toBe('budget_refused');
    expect(f.log.some((l) => l.startsWith('speak'))).toBe(false);
  });

  it('GIVEN the service fails THEN the reservation is released and the error passes through', async () => {
    const f = fakes({ failSpeak: true });
    const p = f.synth.synthesize(req('abc'));
    await tick();
    f.openGates();
    await expect(p).rejects.toMatchObject({ code: 'internal_error' });
    expect(f.log).toContain('release');
    expect(f.log).not.toContain('commit');
    expect(f.store.size).toBe(0);
  });
});
