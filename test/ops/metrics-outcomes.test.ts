import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { botEndpoints } from '../../src/ops/health.ts';
import { startOpsServer, type OpsServer } from '../../src/ops/ops-server.ts';
import { createLogger } from '../../src/util/log.ts';
import { startHarness, type Harness } from '../support/bot-harness.ts';
import { getText, value } from '../support/ops.ts';
import { guildStats } from '../support/guild-stats.ts';

// Every message is counted once, by how it ended. The whole bot (real discord.js on
// the local Discord, the emulator, SQLite) in this process, its metrics read over real HTTP. Chat
// in an MP3 auto-read channel (no voice needed): spoken means attached there.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const guildId = DEFAULT_IDS.guild;
let h: Harness;
let ops: OpsServer;

const outcomes = async () => {
  const text = (await getText(`${ops.url}/metrics`)).body;
  const of = (outcome: string) => value(text, 'yomiage_speech_messages_total', { outcome });
  return {
    spoken: of('spoken'),
    dropped_stale: of('dropped_stale'),
    refused: of('refused'),
    failed: of('failed'),
    skipped: of('skipped'),
    text,
  };
};
const total = (o: Awaited<ReturnType<typeof outcomes>>) => o.spoken + o.dropped_stale + o.refused + o.failed + o.skipped;
const say = (content: string) => h.discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content });

beforeAll(async () => {
  h = await startHarness({ env: { AUTO_READ_MAX_AGE_SECONDS: '2', USER_MONTHLY_CHARS: '40' } });
  await h.bot.context.repos.autoRead.add(guildId, DEFAULT_IDS.chat, { postAudio: true });
  const bot = h.bot;
  ops = await startOpsServer({
    port: 0,
    host: '127.0.0.1',
    endpoints: botEndpoints(bot.metrics, bot.readiness),
    logger: createLogger({ level: 'silent' }),
  });
}, 30_000);
afterAll(async () => {
  await ops?.close();
  await h?.close();
});

describe('yomiage_speech_messages_total', () => {
  it('auto-read too old to be read within the cut (2 s): dropped_stale, each once; those behind it never sent', async () => {
    h.emulator.setLatency('standard', 3_000);
    await say('ふるい一');
    // The first is being made (alone) before the others arrive; they wait for it, and grow old. It
    // comes back 3 s after it arrived, past the cut: dropped at the moment of speaking.
    await vi.waitUntil(async () => guildStats(h.bot.scheduler, guildId).synthesizing > 0, {
      timeout: 5_000,
      interval: 50,
      message: 'the first being made',
    });
    for (const content of ['ふるい二', 'ふるい三']) await say(content);
    const o = await vi.waitUntil(
      async () => {
        const r = await outcomes();
        return total(r) === 3 ? r : undefined;
      },
      { timeout: 20_000, interval: 50, message: 'three outcomes' },
    );
    h.emulator.setLatency('standard', 0);
    expect(o).toMatchObject({ spoken: 0, dropped_stale: 3, refused: 0, failed: 0, skipped: 0 });
    expect(h.emulator.requests().filter((r) => r.target === 'standard')).toHaveLength(1);
  });

  it('a service error: failed, once', async () => {
    const before = await outcomes();
    h.emulator.injectFault({ target: 'standard', count: 1, status: 400, body: { error: 'bad request' } });
    await say('しっぱいする');
    const o = await vi.waitUntil(
      async () => {
        const r = await outcomes();
        return total(r) === total(before) + 1 ? r : undefined;
      },
      { timeout: 20_000, interval: 50, message: 'the failure counted' },
    );
    expect(o.failed - before.failed).toBe(1);
    expect(value(o.text, 'yomiage_tts_requests_total', { endpoint: 'standard', status: '400' })).toBe(1);
  });

  it('/say over the member budget (40 characters): refused before anything is sent', async () => {
    const before = await outcomes();
    const sent = h.emulator.requests().length;
    const i = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: bob,
      name: 'say',
      locale: 'en-US',
      options: [
        { name: 'text', type: 3, value: 'いろはにほへとちりぬるをわかよたれそつねならむうゐのおくやまけふこえてあさきゆめみしゑひもせす' },
      ],
    });
    expect(String((await i.waitForResponse(() => true, 10_000)).data?.content)).toMatch(/limit|上限/i);
    const o = await vi.waitUntil(
      async () => {
        const r = await outcomes();
        return total(r) === total(before) + 1 ? r : undefined;
      },
      { timeout: 10_000, interval: 50, message: 'the refusal counted' },
    );
    expect(o.refused - before.refused).toBe(1);
    expect(h.emulator.requests()).toHaveLength(sent);
  });

  it('queued speech cleared (/clear, /leave): skipped, each message once', async () => {
    const before = await outcomes();
    h.emulator.setLatency('standard', 2_000);
    for (const content of ['けす一', 'けす二', 'けす三']) await say(content);
    await vi.waitUntil(async () => guildStats(h.bot.scheduler, guildId).synthesizing > 0, {
      timeout: 5_000,
      interval: 50,
      message: 'one being made',
    });
    expect(h.bot.scheduler.clearGuild(guildId, 'clear')).toBe(3);
    h.emulator.setLatency('standard', 0);
    const o = await outcomes();
    expect(o.skipped - before.skipped).toBe(3);
    expect(total(o)).toBe(total(before) + 3);
    // Nothing else is counted for them later, and nothing is left waiting: the one request that was
    // in flight (the only thing that could count later) has ended for the bot (cut off by the clear)
    // and its characters are settled, nothing held.
    const ended = (text: string) =>
      [...text.matchAll(/^yomiage_tts_requests_total\{endpoint="standard"[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
    await vi.waitUntil(
      async () => ended((await outcomes()).text) === ended(before.text) + 1 && (await h.bot.context.budget.accountUsage()).reserved === 0,
      {
        timeout: 10_000,
        interval: 10,
        message: 'the request in flight ended and settled',
      },
    );
    expect(total(await outcomes())).toBe(total(before) + 3);
    expect(value((await outcomes()).text, 'yomiage_queue_depth')).toBe(0);
  });
});
