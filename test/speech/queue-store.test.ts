import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import type { ReadyUtterance } from '../../src/speech/queue/utterance.ts';
import { PendingUtteranceStore } from '../../src/speech/queue/journal.ts';
import { FakeSynth, msg, sessionOf } from './queue-fakes.ts';
import { FakeClock, settle, SOON } from '../support/clock.ts';

const WORKER = fileURLToPath(new URL('./queue-store-worker.ts', import.meta.url));
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function dbFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'queue-store-'));
  dirs.push(dir);
  const file = join(dir, 'bot.sqlite');
  openDatabase(file).close(); // migrated once, as the bot's main connection does
  return file;
}

/** Rows on disk, read on a connection of its own (what another process would find). */
function onDisk(file: string): number {
  const db = openDatabase(file, { migrate: false });
  try {
    return db.prepare('SELECT COUNT(*) FROM pending_utterances').pluck().get() as number;
  } finally {
    db.close();
  }
}

/** A store on a connection of its own, as the bot opens it. */
function openStore(file: string, clock = new FakeClock()): PendingUtteranceStore {
  return new PendingUtteranceStore(openDatabase(file, { migrate: false }), { clock });
}

describe('PendingUtteranceStore: written on accept, deleted when finished', () => {
  it('GIVEN accepted messages and no clean shutdown (a crash) THEN a new process gets every one back, in order, with its data', async () => {
    const file = dbFile();
    const clock = new FakeClock();
    const store = openStore(file, clock);
    const before = new SpeechScheduler({ synthesize: new FakeSynth({ manual: true }), clock, journal: store });
    before.enqueue(msg('g1', 'a', 'first', { kind: 'say', meta: { messageId: 'm1' }, channelId: 'c1' }));
    before.enqueue(msg('g1', 'b', 'narrated', { kind: 'narrate', advanced: { voice: 'Ruby', tone: 'calm', seed: 3 }, channelId: 'c1' }));
    before.enqueue(msg('g2', 'c', 'other guild', { lang: 'en' }));
    before.enqueue(msg('g1', 'a', 'second', { audience: 'voice:vc1', volume: 0.5 }));
    // On disk at once: nothing waits for a shutdown to save it.
    expect(onDisk(file)).toBe(4);
    // The "crash": this process never closes anything.

    const after = openStore(file, clock);
    const g2 = await after.claim((g) => g === 'g2');
    expect(g2.map((c) => [c.utterance.text, c.restores])).toEqual([['other guild', 1]]);
    const g1 = await after.claim((g) => g === 'g1');
    expect(g1.map((c) => c.utterance.text)).toEqual(['first', 'narrated', 'second']);
    expect(g1[0]!.utterance.meta).toEqual({ messageId: 'm1' });
    expect(g1[1]!.utterance.advanced).toEqual({ voice: 'Ruby', tone: 'calm', seed: 3 });
    // Who may hear it comes back too (merged only within it after the restore); absent stays absent.
    expect(g1.map((c) => c.utterance.audience)).toEqual([undefined, undefined, 'voice:vc1']);
    // As loud as it would have been: a member's volume comes back; none stays none (played as made).
    expect(g1.map((c) => c.utterance.volume)).toEqual([undefined, undefined, 0.5]);

    // Spoken after the restart: gone from disk one by one as each delivery settles.
    const spoken: ReadyUtterance[] = [];
    const q = new SpeechScheduler({ synthesize: new FakeSynth(), clock, journal: after });
    q.setDefaultSink(async (r) => void spoken.push(r));
    q.restore(g1.map((c) => c.utterance));
    await vi.waitUntil(() => spoken.length === 3, SOON);
    await settle();
    // In order within each audience ('second' is another audience's, read beside them).
    expect(spoken.map((r) => r.items[0]!.text).filter((t) => t !== 'second')).toEqual(['first', 'narrated']);
    expect(spoken.map((r) => r.items[0]!.text)).toContain('second');
    expect(onDisk(file)).toBe(1); // only g2's, which this scheduler does not serve
    // Claimed again by another restart: counted, so one that never finishes is given up on.
    expect((await after.claim((g) => g === 'g2'))[0]!.restores).toBe(2);
  });

  it('GIVEN cleared, stale-dropped and failed utterances THEN none is left on disk; close() keeps what it interrupts', async () => {
    const file = dbFile();
    const clock = new FakeClock();
    const store = openStore(file, clock);
    const synth = new FakeSynth({ manual: true, failWhen: (r) => (r.text.includes('broken') ? new Error('boom') : null) });
    const q = new SpeechScheduler({ synthesize: synth, clock, journal: store, prefetch: 1, maxAutoAgeMs: 60_000 });
    const seen: ReadyUtterance[] = [];
    q.setDefaultSink(async (r) => void seen.push(r));
    q.enqueue(msg('g1', 'a', 'broken', { kind: 'say' }));
    await vi.waitUntil(() => synth.calls.length === 1, SOON);
    q.enqueue(msg('g1', 'b', 'too old'));
    await clock.advance(61_000);
    synth.release(0);
    await vi.waitUntil(() => seen.length === 1 && seen[0]!.error !== undefined, SOON);
    await settle();
    expect(q.stats(sessionOf('g1')).dropped).toBe(1);
    expect(onDisk(file)).toBe(0);

    for (const text of ['x1', 'x2']) q.enqueue(msg('g1', 'c', text, { kind: 'say' }));
    expect(onDisk(file)).toBe(2);
    expect(q.clear(sessionOf('g1'), 'clear')).toBe(2);
    expect(onDisk(file)).toBe(0);

    // A delivery cut short by a shutdown stays, to be spoken again after the restart.
    q.setDefaultSink((_r, signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())));
    synth.manual = false;
    q.enqueue(msg('g1', 'd', 'interrupted', { kind: 'say' }));
    q.enqueue(msg('g1', 'd', 'waiting', { kind: 'say' }));
    await vi.waitUntil(() => q.stats(sessionOf('g1')).playing, SOON);
    expect(q.close().map((u) => u.text)).toEqual(['waiting']);
    await settle();
    const back = await openStore(file, clock).claim();
    expect(back.map((c) => c.utterance.text)).toEqual(['interrupted', 'waiting']);
  });

  it('GIVEN another process holding the write lock THEN accepting does not wait: the write is retried and lands once the lock is free', async () => {
    const file = dbFile();
    const store = new PendingUtteranceStore(openDatabase(file, { migrate: false }), { retryMs: 5, maxRetryMs: 20 });
    const q = new SpeechScheduler({ synthesize: new FakeSynth({ manual: true }), clock: new FakeClock(), journal: store });
    const other = openDatabase(file, { migrate: false });
    other.exec('BEGIN IMMEDIATE');
    const started = performance.now();
    const kept = q.enqueue(msg('g1', 'a', 'kept', { kind: 'say' }));
    const cancelled = q.enqueue(msg('g1', 'b', 'cleared before the lock was free', { kind: 'say' }));
    const took = performance.now() - started;
    expect(kept.ok && cancelled.ok).toBe(true);
    // busy_timeout would have blocked this thread for up to 5 s; it returned at once.
    expect(took).toBeLessThan(100);
    expect(store.unwritten).toBe(2);
    if (cancelled.ok) store.remove([cancelled.id]);
    expect(store.unwritten).toBe(1); // an add and its remove cancel out in memory
    await new Promise((r) => setTimeout(r, 50));
    other.exec('COMMIT');
    await vi.waitUntil(() => store.unwritten === 0, { timeout: 10_000 });
    const rows = other.prepare('SELECT text FROM pending_utterances').all();
    expect(rows).toEqual([{ text: 'kept' }]);
    other.close();
  });

  it('GIVEN two processes starting together on one file THEN each claims its own guilds with no SQLITE_BUSY error', async () => {
    const file = dbFile();
    const workers = ['g1', 'g2'].map((guild) => startWorker({ file, guild, rounds: 150 }));
    await Promise.all(workers.map((w) => w.ready));
    for (const w of workers) w.go();
    const results = await Promise.all(workers.map((w) => w.done));
    for (const r of results) {
      expect(r.errors).toEqual([]);
      expect(r.mismatches).toBe(0);
      expect(r.claims).toBe(150);
    }
    const db = openDatabase(file, { migrate: false });
    expect(db.prepare('SELECT COUNT(*) AS n FROM pending_utterances').get()).toEqual({ n: 0 });
    db.close();
  }, 60_000);
});

/** The operator's log as the store writes it: level and message. */
function operatorLog(): {
  lines: string[];
  logger: { error(o: object, m?: string): void; warn(o: object, m?: string): void; info(o: object, m?: string): void };
} {
  const lines: string[] = [];
  const at = (level: string) => (_o: object, m?: string) => void lines.push(`${level}: ${m}`);
  return { lines, logger: { error: at('error'), warn: at('warn'), info: at('info') } };
}

const texts = (file: string) => {
  const db = openDatabase(file, { migrate: false });
  try {
    return db.prepare('SELECT text FROM pending_utterances ORDER BY seq').pluck().all();
  } finally {
    db.close();
  }
};

describe('PendingUtteranceStore: a disk that refuses writes, a lock held for long', () => {
  afterEach(() => void vi.useRealTimers());

  it('GIVEN the disk refusing writes THEN each new message is refused (not_saved) and not kept in memory, the operator gets one error for the whole outage, and one line when writes land again', () => {
    const file = dbFile();
    const db = openDatabase(file, { migrate: false });
    const { lines, logger } = operatorLog();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const store = new PendingUtteranceStore(db, { logger, retryMs: 5, maxRetryMs: 200 });
    const q = new SpeechScheduler({ synthesize: new FakeSynth({ manual: true }), clock: new FakeClock(), journal: store });
    const spoken = q.enqueue(msg('g1', 'a', 'accepted before', { kind: 'say' }));
    if (!spoken.ok) throw new Error('not accepted');
    // The disk stops taking writes (full, remounted read-only: SQLite says SQLITE_READONLY / SQLITE_FULL alike).
    db.pragma('query_only = ON');
    store.remove([spoken.id]); // spoken meanwhile: its delete waits, and is retried
    const during = Array.from({ length: 200 }, (_, i) => q.enqueue(msg('g1', `m${i % 7}`, `line ${i}`, { kind: 'say' })));
    expect(during.filter((r) => r.ok)).toEqual([]);
    expect(new Set(during.map((r) => (r.ok ? 'ok' : r.reason)))).toEqual(new Set(['not_saved']));
    expect(store.unwritten).toBe(1); // only the delete: nothing refused piles up
    vi.advanceTimersByTime(60_000); // a minute of retries
    expect(lines).toEqual([
      'error: queued speech cannot be written (the disk refuses writes); new messages are refused until it takes them again',
    ]);

    db.pragma('query_only = OFF');
    expect(q.enqueue(msg('g1', 'a', 'accepted after', { kind: 'say' })).ok).toBe(true);
    expect(store.unwritten).toBe(0);
    expect(lines.slice(1)).toEqual(['info: queued speech is written again; new messages are accepted']);
    expect(texts(file)).toEqual(['accepted after']);
    db.close();
  });

  it('GIVEN another process holding the lock for long THEN at most maxUnwritten messages wait in memory, the rest are refused with one error, and all is well once the lock is free', async () => {
    const file = dbFile();
    const { lines, logger } = operatorLog();
    const store = new PendingUtteranceStore(openDatabase(file, { migrate: false }), {
      logger,
      maxUnwritten: 3,
      retryMs: 5,
      maxRetryMs: 20,
    });
    const q = new SpeechScheduler({ synthesize: new FakeSynth({ manual: true }), clock: new FakeClock(), journal: store });
    const other = openDatabase(file, { migrate: false });
    other.exec('BEGIN IMMEDIATE');
    const results = Array.from({ length: 6 }, (_, i) => q.enqueue(msg('g1', `m${i}`, `line ${i}`, { kind: 'say' })));
    expect(results.map((r) => (r.ok ? 'ok' : r.reason))).toEqual(['ok', 'ok', 'ok', 'not_saved', 'not_saved', 'not_saved']);
    expect(store.unwritten).toBe(3);
    expect(lines).toEqual(['error: queued speech cannot be written for now: too many writes wait for the lock; new messages are refused']);
    other.exec('COMMIT');
    await vi.waitUntil(() => store.unwritten === 0, { timeout: 10_000 });
    expect(lines.slice(1)).toEqual(['info: queued speech is written again; new messages are accepted']);
    expect(q.enqueue(msg('g1', 'z', 'after', { kind: 'say' })).ok).toBe(true);
    expect(texts(file)).toEqual(['line 0', 'line 1', 'line 2', 'after']);
    other.close();
  });
});

interface WorkerResult {
  claims: number;
  mismatches: number;
  errors: string[];
}

function startWorker(job: object): { ready: Promise<void>; go: () => void; done: Promise<WorkerResult> } {
  const child = spawn(process.execPath, [WORKER, JSON.stringify(job)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let onReady: () => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.startsWith('ready\n')) onReady();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<WorkerResult>((resolve, reject) => {
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`worker exited ${code}: ${err}`));
      resolve(JSON.parse(out.split('\n').filter(Boolean).at(-1)!) as WorkerResult);
    });
  });
  return { ready, go: () => child.stdin.write('go\n'), done };
}
