// AdvancedJobs (src/tts/jobs.ts) against the emulator over real HTTP, with real SQLite files.
// The emulator's job timings follow a virtual clock shared with the client, so waits cost no time.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { createRepositories, type Repositories } from '../../src/db/repositories.ts';
import { type StoredJob } from '../../src/db/advanced-jobs.ts';
import { DEFAULT_TOKEN, startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { TtsClient } from '../../src/tts/client.ts';
import { AdvancedJobs, type JobResult } from '../../src/tts/jobs.ts';
import { FakeClock } from '../support/clock.ts';

const WORKER = fileURLToPath(new URL('./jobs-worker.ts', import.meta.url));
const REQ = { text: 'これは高度な読み上げのテストです。', voice: 'Luna', model: 'flash' } as const;

/** Virtual time: sleeping moves it forward and resolves on the next turn of the event loop. */
const clock = new FakeClock({ autoAdvance: true, start: Date.now() });

let emulator: Emulator;
let dir: string;
let db: Db;
let repos: Repositories;
let lines: string[];

beforeAll(async () => {
  emulator = await startEmulator({
    now: clock.now,
    jobs: { pendingMs: 3_000, runningMs: 4_000, minPollAfterMs: 1_000, pollAfterMs: 1_000 },
  });
});
afterAll(() => emulator.close());
beforeEach(() => {
  emulator.reset();
  dir = mkdtempSync(join(tmpdir(), 'adv-jobs-'));
  db = openDatabase(join(dir, 'bot.db'));
  repos = createRepositories(db, { clock });
  lines = [];
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function logger() {
  const log = (level: string) => (obj: object, msg?: string) => lines.push(JSON.stringify({ level, ...obj, msg }));
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

function jobsFor(r: Repositories = repos): AdvancedJobs {
  const client = new TtsClient({
    token: DEFAULT_TOKEN,
    baseUrl: emulator.baseUrl,
    clock,
    requestTimeoutMs: 5_000,
    download: { allowLoopback: true },
    logger: logger(),
  });
  return new AdvancedJobs({ client, repos: r, clock, logger: logger() });
}

const ctx = { guildId: 'g1', userId: 'u1', channelId: 'c1', delivery: { kind: 'voice', channelId: 'vc1' } };

function isMp3(b: Buffer): boolean {
  return b.subarray(0, 3).toString('latin1') === 'ID3' || (b[0] === 0xff && ((b[1] ?? 0) & 0xe0) === 0xe0);
}

describe('AdvancedJobs.run', () => {
  it('persists the job from creation, follows its state, and on success keeps url/pk but drops the text', async () => {
    const states: string[] = [];
    const jobs = jobsFor();
    const result = await jobs.run(REQ, {
      ...ctx,
      onProgress: (e) => {
        // Persisted before the first poll (spec: poll with the job token, which only we hold).
        if (e.jobId) states.push(`${e.state}:${repos.jobs.get(e.jobId)?.state}`);
      },
    });
    expect(isMp3(result.mp3)).toBe(true);
    expect(states).toEqual(['pending:pending', 'running:running', 'succeeded:running']);
    const row = repos.jobs.get(result.jobId)!;
    expect(row).toMatchObject({ state: 'succeeded', url: result.url, pk: result.pk, guildId: 'g1', delivery: ctx.delivery, attempt: 1 });
    expect(row.request).toMatchObject({ text: null, voice: 'Luna', model: 'flash' });
    expect(repos.jobs.listUnfinished().map((j) => j.jobId)).toEqual([result.jobId]);
    jobs.markDelivered(result.jobId);
    expect(repos.jobs.listUnfinished()).toEqual([]);
  });

  it('with a deliver callback, delivers and marks the job delivered', async () => {
    const got: string[] = [];
    const result = await jobsFor().run(REQ, { ...ctx, deliver: async (job, r) => void got.push(`${job.jobId}:${r.pk}`) });
    expect(got).toEqual([`${result.jobId}:${result.pk}`]);
    expect(repos.jobs.get(result.jobId)!.state).toBe('delivered');
  });

  it('GIVEN a job that fails with a final code THEN it is recorded failed with that code and its text dropped', async () => {
    emulator.nextJobs({ outcome: 'fail', code: 'content_policy_violation' });
    await expect(jobsFor().run(REQ, ctx)).rejects.toMatchObject({ code: 'content_policy_violation' });
    const [row] = db.prepare('SELECT job_id FROM advanced_jobs').pluck().all() as string[];
    expect(repos.jobs.get(row!)).toMatchObject({ state: 'failed', errorCode: 'content_policy_violation', request: { text: null } });
  });

  it('GIVEN a transient failure THEN the replaced job is recorded failed and the resubmitted one succeeds as attempt 2', async () => {
    emulator.nextJobs({ outcome: 'fail', code: 'tts_retry_exhausted' });
    const result = await jobsFor().run(REQ, ctx);
    const rows = db.prepare('SELECT job_id, state, attempt, error_code, seed FROM advanced_jobs ORDER BY attempt').all() as Record<
      string,
      unknown
    >[];
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ state: 'failed', attempt: 1, error_code: 'tts_retry_exhausted' });
    expect(rows[1]).toMatchObject({ job_id: result.jobId, state: 'succeeded', attempt: 2 });
    // The resubmit used a fresh seed (spec: retry with a different seed); it is kept apart from the request.
    expect(typeof rows[1]!.seed).toBe('number');
    expect(repos.jobs.get(result.jobId)!.request.seed).toBeUndefined();
  });
});

describe('AdvancedJobs.resumeUnfinished', () => {
  it('GIVEN process 1 exited while its job was pending THEN a new process finishes and delivers it', async () => {
    const file = join(dir, 'bot.db');
    const child = spawn(process.execPath, [WORKER, JSON.stringify({ file, baseUrl: emulator.baseUrl, token: DEFAULT_TOKEN })], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, err).toBe(0);
    const { jobId, state } = JSON.parse(out.trim()) as { jobId: string; state: string };
    expect(state).toBe('pending');
    expect(repos.jobs.get(jobId)).toMatchObject({ state: 'pending', request: { text: '再起動しても届くはずの読み上げです。' } });

    // Process 1 died holding the job's lease: nobody else takes the job until the lease runs out.
    expect(await jobsFor().resumeUnfinished(async () => {})).toEqual({ delivered: [], failed: [] });
    expect(emulator.stats().requests.poll).toBe(0);
    clock.set(Date.now() + 61_000);

    // Process 2: a fresh AdvancedJobs over the same file.
    const db2 = openDatabase(file);
    try {
      const repos2 = createRepositories(db2, { clock });
      const delivered: { job: StoredJob; result: JobResult }[] = [];
      const summary = await jobsFor(repos2).resumeUnfinished(async (job, result) => {
        delivered.push({ job, result });
      });
      expect(summary).toEqual({ delivered: [jobId], failed: [] });
      expect(delivered).toHaveLength(1);
      const [{ job, result }] = delivered as [{ job: StoredJob; result: JobResult }];
      expect(job.delivery).toEqual({ kind: 'attach', channelId: 'c1', replyTo: 'm1' });
      expect(isMp3(result.mp3)).toBe(true);
      expect(result.mp3.length).toBeGreaterThan(1000);
      // The same job was followed, not a new one created (which would cost characters again).
      expect(emulator.stats().jobsCreated).toBe(1);
      expect(repos2.jobs.get(jobId)).toMatchObject({ state: 'delivered', pk: result.pk, url: result.url, request: { text: null } });
      expect(repos2.jobs.listUnfinished()).toEqual([]);
      // A second start has nothing left to do.
      expect(await jobsFor(repos2).resumeUnfinished(async () => {})).toEqual({ delivered: [], failed: [] });
      const token = repos2.jobs.get(jobId)!.jobToken;
      expect(token.length).toBeGreaterThan(8);
      expect(lines.join('\n')).not.toContain(token);
    } finally {
      db2.close();
    }
  });

  it('GIVEN a succeeded job never delivered THEN it is delivered without polling again; a failing delivery is retried next start', async () => {
    const result = await jobsFor().run(REQ, ctx);
    const polls = emulator.stats().requests.poll;
    await clock.advance(61_000); // the process that ran it is gone; its lease has run out
    let attempts = 0;
    const flaky = async () => {
      attempts++;
      if (attempts === 1) throw new Error('Discord is down');
    };
    const first = jobsFor();
    expect(await first.resumeUnfinished(flaky)).toEqual({ delivered: [], failed: [{ jobId: result.jobId, code: 'delivery_failed' }] });
    expect(repos.jobs.get(result.jobId)!.state).toBe('succeeded');
    // Not retried in a tight loop by any process: the failed try holds it for an hour...
    expect(await jobsFor().resumeUnfinished(flaky)).toEqual({ delivered: [], failed: [] });
    // ... or until that process stops cleanly: then the next start delivers it.
    await first.releaseLeases();
    expect(await jobsFor().resumeUnfinished(flaky)).toEqual({ delivered: [result.jobId], failed: [] });
    expect(repos.jobs.get(result.jobId)!.state).toBe('delivered');
    expect(emulator.stats().requests.poll).toBe(polls);
    expect(emulator.stats().jobsCreated).toBe(1);
  });

  it('GIVEN a pending job whose job ends failed THEN it is recorded with its code and the author is told', async () => {
    emulator.nextJobs({ outcome: 'fail', code: 'content_policy_violation' });
    const client = new TtsClient({ token: DEFAULT_TOKEN, baseUrl: emulator.baseUrl, clock, download: { allowLoopback: true } });
    const created = await client.createJob(REQ);
    repos.jobs.insert({ jobId: created.jobId, jobToken: created.jobToken, ...ctx, request: { ...REQ }, createdAt: clock.now() });
    const told: string[] = [];
    const summary = await jobsFor().resumeUnfinished(
      async () => {
        throw new Error('must not deliver');
      },
      async (job, e) => void told.push(`${job.userId}:${e.code}`),
    );
    expect(summary.failed).toEqual([{ jobId: created.jobId, code: 'content_policy_violation' }]);
    expect(told).toEqual(['u1:content_policy_violation']);
    expect(repos.jobs.get(created.jobId)).toMatchObject({
      state: 'failed',
      errorCode: 'content_policy_violation',
      request: { text: null },
    });
  });

  it('GIVEN an unfinished job older than a day THEN it is given up, not resubmitted', async () => {
    const client = new TtsClient({ token: DEFAULT_TOKEN, baseUrl: emulator.baseUrl, clock, download: { allowLoopback: true } });
    const created = await client.createJob(REQ);
    repos.jobs.insert({
      jobId: created.jobId,
      jobToken: created.jobToken,
      ...ctx,
      request: { ...REQ },
      createdAt: clock.now() - 25 * 3_600_000,
    });
    const summary = await jobsFor().resumeUnfinished(async () => {});
    expect(summary.failed).toEqual([{ jobId: created.jobId, code: 'job_stuck' }]);
    expect(emulator.stats().jobsCreated).toBe(1);
  });
});
