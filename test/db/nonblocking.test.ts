// The SQLite driver (better-sqlite3) runs on the thread that also drives the 20 ms audio loop, so no
// database path may wait on this thread for a lock another process holds. Another process takes
// SQLite's write lock and holds it; every write path of the bot is started meanwhile. Each must
// leave the event loop running (timers keep firing: the audio loop is a timer) and finish once
// the lock is free. The old policy (busy_timeout 5000) froze the whole thread until the lock
// was released. Timings are measured by `npm run bench:dbwait`; this asserts the behaviour.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { createRepositories } from '../../src/db/repositories.ts';
import { CharacterBudget } from '../../src/billing/budget.ts';
import { AudioCache } from '../../src/speech/synthesis/cache.ts';
import { PendingUtteranceStore } from '../../src/speech/queue/journal.ts';
import { createSqliteLimiter } from '../../src/tts/limiter/fair.ts';

const HOLDER = fileURLToPath(new URL('../../scripts/db-lock-holder.ts', import.meta.url));
const HOLD_MS = 2_000;

let dir: string;
let file: string;
let db: Db;
let holder: ChildProcess | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'nonblocking-'));
  file = join(dir, 'bot.db');
  db = openDatabase(file);
});
afterEach(() => {
  holder?.kill('SIGKILL');
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Another process takes the write lock and holds it for HOLD_MS; resolves once it holds it, with
 * the earliest time the lock can be free again (it cannot have been taken before the spawn).
 */
async function lockElsewhere(): Promise<{ released: Promise<void>; freeAtTheEarliest: number }> {
  const freeAtTheEarliest = Date.now() + HOLD_MS;
  holder = spawn(process.execPath, ['--experimental-strip-types', HOLDER, file, String(HOLD_MS), '0', '1'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  let onLocked: () => void;
  let onDone: () => void;
  const locked = new Promise<void>((r) => (onLocked = r));
  const released = new Promise<void>((r) => (onDone = r));
  holder.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('locked')) onLocked();
    if (out.includes('done')) onDone();
  });
  await locked;
  return { released, freeAtTheEarliest };
}

/** Runs `start` while the lock is held elsewhere; returns what happened while it was held. */
async function whileLocked<T>(start: () => Promise<T>) {
  const { released, freeAtTheEarliest } = await lockElsewhere();
  let ticks = 0;
  const audioLoop = setInterval(() => ticks++, 5); // the 20 ms audio loop is a timer like this one
  let settled = false;
  let settledAt = 0;
  const result = start().finally(() => {
    settled = true;
    settledAt = Date.now();
  });
  // The calls above returned at once; the loop keeps turning while they wait (the lock is held
  // for HOLD_MS: a blocked thread would not tick before it is released).
  await vi.waitUntil(() => ticks > 5, { timeout: HOLD_MS, interval: 1 });
  const during = { ticks, settled };
  // Settled only once the lock could be free: by the clock, not by which of the holder's "done" and
  // the retried writes this process happens to see first (a race on a loaded machine).
  await released;
  const value = await result;
  const releasedFirst = settledAt >= freeAtTheEarliest;
  clearInterval(audioLoop);
  return { during, releasedFirst, value };
}

describe('no database write waits on the audio thread', () => {
  it('budget reservation and charge, rate-window grant, cache index, jobs, history, settings, pending utterances', async () => {
    const repos = createRepositories(db);
    const budget = new CharacterBudget({ db });
    const limiter = createSqliteLimiter(db);
    const cache = new AudioCache({ db, dir: join(dir, 'audio'), transcode: async (mp3) => mp3 });
    const pending = new PendingUtteranceStore(db);
    const mp3 = Buffer.from('ID3 not really audio');

    const held = await budget.reserve([{ guildId: 'g1', userId: 'u1', endpoint: 'standard', chars: 10 }]);
    if (!held.ok) throw new Error('refused');

    const { during, releasedFirst, value } = await whileLocked(() =>
      Promise.all([
        budget.reserve([{ guildId: 'g1', userId: 'u2', endpoint: 'standard', chars: 5 }]).then((r) => r.ok),
        budget.charge(held.reservation),
        limiter.acquire('standard', { key: 'g1' }).then(() => 'granted'),
        cache.put('a'.repeat(64), mp3).then((e) => e.key.length),
        repos.jobs
          .insert({
            jobId: 'j1',
            jobToken: 't',
            guildId: 'g1',
            userId: 'u1',
            channelId: 'c1',
            delivery: null,
            request: { text: 'hello there' },
          })
          .then((j) => j.jobId),
        repos.history
          .record({ pk: 1, endpoint: 'standard', url: null, voice: 'v', characters: 10, text: 'x', guildId: 'g1', userId: 'u1' })
          .then(() => 'recorded'),
        repos.guildSettings.update('g1', { maxLength: 50 }).then((s) => s.maxLength),
        repos.dictionary.add('g1', 'w', 'わら', 'u1'),
        pending.claim().then((items) => items.length),
      ]),
    );
    expect(during.settled).toBe(false); // still waiting for the lock...
    expect(during.ticks).toBeGreaterThan(5); // ...while the event loop kept running
    expect(releasedFirst).toBe(true);
    expect(value).toEqual([true, 'charged', 'granted', 64, 'j1', 'recorded', 50, 'added', 0]);
    expect((await budget.accountUsage()).charged).toBe(10);
  });
});

describe('PendingUtteranceStore.claim', () => {
  it('GIVEN another process writes between its read and its update THEN both claim their rows, nothing twice, no SQLITE_BUSY_SNAPSHOT', async () => {
    const seed = new PendingUtteranceStore(db);
    const utterance = (id: string, guildId: string) => ({
      id,
      guildId,
      userId: 'u',
      channelId: 'c',
      kind: 'auto' as const,
      text: id,
      voice: 'v',
      speed: 1,
      pitch: 0,
      enqueuedAt: 0,
    });
    for (const u of [utterance('a1', 'gA'), utterance('b1', 'gB'), utterance('a2', 'gA'), utterance('b2', 'gB')]) seed.add(u);
    expect(seed.unwritten).toBe(0);
    const other = openDatabase(file); // the second process starting at the same moment
    try {
      const mine = new PendingUtteranceStore(db);
      const theirs = new PendingUtteranceStore(other);
      let theirClaim: Promise<{ utterance: { id: string } }[]> | undefined;
      // `owns` runs between the read and the updates: the other process claims its rows right then.
      const claimed = await mine.claim((guildId) => {
        theirClaim ??= theirs.claim((g) => g === 'gB');
        return guildId === 'gA';
      });
      const theirsClaimed = await theirClaim!;
      expect(claimed.map((c) => c.utterance.id)).toEqual(['a1', 'a2']);
      expect(theirsClaimed.map((c) => c.utterance.id)).toEqual(['b1', 'b2']);
      // Rows stay until spoken; each was claimed exactly once.
      expect(db.prepare('SELECT id, restores FROM pending_utterances ORDER BY seq').all()).toEqual(
        ['a1', 'b1', 'a2', 'b2'].map((id) => ({ id, restores: 1 })),
      );
    } finally {
      other.close();
    }
  });
});
