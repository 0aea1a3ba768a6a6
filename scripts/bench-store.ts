// `npm run bench:store`: what writing every accepted message to SQLite costs.
//  1. Per message, uncontended: the journal's add (on accept) and remove (when finished), as the
//     scheduler calls them. Target: p99 of add + remove under 1 ms.
//  2. Two processes: another process holds the database's write lock in long transactions while
//     this one runs a 20 ms audio loop (the way @discordjs/voice schedules frames) and accepts 50
//     messages a second. Once with the store (busy_timeout 0, writes kept in memory, in order,
//     and retried while the lock is held), once with the same writes on a connection that waits
//     for the lock inside SQLite (busy_timeout 5000, the bot's earlier policy) as the baseline.
//     Target: no store call blocks the thread for a frame (20 ms) or more; every message ends up
//     written and deleted once the lock is free. Prints numbers; asserts nothing (shared machine).
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/database.ts';
import { PendingUtteranceStore } from '../src/speech/queue/journal.ts';
import type { QueueJournal } from '../src/speech/queue/options.ts';
import type { Utterance } from '../src/speech/queue/utterance.ts';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 5_000);
const CONTENTION_MS = Number(process.env.BENCH_CONTENTION_MS ?? 4_000);
/** How long the other process keeps the write lock each time (a long transaction: a big eviction, a migration). */
const HOLD_MS = Number(process.env.BENCH_HOLD_MS ?? 150);

// ---- the other process: holds the write lock again and again --------------------------------
if (process.argv[2] === '--hold') {
  const db = openDatabase(process.argv[3]!, { migrate: false });
  const pause = new Int32Array(new SharedArrayBuffer(4));
  // Only once the parent has the message: the loop below blocks this process's event loop.
  await new Promise<void>((resolve) => process.send!('holding', () => resolve()));
  const until = Date.now() + Number(process.argv[4]);
  while (Date.now() < until) {
    db.exec('BEGIN IMMEDIATE'); // takes the write lock
    Atomics.wait(pause, 0, 0, HOLD_MS); // keeps the lock, as a slow transaction would
    db.exec('COMMIT');
    Atomics.wait(pause, 0, 0, 5);
  }
  db.close();
  process.exit(0);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const fmt = (ms: number) => `${ms < 1 ? (ms * 1000).toFixed(0) + ' µs' : ms.toFixed(1) + ' ms'}`;

function utterance(n: number): Utterance {
  return {
    id: `bench-${n}-${Math.random().toString(36).slice(2)}`,
    guildId: '1100000000000000001',
    userId: '1000000000000000002',
    channelId: '1100000000000000101',
    kind: 'auto',
    text: 'alice、今日はいい天気ですね。散歩に行きましょう',
    lang: 'ja',
    voice: 'ja-JP-Wavenet-B',
    speed: 1,
    pitch: 0,
    meta: { delivery: { kind: 'message', channelId: '1100000000000000101', messageId: '1574149740155764743' }, lang: 'ja' },
    enqueuedAt: Date.now(),
  };
}

const dir = mkdtempSync(join(tmpdir(), 'bench-store-'));
const file = join(dir, 'bot.sqlite3');
openDatabase(file).close();

// ---- 1. per message, uncontended -------------------------------------------------------------
{
  const store = new PendingUtteranceStore(openDatabase(file, { migrate: false }));
  const add: number[] = [];
  const remove: number[] = [];
  const both: number[] = [];
  for (let i = 0; i < MESSAGES; i++) {
    const u = utterance(i);
    const t0 = performance.now();
    store.add(u);
    const t1 = performance.now();
    store.remove([u.id]);
    const t2 = performance.now();
    add.push(t1 - t0);
    remove.push(t2 - t1);
    both.push(t2 - t0);
  }
  await store.close();
  console.log(`1. per message, uncontended (${MESSAGES} messages, WAL, synchronous=NORMAL)`);
  for (const [name, v] of [
    ['add (on accept)', add],
    ['remove (finished)', remove],
    ['add + remove', both],
  ] as const) {
    console.log(
      `   ${name.padEnd(18)} mean ${fmt(v.reduce((a, b) => a + b, 0) / v.length)}  p50 ${fmt(percentile(v, 50))}  p99 ${fmt(percentile(v, 99))}  max ${fmt(Math.max(...v))}`,
    );
  }
  const p99 = percentile(both, 99);
  console.log(`   target: p99 of add + remove < 1 ms: ${fmt(p99)} ${p99 < 1 ? 'PASS' : 'MISS'}`);
}

// ---- 2. two processes --------------------------------------------------------------------------
interface Run {
  calls: number[];
  frameLate: number[];
  accepted: number;
  leftOnDisk: number;
  unwrittenAtEnd: number;
}

async function contended(journal: QueueJournal & { unwritten?: number; close(): void | Promise<void> }, label: string): Promise<Run> {
  const holder = fork(import.meta.filename, ['--hold', file, String(CONTENTION_MS)], { execArgv: ['--experimental-strip-types'] });
  const holderDone = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
  await new Promise<void>((resolve) => holder.once('message', () => resolve()));
  const calls: number[] = [];
  const frameLate: number[] = [];
  const timed = (fn: () => void) => {
    const t0 = performance.now();
    fn();
    calls.push(performance.now() - t0);
  };
  // The audio loop: a frame every 20 ms against an absolute schedule, as @discordjs/voice does.
  let next = performance.now() + 20;
  let frames = true;
  const frame = () => {
    frameLate.push(Math.max(0, performance.now() - next));
    next += 20;
    if (frames) setTimeout(frame, Math.max(0, next - performance.now()));
  };
  setTimeout(frame, 20);
  // 50 messages a second: accepted now, finished (spoken) 200 ms later.
  let accepted = 0;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      if (performance.now() - started > CONTENTION_MS) {
        clearInterval(tick);
        resolve();
        return;
      }
      const u = utterance(accepted++);
      timed(() => journal.add(u));
      setTimeout(() => timed(() => journal.remove([u.id])), 200);
    }, 20);
  });
  await new Promise((r) => setTimeout(r, 400));
  frames = false;
  await holderDone;
  // Lock free: what was kept in memory is written by the retry timer.
  while ((journal.unwritten ?? 0) > 0) await new Promise((r) => setTimeout(r, 10));
  const unwrittenAtEnd = journal.unwritten ?? 0;
  await journal.close();
  const check = openDatabase(file, { migrate: false });
  const leftOnDisk = check.prepare('SELECT COUNT(*) FROM pending_utterances').pluck().get() as number;
  check.close();
  console.log(`   ${label}`);
  console.log(
    `     store calls      p50 ${fmt(percentile(calls, 50))}  p99 ${fmt(percentile(calls, 99))}  max ${fmt(Math.max(...calls))}  (${calls.length} calls)`,
  );
  console.log(
    `     audio frames     late p50 ${fmt(percentile(frameLate, 50))}  p99 ${fmt(percentile(frameLate, 99))}  max ${fmt(Math.max(...frameLate))}  frames late >= 20 ms: ${frameLate.filter((l) => l >= 20).length} of ${frameLate.length}`,
  );
  console.log(`     accepted ${accepted}, left on disk after all were finished: ${leftOnDisk}`);
  return { calls, frameLate, accepted, leftOnDisk, unwrittenAtEnd };
}

console.log(
  `\n2. two processes: the other holds the write lock ${HOLD_MS} ms at a time for ${CONTENTION_MS / 1000} s; 50 messages/s accepted here`,
);
const ours = await contended(
  new PendingUtteranceStore(openDatabase(file, { migrate: false }), { retryMs: 5, maxRetryMs: 50 }),
  'the store (busy_timeout 0, kept in memory and retried)',
);

// Baseline: the same statements on a connection that waits for the lock inside SQLite (the policy
// every database path of the bot had before the store: busy_timeout 5000).
const waiting = openDatabase(file, { migrate: false });
waiting.pragma('busy_timeout = 5000');
const insert = waiting.prepare(
  'INSERT INTO pending_utterances (id, guild_id, user_id, channel_id, kind, text, lang, voice, speed, pitch, advanced, meta, enqueued_at, saved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)',
);
const del = waiting.prepare('DELETE FROM pending_utterances WHERE id = ?');
const blocking: QueueJournal & { close(): void } = {
  add: (u) => (
    insert.run(
      u.id,
      u.guildId,
      u.userId,
      u.channelId,
      u.kind,
      u.text,
      u.lang ?? null,
      u.voice,
      u.speed,
      u.pitch,
      JSON.stringify(u.meta),
      u.enqueuedAt,
      Date.now(),
    ),
    true
  ),
  remove: (ids) => ids.forEach((id) => del.run(id)),
  close: () => waiting.close(),
};
const baseline = await contended(blocking, 'baseline: the same writes waiting for the lock (busy_timeout 5000)');

const longest = Math.max(...ours.calls);
console.log('\n   targets (the store):');
console.log(`     no store call blocks the thread for a frame: longest ${fmt(longest)} < 20 ms ${longest < 20 ? 'PASS' : 'MISS'}`);
console.log(
  `     every accepted message written and deleted once the lock was free: ${ours.leftOnDisk === 0 && ours.unwrittenAtEnd === 0 ? 'PASS' : 'MISS'} (${ours.leftOnDisk} left)`,
);
console.log(
  `   for comparison, the baseline's longest call: ${fmt(Math.max(...baseline.calls))}; frames late >= 20 ms: ${baseline.frameLate.filter((l) => l >= 20).length}`,
);
rmSync(dir, { recursive: true, force: true });
