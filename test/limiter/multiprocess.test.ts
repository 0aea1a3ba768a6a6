import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { tempDb } from '../support/temp-db.ts';

// Acceptance: two bot processes sharing one SQLite file never send more than N standard requests
// in any window of the service, so the IP never sees a 429 (spec: Limits). The window is scaled
// down (5 per 1 s instead of 30 per 60 s) to keep the test to a few seconds; the emulator enforces
// the same scaled limit and its request log is the referee.
const LIMIT = 5;
const WINDOW_MS = 1_000;
const TOKEN = '0123456789abcdef'.repeat(4);
const WORKER = fileURLToPath(new URL('./shard-worker.ts', import.meta.url));

interface WorkerResult {
  guild: string;
  status: number;
  grantedAt: number;
}

interface Shard {
  ready: Promise<void>;
  go(): void;
  done: Promise<WorkerResult[]>;
}

/** Starts a shard process; it opens the database, says "ready", and runs on go(). */
function startShard(config: object): Shard {
  const child = spawn(process.execPath, [WORKER, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.startsWith('ready\n')) onReady();
  });
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const done = new Promise<WorkerResult[]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`shard exited ${code}: ${err.slice(-2_000)}`));
      resolve(JSON.parse(out.slice('ready\n'.length)) as WorkerResult[]);
    });
  });
  return { ready: Promise.race([ready, done.then(() => {})]), go: () => child.stdin.end('go\n'), done };
}

describe('SQLite-backed limiter across processes', () => {
  let emulator: Emulator;
  let db: ReturnType<typeof tempDb>;

  beforeAll(async () => {
    emulator = await startEmulator({
      control: true,
      rate: { standard: { limit: LIMIT, windowMs: WINDOW_MS }, advanced: { limit: LIMIT, windowMs: WINDOW_MS } },
    });
    db = tempDb(); // migrated here once, so the shards start on a ready schema
  });
  afterAll(async () => {
    await emulator?.close();
    db?.close();
  });

  it('two shards together stay within N requests per window at the service and get no 429', async () => {
    // The margin covers the time from a grant to the service counting the request (the shard
    // being scheduled, the emulator's own event loop stamping the arrival). With a 1 s window a
    // loaded 2-core machine stretches that past 500 ms (seen: two 429s), so the test gives it a
    // full window, as production's 1 s margin covers its 60 s window. Sharing is still what is
    // tested: without the shared store the two shards send 2 x LIMIT at once.
    const base = {
      dbFile: db.file,
      baseUrl: emulator.baseUrl,
      token: TOKEN,
      limit: LIMIT,
      windowMs: WINDOW_MS,
      marginMs: 1_000,
      perGuild: 4,
    };
    const shards = [startShard({ ...base, guilds: ['g1', 'g2'] }), startShard({ ...base, guilds: ['g3'] })];
    await Promise.all(shards.map((s) => s.ready));
    for (const s of shards) s.go();
    const [one, two] = (await Promise.all(shards.map((s) => s.done))) as [WorkerResult[], WorkerResult[]];
    const results = [...one, ...two];
    expect(results).toHaveLength(12);
    expect(results.filter((r) => r.status !== 200)).toEqual([]);

    const seen = emulator.requests().filter((r) => r.target === 'standard');
    expect(seen).toHaveLength(12);
    expect(seen.filter((r) => r.status === 429)).toHaveLength(0);
    const times = seen.map((r) => r.at).sort((a, b) => a - b);
    for (const t of times) {
      const inWindow = times.filter((u) => u > t - WINDOW_MS && u <= t).length;
      expect(inWindow).toBeLessThanOrEqual(LIMIT);
    }
    // The shards really contended: their requests overlapped in time.
    const span = (rs: WorkerResult[]) => [Math.min(...rs.map((r) => r.grantedAt)), Math.max(...rs.map((r) => r.grantedAt))] as const;
    const [oneStart, oneEnd] = span(one);
    const [twoStart, twoEnd] = span(two);
    expect(oneStart < twoEnd && twoStart < oneEnd).toBe(true);
  });
});
