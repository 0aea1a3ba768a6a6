import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { HistoryRepo } from '../../src/db/generation-history.ts';
import { DEFAULT_TOKEN, startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { CharacterBudget } from '../../src/billing/budget.ts';
import { AudioCache } from '../../src/speech/synthesis/cache.ts';
import { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import type { ReadyUtterance } from '../../src/speech/queue/utterance.ts';
import { createSynthesizer } from '../../src/speech/synthesis/synthesize.ts';
import { TtsClient } from '../../src/tts/client.ts';
import { createMemoryLimiter } from '../../src/tts/limiter/fair.ts';
import { msg } from './queue-fakes.ts';

// The whole pipeline over loopback: scheduler -> synthesizer -> real client (fair limiter) ->
// emulator; real AudioCache (ffmpeg transcode) and CharacterBudget on a temp SQLite file.
describe('SpeechScheduler end to end (emulator, real client, cache and budget)', () => {
  let emulator: Emulator;
  let dir: string;
  let db: Db;
  let budget: CharacterBudget;
  let history: HistoryRepo;
  let q: SpeechScheduler;
  let seen: ReadyUtterance[];

  beforeAll(async () => {
    emulator = await startEmulator({ control: true });
    dir = mkdtempSync(join(tmpdir(), 'queue-e2e-'));
    db = openDatabase(join(dir, 'bot.sqlite'));
    budget = new CharacterBudget({ db });
    history = new HistoryRepo(db);
    const client = new TtsClient({
      token: DEFAULT_TOKEN,
      baseUrl: emulator.baseUrl,
      limiter: createMemoryLimiter(),
      download: { allowLoopback: true },
    });
    const cache = new AudioCache({ db, dir: join(dir, 'cache') });
    q = new SpeechScheduler({ synthesize: createSynthesizer({ client, cache, budget, history }) });
  });
  afterAll(async () => {
    q?.close();
    await emulator?.close();
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    seen = [];
    q.setDefaultSink(async (r) => void seen.push(r));
  });

  it('GIVEN a phrase already spoken THEN saying it again makes zero requests to the service', async () => {
    q.enqueue(msg('g1', 'u1', 'おはよう', { lang: 'ja' }));
    await vi.waitUntil(() => seen.length === 1, { timeout: 20_000 });
    expect(seen[0]!.error).toBeUndefined();
    expect(seen[0]!.audio).toMatchObject({ fromCache: false });
    expect(emulator.requests().filter((r) => r.target === 'standard')).toHaveLength(1);

    emulator.clearRequests();
    q.enqueue(msg('g1', 'u2', 'おはよう', { lang: 'ja' }));
    await vi.waitUntil(() => seen.length === 2, { timeout: 20_000 });
    const hit = seen[1]!;
    expect(hit.audio).toMatchObject({ fromCache: true });
    expect(existsSync(hit.audio!.oggPath!)).toBe(true);
    expect(hit.audio!.durationMs).toBeGreaterThan(0);
    expect(emulator.requests()).toEqual([]);
    // A cache hit costs the second author nothing.
    expect((await budget.usage({ guildId: 'g1', userId: 'u2' })).used).toBe(0);
  });

  it('GIVEN 20 queued auto messages THEN at most 5 requests reach the service, order is kept and each author pays their share', async () => {
    emulator.clearRequests();
    const texts = Array.from({ length: 20 }, (_, i) => `テスト${i}番`);
    texts.forEach((t, i) => expect(q.enqueue(msg('g1', `w${i % 4}`, t, { lang: 'ja' })).ok).toBe(true));
    await vi.waitUntil(() => seen.flatMap((r) => r.items).length === 20, { timeout: 20_000 });
    expect(seen.every((r) => r.error === undefined)).toBe(true);
    expect(seen.flatMap((r) => r.items.map((u) => u.text))).toEqual(texts);
    const requests = emulator.requests().filter((r) => r.target === 'standard');
    expect(requests.length).toBeLessThanOrEqual(5);
    expect(requests.every((r) => r.status === 200)).toBe(true);
    // The service read the merged text; the budget charged each author for their own messages.
    const sent = requests.map((r) => (r.body as { text: string }).text);
    expect(sent.join('。')).toBe(texts.join('。'));
    const charged = await Promise.all([0, 1, 2, 3].map(async (w) => (await budget.usage({ guildId: 'g1', userId: `w${w}` })).used));
    const totalSent = sent.reduce((n, t) => n + [...t].length, 0);
    expect(charged.reduce((a, b) => a + b, 0)).toBe(totalSent);
    const recorded = db.prepare("SELECT SUM(characters) FROM generation_history WHERE guild_id = 'g1' AND user_id LIKE 'w%'").pluck().get();
    expect(recorded).toBe(totalSent);
  });
});
