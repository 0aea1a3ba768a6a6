import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import type { Charge } from '../../src/billing/ledger.ts';

const WORKER = fileURLToPath(new URL('./budget-worker.ts', import.meta.url));
const ANCHOR = Date.UTC(2025, 0, 1);
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'budget-procs-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface WorkerResult {
  accepted: number;
  refused: Record<string, number>;
}

/** Starts one worker; resolves `ready` once it opened the DB, `done` with its result. */
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
      const line = out.split('\n').filter(Boolean).at(-1)!;
      resolve(JSON.parse(line) as WorkerResult);
    });
  });
  return { ready, go: () => child.stdin.write('go\n'), done };
}

async function runTwo(plans: [Charge[][], Charge[][]], limits: object): Promise<WorkerResult[]> {
  const file = join(dir, 'shared.db');
  openDatabase(file).close(); // migrate once up front
  const workers = plans.map((plan, i) => startWorker({ file, plan, commitEvery: 2 + i, limits, anchor: ANCHOR }));
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.go();
  return Promise.all(workers.map((w) => w.done));
}

function sums(sql: string): { key: string; total: number }[] {
  const db = openDatabase(join(dir, 'shared.db'));
  try {
    return db.prepare(sql).all() as { key: string; total: number }[];
  } finally {
    db.close();
  }
}

describe('CharacterBudget across two processes', () => {
  it('GIVEN 80 concurrent reservations on per-user limits THEN exactly the allowed number is accepted and no user goes over', async () => {
    const users = ['u1', 'u2', 'u3', 'u4'];
    const plan = (offset: number): Charge[][] =>
      Array.from({ length: 40 }, (_, i) => [{ guildId: 'g1', userId: users[(i + offset) % 4]!, endpoint: 'standard' as const, chars: 10 }]);
    // Per-user limit 100 = 10 reservations each; 4 users -> exactly 40 of 80 accepted.
    const results = await runTwo([plan(0), plan(1)], { userMonthlyLimit: 100, guildMonthlyLimit: 10_000, accountMonthlyLimit: 10_000 });
    expect(results.reduce((n, r) => n + r.accepted, 0)).toBe(40);
    expect(results.reduce((n, r) => n + (r.refused.user ?? 0), 0)).toBe(40);
    const perUser = sums(
      "SELECT user_id AS key, SUM(chars) AS total FROM character_ledger WHERE state != 'released' GROUP BY user_id ORDER BY user_id",
    );
    expect(perUser).toEqual(users.map((key) => ({ key, total: 100 })));
  });

  it('GIVEN coalesced multi-author reservations from two processes THEN the account limit is never exceeded and is filled exactly', async () => {
    // Each reservation charges two authors in two guilds, 7 + 6 = 13 characters; account limit 390 = 30 reservations.
    const plan = (p: number): Charge[][] =>
      Array.from({ length: 30 }, (_, i) => [
        { guildId: `g${(i + p) % 3}`, userId: `a${i % 5}`, endpoint: 'standard' as const, chars: 7 },
        { guildId: `g${(i + p + 1) % 3}`, userId: `b${i % 7}`, endpoint: 'advanced' as const, chars: 6 },
      ]);
    const results = await runTwo([plan(0), plan(1)], { userMonthlyLimit: 10_000, guildMonthlyLimit: 10_000, accountMonthlyLimit: 390 });
    expect(results.reduce((n, r) => n + r.accepted, 0)).toBe(30);
    expect(results.reduce((n, r) => n + (r.refused.account ?? 0), 0)).toBe(30);
    const [total] = sums('SELECT NULL AS key, SUM(chars) AS total FROM character_ledger');
    expect(total!.total).toBe(390);
    // Atomic: no reservation left only one of its two rows.
    const rowsPerReservation = sums('SELECT reservation_id AS key, COUNT(*) AS total FROM character_ledger GROUP BY reservation_id');
    expect(rowsPerReservation.every((r) => r.total === 2)).toBe(true);
  });
});
