import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { startHarness, type Harness } from '../support/bot-harness.ts';

// An advanced job persisted while pending is finished and delivered by a new process,
// at the level a user sees: /narrate, the bot restarts mid-job, the audio still arrives, and the
// service receives exactly one job (nothing resubmitted, nothing charged twice).
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ emulator: { jobs: { pendingMs: 2_000, runningMs: 300, minPollAfterMs: 100, pollAfterMs: 100 } } });
});
afterAll(async () => h?.close());

const creations = () => h.emulator.requests().filter((r) => r.target === 'advanced' && r.status === 202);

describe('restart during /narrate', () => {
  it('resumes the persisted job in the new process and delivers its audio to the same reply', async () => {
    const interaction = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: bob,
      name: 'narrate',
      locale: 'en-US',
      options: [
        { name: 'text', type: 3, value: 'A story that outlives a restart of the bot.' },
        { name: 'voice', type: 3, value: 'Sam' },
      ],
    });
    await vi.waitUntil(() => creations().length === 1, { timeout: 20_000, message: 'job creation' });
    await vi.waitUntil(() => h.bot.context.repos.jobs.listUnfinished().length === 1, { timeout: 5_000, message: 'job persisted' });
    await h.restart();
    const final = await interaction.waitForResponse((r) => r.files.length > 0, 30_000);
    expect(String(final.data?.content)).toContain('Sam');
    expect(String(final.data?.content)).toMatch(/seed: -?\d+/);
    expect(creations()).toHaveLength(1);
    await vi.waitUntil(() => h.bot.context.repos.jobs.listUnfinished().length === 0, { timeout: 5_000, message: 'job marked delivered' });
  });
});
