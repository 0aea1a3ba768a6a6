import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHarness, type Harness } from '../support/bot-harness.ts';

// Ended advanced jobs keep their job token and the reply's interaction token; they
// are deleted once they ended more than JOB_RETENTION_DAYS (default 7) ago, at start and daily.
const DAY = 86_400_000;
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ bot: { jobs: { pruneEveryMs: 300 } } });
});
afterAll(async () => h?.close());

function job(id: string, state: string, endedDaysAgo: number): void {
  const at = Date.now() - endedDaysAgo * DAY;
  h.bot.db
    .prepare(
      `INSERT INTO advanced_jobs (job_id, job_token, guild_id, user_id, channel_id, delivery, request, state, created_at, updated_at, lease_owner, lease_expires_at)
       VALUES (?, 'job-token-secret', 'g1', 'u1', 'c1', '{"delivery":{"kind":"interaction","applicationId":"1","token":"interaction-token-secret"}}', '{"text":null}', ?, ?, ?, 'nobody', ?)`,
    )
    .run(id, state, at, at, Date.now() + 3_600_000);
}
const ids = () => h.bot.db.prepare('SELECT job_id FROM advanced_jobs ORDER BY job_id').pluck().all() as string[];

describe('ended advanced jobs are pruned after the retention period', () => {
  it('at start: jobs ended over 7 days ago are deleted, tokens and all; newer and unfinished ones stay', async () => {
    job('a-delivered-8d', 'delivered', 8);
    job('b-failed-8d', 'failed', 8);
    job('c-delivered-6d', 'delivered', 6);
    job('d-pending-8d', 'pending', 8); // unfinished (held by another process): never pruned
    await h.restart();
    // Done by start() itself, before the first daily run.
    expect(ids()).toEqual(['c-delivered-6d', 'd-pending-8d']);
    expect(JSON.stringify(h.bot.db.prepare('SELECT * FROM advanced_jobs').all())).not.toContain('a-delivered-8d');
  });

  it('and daily while running', async () => {
    job('e-failed-9d', 'failed', 9);
    expect(ids()).toContain('e-failed-9d');
    await vi.waitUntil(() => !ids().includes('e-failed-9d'), { timeout: 5_000, message: 'the daily pruning' });
    expect(ids()).toEqual(['c-delivered-6d', 'd-pending-8d']);
  });
});
