// Two processes on one database never double-deliver. Persisted advanced jobs are
// claimed with a lease (owner, expiry), so exactly one process resumes each; a dead owner's lease
// runs out and a live process takes the job over.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { createRepositories, type Repositories } from '../../src/db/repositories.ts';
import { DEFAULT_TOKEN, startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { TtsClient } from '../../src/tts/client.ts';
import { AdvancedJobs } from '../../src/tts/jobs.ts';

const WORKER = fileURLToPath(new URL('./jobs-lease-worker.ts', import.meta.url));
const ctx = { guildId: 'g1', userId: 'u1', channelId: 'c1', delivery: { kind: 'attach' } };

let emulator: Emulator;
let dir: string;
let file: string;
let db: Db;
let repos: Repositories;
const children: ChildProcess[] = [];

beforeAll(async () => {
  emulator = await startEmulator({ jobs: { pendingMs: 300, runningMs: 300, minPollAfterMs: 100, pollAfterMs: 100 } });
});
afterAll(() => emulator.close());
beforeEach(() => {
  emulator.reset();
  dir = mkdtempSync(join(tmpdir(), 'job-leases-'));
  file = join(dir, 'bot.db');
  db = openDatabase(file);
  repos = createRepositories(db);
});
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const client = () =>
  new TtsClient({
    token: DEFAULT_TOKEN,
    baseUrl: emulator.baseUrl,
    requestTimeoutMs: 5_000,
    download: { allowLoopback: true },
    jobs: { minPollMs: 50, defaultPollMs: 100 },
  });

/** Jobs a previous process created and left unfinished, with no lease held. */
async function leftJobs(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const request = { text: `再起動の後で読み上げる文章${i}です。`, voice: 'Luna' as const };
    const created = await client().createJob(request);
    await repos.jobs.insert({ jobId: created.jobId, jobToken: created.jobToken, ...ctx, request, createdAt: Date.now() });
    ids.push(created.jobId);
  }
  return ids;
}

function worker(mode: 'resume' | 'claim') {
  const child = spawn(process.execPath, [WORKER, JSON.stringify({ file, baseUrl: emulator.baseUrl, token: DEFAULT_TOKEN, mode })], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  const queued: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      const w = waiting.shift();
      if (w) w(line);
      else queued.push(line);
    }
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const line = queued.shift();
      if (line !== undefined) return resolve(line);
      waiting.push(resolve);
      child.once('exit', (code) => reject(new Error(`worker exited ${code}: ${err}`)));
    });
  return { child, next, go: () => child.stdin.write('go\n') };
}

describe('advanced job leases across processes', () => {
  it('GIVEN two processes starting together on the same unfinished jobs THEN each job is delivered exactly once', async () => {
    const ids = await leftJobs(6);
    const a = worker('resume');
    const b = worker('resume');
    expect(await a.next()).toBe('ready');
    expect(await b.next()).toBe('ready');
    const results = [a.next(), b.next()];
    a.go();
    b.go();
    const [ra, rb] = (await Promise.all(results)).map((l) => (JSON.parse(l) as { delivered: string[] }).delivered);
    expect([...ra!, ...rb!].sort()).toEqual([...ids].sort());
    expect(ra!.filter((id) => rb!.includes(id))).toEqual([]);
    for (const id of ids) expect(repos.jobs.get(id)!.state).toBe('delivered');
    expect(emulator.stats().jobsCreated).toBe(6); // nothing resubmitted
  });

  it('GIVEN the owner hangs or dies holding its leases THEN a running process takes the jobs over once the leases run out', async () => {
    const ids = await leftJobs(2);
    const hung = worker('claim');
    const [said, until] = (await hung.next()).split(' ');
    expect(said).toBe('claimed');
    const leaseEnds = Number(until);
    const delivered: { jobId: string; at: number }[] = [];
    const jobs = new AdvancedJobs({ client: client(), repos, leaseMs: 1_000 });
    // At start the jobs are someone else's: nothing to resume yet.
    expect(await jobs.resumeUnfinished(async () => {})).toEqual({ delivered: [], failed: [] });
    const stop = jobs.watch(async (job) => void delivered.push({ jobId: job.jobId, at: Date.now() }), undefined, 100);
    try {
      await vi.waitUntil(() => delivered.length >= ids.length, { timeout: 15_000, message: 'the jobs taken over' });
    } finally {
      stop();
    }
    expect(delivered.map((d) => d.jobId).sort()).toEqual([...ids].sort());
    // Not before the dead owner's lease ran out.
    for (const d of delivered) expect(d.at).toBeGreaterThanOrEqual(leaseEnds);
    for (const id of ids) expect(repos.jobs.get(id)).toMatchObject({ state: 'delivered', leaseOwner: jobs.owner });
  });
});
