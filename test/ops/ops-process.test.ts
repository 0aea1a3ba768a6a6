import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_TOKEN, startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { startFakeVoiceServer, type FakeVoiceServer } from '@yomiage/local-discord';
import { METRIC_NAMES } from '../../src/ops/metrics.ts';
import { standardRequests } from '../support/bot-harness.ts';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';
import { families, getText, startWebhookReceiver, value } from '../support/ops.ts';

// Metrics, health checks and error reports through the real entry point: `npm start` as a child process with
// METRICS_PORT=0 (the OS picks the port) and ERROR_WEBHOOK_URL pointing at a receiver here. Everything is
// read over HTTP as Prometheus, a load balancer or Discord would. /readyz of a bot without ffmpeg (ready, not
// degraded: it needs none) is checked in test/bot/private-channels.test.ts, whose bot runs without it.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const guildId = DEFAULT_IDS.guild;
const WEBHOOK_SECRET = 'webhook-secret-token-0123456789abcdef';

let emulator: Emulator;
let discord: FakeDiscord;
let voice: FakeVoiceServer;
let webhook: Awaited<ReturnType<typeof startWebhookReceiver>>;
let dataDir: string;
let bot: ChildBot;
let base: string;

const metrics = async () => (await getText(`${base}/metrics`)).body;
const spoken = async () => value(await metrics(), 'yomiage_speech_messages_total', { outcome: 'spoken' });

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  [emulator, discord, webhook] = await Promise.all([
    startEmulator({}),
    startFakeDiscord({ voiceEndpoint: () => voice.endpoint }),
    startWebhookReceiver(),
  ]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-ops-'));
  bot = await startChildBot({
    discord,
    emulator,
    dataDir,
    caCertPem: voice.caCertPem,
    env: { METRICS_PORT: '0', ERROR_WEBHOOK_URL: `${webhook.url}/api/webhooks/1234/${WEBHOOK_SECRET}`, AUTO_READ_MAX_AGE_SECONDS: '600' },
  });
  base = String(bot.logs.find((l) => l.msg === 'metrics and health checks listening')?.url);
  // Short clips: the server reads at speed 4.
  const speed = await discord.sendInteraction({
    channelId: DEFAULT_IDS.general,
    user: bob,
    name: 'config',
    locale: 'en-US',
    options: [{ name: 'speed', type: 1, options: [{ name: 'value', type: 10, value: 4 }] }],
  });
  await speed.waitForResponse((r) => r.kind === 'callback');
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close().catch(() => {}), voice?.close(), webhook?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('METRICS_PORT of npm start', () => {
  it('listens on 127.0.0.1 by default; /healthz is ok and /readyz ready (gateway, database)', async () => {
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await getText(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
    const ready = await getText(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual({
      status: 'ready',
      degraded: [],
      checks: { gateway: { ok: true }, database: { ok: true } },
    });
    expect((await getText(`${base}/nothing`)).status).toBe(404);
  });

  it('counts four chat messages once each, by outcome, with merges, waits, requests, window, characters and cache', async () => {
    await discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
    voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
    const joined = await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
    await joined.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
    await voice.waitForDave(guildId);
    // A slow service: the first line is sent alone, the three after it wait and share one request.
    emulator.setLatency('standard', 1_500);
    await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: 'ひとつめ' });
    await vi.waitUntil(async () => emulator.requests().some((r) => r.target === 'standard'), {
      timeout: 10_000,
      interval: 50,
      message: 'the first line sent',
    });
    for (const content of ['ふたつめ', 'みっつめ', 'よっつめ'])
      await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content });
    await vi.waitUntil(async () => (await spoken()) === 4, { timeout: 30_000, interval: 50, message: 'four messages spoken' });
    emulator.setLatency('standard', 0);
    const text = await metrics();
    const requests = standardRequests(emulator).length;
    expect(requests).toBeGreaterThanOrEqual(2);
    expect(requests).toBeLessThan(4);
    for (const outcome of ['dropped_stale', 'refused', 'failed', 'skipped'])
      expect(value(text, 'yomiage_speech_messages_total', { outcome }), outcome).toBe(0);
    expect(value(text, 'yomiage_speech_merged_total')).toBe(4 - requests);
    expect(value(text, 'yomiage_tts_requests_total', { endpoint: 'standard', status: '200' })).toBe(requests);
    expect(value(text, 'yomiage_rate_window_used', { endpoint: 'standard' })).toBe(requests);
    expect(value(text, 'yomiage_rate_window_used', { endpoint: 'advanced' })).toBe(0);
    expect(value(text, 'yomiage_characters_spent_total', { endpoint: 'standard' })).toBe(emulator.charged(DEFAULT_TOKEN));
    expect(emulator.charged(DEFAULT_TOKEN)).toBeGreaterThan(0);
    expect(value(text, 'yomiage_cache_misses_total')).toBe(requests);
    expect(value(text, 'yomiage_cache_hits_total')).toBe(0);
    // Every message waited from its arrival to its clip's first packet; every clip had a first packet.
    expect(value(text, 'yomiage_speech_wait_seconds_count')).toBe(4);
    expect(value(text, 'yomiage_speech_wait_seconds_sum')).toBeGreaterThan(1.5);
    expect(value(text, 'yomiage_voice_first_packet_seconds_count')).toBe(requests);
    expect(value(text, 'yomiage_voice_sessions')).toBe(1);
    expect(value(text, 'yomiage_queue_depth')).toBe(0);

    // A line, then the same line again: the second is served from the cache, nothing sent.
    await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: 'いつつめ' });
    await vi.waitUntil(async () => (await spoken()) === 5, { timeout: 20_000, interval: 50, message: 'the fifth spoken' });
    await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: 'いつつめ' });
    await vi.waitUntil(async () => (await spoken()) === 6, { timeout: 20_000, interval: 50, message: 'the repeat spoken' });
    const after = await metrics();
    expect(value(after, 'yomiage_cache_hits_total')).toBe(1);
    expect(standardRequests(emulator)).toHaveLength(requests + 1);
    expect(value(after, 'yomiage_tts_requests_total')).toBe(requests + 1);
    expect(value(after, 'yomiage_speech_wait_seconds_count')).toBe(6);
  }, 90_000);

  it('a message nobody can hear (every listener deafened): skipped, nothing sent', async () => {
    const requests = standardRequests(emulator).length;
    await discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice, { selfDeaf: true });
    try {
      await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: 'だれもきいていない' });
      await vi.waitUntil(async () => value(await metrics(), 'yomiage_speech_messages_total', { outcome: 'skipped' }) === 1, {
        timeout: 10_000,
        interval: 50,
        message: 'the message skipped',
      });
      expect(standardRequests(emulator)).toHaveLength(requests);
      expect(await spoken()).toBe(6);
    } finally {
      await discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice, { selfDeaf: false });
    }
  });

  it('while the service says to wait (429), a line the cache has is read at once, without a grant', async () => {
    const requests = standardRequests(emulator).length;
    const hits = value(await metrics(), 'yomiage_cache_hits_total');
    // A new line meets a 429: the bot's one rate window is closed for 6 s. The line is then deleted
    // (never read), so nothing is queued ahead of the next one.
    emulator.injectFault({ target: 'standard', count: 1, status: 429, body: { error: 'Too many requests', reset_in: 6 } });
    const refused = await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: 'まどがしまっているあいだ' });
    await vi.waitUntil(() => emulator.requests().some((r) => r.target === 'standard' && r.status === 429), {
      timeout: 10_000,
      interval: 20,
      message: 'the 429',
    });
    await discord.deleteMessage(DEFAULT_IDS.general, refused.id);
    const sent = performance.now();
    await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: 'いつつめ' });
    await vi.waitUntil(async () => (await spoken()) === 7, { timeout: 20_000, interval: 20, message: 'the cached line spoken' });
    // Before the window reopens: the cached line needed no grant, and nothing was sent for it.
    expect(performance.now() - sent).toBeLessThan(4_000);
    expect(value(await metrics(), 'yomiage_cache_hits_total')).toBe(hits + 1);
    expect(standardRequests(emulator)).toHaveLength(requests + 1);
  });

  it('exports every documented metric and the default process metrics, and no id in any label', async () => {
    const text = await metrics();
    const names = families(text);
    for (const name of METRIC_NAMES) expect(names.has(name), name).toBe(true);
    expect(names.get('yomiage_speech_wait_seconds')).toBe('histogram');
    expect(names.get('yomiage_voice_first_packet_seconds')).toBe('histogram');
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ])
      expect(names.has(name), name).toBe(true);
    for (const id of Object.values(DEFAULT_IDS)) expect(text).not.toContain(id);
    expect(text).toMatch(/# HELP yomiage_rate_window_used .*max/);
  });

  it('posts an unexpected error to ERROR_WEBHOOK_URL once, with guild and channel but no text or token', async () => {
    // Discord fails the /say callback (and the error reply): four tries each by discord.js, twice.
    discord.injectFault({ method: 'POST', path: /\/callback$/, status: 500, count: 16 });
    const secretText = '秘密の内容です';
    const first = await discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'say',
      locale: 'en-US',
      options: [{ name: 'text', type: 3, value: secretText }],
    });
    await bot.waitForLog((l) => l.msg === 'command failed', 20_000);
    await vi.waitUntil(async () => webhook.posts.length >= 1, { timeout: 10_000, interval: 50, message: 'the report posted' });
    // The same error again: counted, not posted (once an hour per distinct error).
    const second = await discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'say',
      locale: 'en-US',
      options: [{ name: 'text', type: 3, value: secretText }],
    });
    await vi.waitUntil(async () => bot.logs.filter((l) => l.msg === 'command failed').length === 2, {
      timeout: 20_000,
      interval: 50,
      message: 'the second failure',
    });
    await vi.waitUntil(async () => discord.requests.filter((r) => r.status === 500).length >= 16, {
      timeout: 20_000,
      interval: 50,
      message: 'every injected fault used',
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(webhook.posts).toHaveLength(1);
    const post = webhook.posts[0]!;
    expect(post.path).toBe(`/api/webhooks/1234/${WEBHOOK_SECRET}`);
    const content = String(post.body.content);
    expect(content).toContain('command failed');
    expect(content).toContain(`guild ${guildId}`);
    expect(content).toContain(`channel ${DEFAULT_IDS.general}`);
    for (const secret of [secretText, first.token, second.token, discord.token, DEFAULT_TOKEN, WEBHOOK_SECRET])
      expect(content).not.toContain(secret);
    // The webhook URL is a secret too: never in the logs.
    expect(JSON.stringify(bot.logs)).not.toContain(WEBHOOK_SECRET);
  }, 60_000);

  it('/readyz answers 503 once the gateway is gone, /healthz still 200', async () => {
    await discord.close();
    const body = await vi.waitUntil(
      async () => {
        const r = await getText(`${base}/readyz`);
        return r.status === 503 ? JSON.parse(r.body) : undefined;
      },
      { timeout: 20_000, interval: 50, message: '/readyz 503' },
    );
    expect(body).toMatchObject({ status: 'not_ready', checks: { gateway: { ok: false }, database: { ok: true } } });
    expect((await getText(`${base}/healthz`)).status).toBe(200);
  }, 30_000);
});
