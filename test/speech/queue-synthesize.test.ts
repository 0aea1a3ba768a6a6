import { describe, expect, it } from 'vitest';
import type { NewHistoryEntry } from '../../src/db/generation-history.ts';
import type { CachedAudio } from '../../src/speech/synthesis/cache.ts';
import type { Charge } from '../../src/billing/ledger.ts';
import type { BudgetRefusal } from '../../src/billing/policy.ts';
import { BudgetRefusedError } from '../../src/billing/errors.ts';
import {
  createSynthesizer,
  playableNow,
  type AudioCacheLike,
  type BudgetLike,
  type SynthesisRequest,
  type TtsClientLike,
} from '../../src/speech/synthesis/synthesize.ts';
import { fakeLedger } from './queue-fakes.ts';

function fakes(
  options: { refuse?: boolean | ((charges: readonly Charge[]) => BudgetRefusal | undefined); failSpeak?: boolean | 'bad_request' } = {},
) {
  const log: string[] = [];
  const speakSignals: AbortSignal[] = [];
  const gates: Array<() => void> = [];
  const store = new Map<string, CachedAudio>();
  const client: TtsClientLike = {
    // Reports to the billing hooks as the real client does (src/tts/client.ts).
    async speak(req, { key, signal, billing } = {}) {
      await billing?.beforeSend?.({ endpoint: 'standard', attempt: 1 });
      log.push(`speak:${key}:${req.text}`);
      speakSignals.push(signal!);
      const billed = (outcome: 'charged' | 'maybe_charged' | 'not_charged') =>
        billing?.onEvent?.({ kind: 'attempt', endpoint: 'standard', attempt: 1, outcome, ...(outcome === 'charged' ? { pk: 7 } : {}) });
      await new Promise<void>((resolve, reject) => {
        gates.push(resolve);
        signal?.addEventListener(
          'abort',
          () => {
            billed('maybe_charged'); // hung up while the service was working
            reject(signal.reason);
          },
          { once: true },
        );
      });
      if (options.failSpeak === 'bad_request') {
        billed('not_charged');
        throw Object.assign(new Error('bad'), { code: 'invalid_input' });
      }
      if (options.failSpeak) {
        billed('maybe_charged');
        throw Object.assign(new Error('boom'), { code: 'internal_error' });
      }
      billed('charged');
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
  const refuse =
    typeof options.refuse === 'function'
      ? options.refuse
      : options.refuse
        ? (charges: readonly Charge[]): BudgetRefusal => ({
            scope: 'user',
            used: 90,
            limit: 100,
            requested: charges[0]!.chars,
            remaining: 10,
            resetsAt: 5,
          })
        : undefined;
  const budget: BudgetLike = fakeLedger({ log, ...(refuse ? { refuse } : {}) });
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
  it('GIVEN a miss THEN holds, speaks keyed by guild, records the charge when answered, downloads, caches and records per author', async () => {
    const f = fakes();
    const p = f.synth.synthesize(req('おはよう。草', [charge('a', 4), charge('b', 2)]));
    await tick();
    f.openGates();
    const audio = await p;
    // Back as soon as it is downloaded, playable from memory; the cache write follows.
    expect(audio).toMatchObject({ fromCache: false, mp3: expect.any(Buffer) });
    expect(await audio.cached).toBe(true);
    expect(playableNow(audio)).toMatchObject({ mp3Path: expect.stringContaining('.mp3'), oggPath: expect.stringContaining('.ogg') });
    // What was handed out is never changed: the files are read through playableNow.
    expect(audio.oggPath).toBeUndefined();
    // The charge is recorded as soon as the service answered, before the download that may still fail.
    expect(f.log).toEqual(['reserve:a=4,b=2', 'sent', 'speak:g1:おはよう。草', 'charge', 'download:http://x/おはよう。草.mp3', 'put']);
    expect(f.history.map((h) => [h.userId, h.characters, h.pk])).toEqual([
      ['a', 4, 7],
      ['b', 2, 7],
    ]);
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

  it('GIVEN a request riding on an identical one in flight THEN its grant is unneeded at once, not when the call ends', async () => {
    const f = fakes();
    const unneeded: string[] = [];
    const a = f.synth.synthesize(req('草'), { grantUnneeded: () => unneeded.push('first') });
    const b = f.synth.synthesize({ ...req('草'), guildId: 'g2' }, { grantUnneeded: () => unneeded.push('second') });
    await tick();
    // The call is still held at the service: the second caller's grant can already go back to the window.
    expect(unneeded).toEqual(['second']);
    f.openGates();
    await Promise.all([a, b]);
    expect(unneeded).toEqual(['second']);
  });

  it('GIVEN one of two waiters aborts THEN the shared call goes on; when all abort it is cancelled and, sent already, kept as uncertain', async () => {
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
    // The request had left: the service may have charged it, so it is not released.
    expect(f.log).toContain('uncertain');
    expect(f.log).not.toContain('release');
    expect(f.log).not.toContain('charge');
  });

  it('GIVEN a waiter aborts before its request is sent THEN the hold is released', async () => {
    const f = fakes();
    const c = new AbortController();
    c.abort(new Error('skip'));
    await expect(f.synth.synthesize(req('early'), { signal: c.signal })).rejects.toMatchObject({ code: 'aborted' });
    expect(f.log).toEqual([]);
  });

  it('GIVEN the budget refuses THEN a typed error carries the numbers and nothing is sent', async () => {
    const f = fakes({ refuse: true });
    const err = await f.synth.synthesize(req('abc')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetRefusedError);
    expect((err as BudgetRefusedError).refusal).toEqual({ scope: 'user', used: 90, limit: 100, requested: 3, remaining: 10, resetsAt: 5 });
    expect((err as BudgetRefusedError).code).toBe('budget_refused');
    expect(f.log.some((l) => l.startsWith('speak'))).toBe(false);
  });

  it('GIVEN the service fails with a 5xx THEN the hold stays as uncertain and the error passes through', async () => {
    const f = fakes({ failSpeak: true });
    const p = f.synth.synthesize(req('abc'));
    await tick();
    f.openGates();
    await expect(p).rejects.toMatchObject({ code: 'internal_error' });
    expect(f.log.slice(-1)).toEqual(['uncertain']);
    expect(f.store.size).toBe(0);
  });

  it('GIVEN the service refuses with a 4xx THEN the hold is released', async () => {
    const f = fakes({ failSpeak: 'bad_request' });
    const p = f.synth.synthesize(req('abc'));
    await tick();
    f.openGates();
    await expect(p).rejects.toMatchObject({ code: 'invalid_input' });
    expect(f.log.slice(-1)).toEqual(['release']);
  });

  // A request shared by two guilds must not show one guild's members the other's numbers.
  it('GIVEN a shared request refused by the sending guild’s budget THEN the other guild is served on its own budget', async () => {
    const refusal = (charges: readonly Charge[]): BudgetRefusal | undefined =>
      charges[0]!.guildId === 'g1'
        ? { scope: 'guild', guildId: 'g1', used: 3000, limit: 3000, requested: 2, remaining: 0, resetsAt: 5 }
        : undefined;
    const f = fakes({ refuse: refusal });
    const a = f.synth.synthesize(req('草'));
    const b = f.synth.synthesize({ ...req('草'), guildId: 'g2', charges: [{ ...charge('u9', 1), guildId: 'g2' }] });
    const ea = await a.catch((e: unknown) => e);
    expect(ea).toBeInstanceOf(BudgetRefusedError);
    expect((ea as BudgetRefusedError).refusal).toMatchObject({ scope: 'guild', guildId: 'g1' });
    await tick();
    f.openGates();
    const rb = await b;
    expect(rb.fromCache).toBe(false);
    expect(f.log.filter((l) => l.startsWith('reserve'))).toEqual(['reserve:u1=1', 'reserve:u9=1']);
  });

  it('GIVEN a shared request refused for both guilds THEN each guild gets its own numbers', async () => {
    const refusal = (charges: readonly Charge[]): BudgetRefusal => {
      const g = charges[0]!.guildId;
      return g === 'g1'
        ? { scope: 'guild', guildId: 'g1', used: 3000, limit: 3000, requested: 1, remaining: 0, resetsAt: 5 }
        : { scope: 'user', guildId: 'g2', userId: 'u9', used: 999, limit: 1000, requested: 1, remaining: 1, resetsAt: 5 };
    };
    const f = fakes({ refuse: refusal });
    const [ea, eb] = await Promise.all([
      f.synth.synthesize(req('草')).catch((e: unknown) => e),
      f.synth.synthesize({ ...req('草'), guildId: 'g2', charges: [{ ...charge('u9', 1), guildId: 'g2' }] }).catch((e: unknown) => e),
    ]);
    expect((ea as BudgetRefusedError).refusal).toMatchObject({ guildId: 'g1', used: 3000 });
    expect((eb as BudgetRefusedError).refusal).toMatchObject({ guildId: 'g2', userId: 'u9', used: 999 });
    expect((eb as BudgetRefusedError).guildId).toBe('g2');
  });
});
