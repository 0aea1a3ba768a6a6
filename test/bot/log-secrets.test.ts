import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_TOKEN } from '@yomiage/tts-emulator';
import { createLogger } from '../../src/util/log.ts';
import { sleep, type Clock } from '../../src/util/clock.ts';
import { DEFAULT_IDS, defaultGuild, PERMISSIONS, type FakeInteraction } from '@yomiage/local-discord';
import { startHarness, type Harness } from '../support/bot-harness.ts';
import { captureLog, scanLog, type CapturedLog } from '../support/log-scan.ts';

// Every failing path, through the real bot (discord.js against the loopback Discord,
// the TTS client against the emulator), logged at every level; no line may carry a secret or a
// payload. discord.js's errors hold the interaction token in `url` and the MP3 in `requestBody`.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const guildId = DEFAULT_IDS.guild;
const botToken = `${Buffer.from(DEFAULT_IDS.bot).toString('base64url')}.${randomBytes(4).toString('base64url')}.${randomBytes(27).toString('base64url')}`;

// The fake Discord's clock can jump ahead, so an interaction token expires mid-request.
let skewMs = 0;
const discordClock: Clock = { now: () => Date.now() + skewMs, sleep };

// The bot may not attach files in the guild's channels: posting audio gets 403 Missing Permissions.
const guild = defaultGuild();
for (const role of guild.roles) role.permissions = (BigInt(role.permissions) & ~PERMISSIONS.AttachFiles).toString();

let log: CapturedLog;
let h: Harness;
const interactions: FakeInteraction[] = [];

beforeAll(async () => {
  log = captureLog();
  h = await startHarness({
    discord: { token: botToken, clock: discordClock, guilds: [guild] },
    emulator: { jobs: { pendingMs: 100, runningMs: 150, minPollAfterMs: 50, pollAfterMs: 50 } },
    env: { AUTO_READ_MAX_AGE_SECONDS: '600' },
    bot: {
      // As src/main.ts builds it, at the most verbose level.
      logger: createLogger({ level: 'trace', secrets: [botToken, DEFAULT_TOKEN], destination: log }),
      voice: { readyTimeoutMs: 1_000 },
      // The spec's waits (1-8 s backoff) shortened: the same attempts fail and are logged, sooner.
      tts: { retry: { standardBackoffMs: [20, 20, 20, 20], advancedBackoffMs: [20, 20, 20] }, jobs: { minPollMs: 50, defaultPollMs: 100 } },
    },
  });
}, 60_000);
afterAll(async () => h?.close());

async function command(name: string, options: Array<{ name: string; type: number; value: string | number | boolean }> = []) {
  const interaction = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name, locale: 'en-US', options });
  interactions.push(interaction);
  return interaction;
}

const text = (value: string) => ({ name: 'text', type: 3, value });

/** Waits until a line with this message has been logged (the path really ran). */
function logged(msg: string, timeoutMs = 20_000) {
  return vi.waitUntil(() => log.records().find((r) => r.msg === msg), { timeout: timeoutMs, message: `a log line "${msg}"` });
}

/** The final edit of an interaction's reply (the bot's answer after its work). */
async function finalEdit(interaction: FakeInteraction) {
  return interaction.waitForResponse((r) => r.kind === 'editOriginal' && !String(r.data?.content ?? '').includes('…'), 30_000);
}

describe('no secret and no payload in any log line', () => {
  it('interaction callback 500: the error keeps status, method and the route without the token', async () => {
    // discord.js retries a 5xx three times; both the defer and the apology fail.
    h.discord.injectFault({ method: 'POST', path: /^\/interactions\/\d+\/[^/]+\/callback$/, status: 500, count: 8 });
    await command('say', [text('コールバックが失敗する')]);
    const failed = await logged('command failed');
    expect(failed.err).toMatchObject({ status: 500, method: 'POST' });
    expect(String((failed.err as { route: string }).route)).toMatch(/\/interactions\/\d+\/:token\/callback$/);
    await logged('could not tell the user about a failure');
  });

  it('webhook edit 404 after the token expired, with the MP3 attached', async () => {
    h.emulator.setLatency('standard', 1_500);
    const interaction = await command('say', [text('期限切れのトークンで添付する'), { name: 'attach', type: 5, value: true }]);
    await interaction.waitForResponse((r) => r.kind === 'callback' && r.type === 5);
    skewMs += 16 * 60_000; // Discord: an interaction token lives 15 minutes
    const failed = await logged('could not deliver the reply');
    h.emulator.setLatency('standard', 0);
    expect(failed.err).toMatchObject({ status: 404, code: 10015, method: 'PATCH' });
    expect(String((failed.err as { route: string }).route)).toMatch(/\/webhooks\/\d+\/:token\/messages\/@original$/);
    expect(failed.err).not.toHaveProperty('requestBody');
    expect(h.discord.requests.some((r) => r.method === 'PATCH' && r.status === 404)).toBe(true);
  });

  it('channel post 403: the audio of an auto-read message cannot be attached', async () => {
    // With MP3 posts: the bot is in no voice channel here (otherwise not read at all).
    await h.bot.context.repos.autoRead.add(guildId, DEFAULT_IDS.chat, { postAudio: true });
    await h.discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: alice, content: '権限のないチャンネルで読み上げ' });
    const failed = await logged('could not post audio');
    expect(failed.err).toMatchObject({ status: 403, code: 50013, method: 'POST' });
    h.bot.context.repos.autoRead.remove(guildId, DEFAULT_IDS.chat);
  });

  it('voice join failure (no voice server answers)', async () => {
    await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
    const interaction = await command('join');
    await logged('voice join failed');
    await finalEdit(interaction);
    await h.discord.setVoiceState(alice.id, guildId, null);
  });

  it('TTS errors: standard 400 echoing the token, 500s, download failure, failed and refused jobs', async () => {
    const em = h.emulator;
    em.injectFault({ target: 'standard', count: 1, status: 400, body: { error: `token ${DEFAULT_TOKEN} is bad` } });
    await finalEdit(await command('say', [text('サービスがトークンを返す')]));
    em.injectFault({ target: 'standard', count: 4, status: 500, body: { error: `boom ${DEFAULT_TOKEN}` } });
    await finalEdit(await command('say', [text('サービスが五百を返す')]));
    em.injectFault({ target: 'audio', count: 3, status: 500 });
    await finalEdit(await command('say', [text('音声のダウンロードが失敗する')]));
    em.injectFault({ target: 'advanced', count: 1, status: 400, body: { code: 'invalid_request', error: `bad ${DEFAULT_TOKEN}` } });
    await finalEdit(await command('narrate', [text('ジョブの作成が拒否されるテストです。')]));
    em.nextJobs({ outcome: 'fail', code: 'content_policy_violation' });
    await finalEdit(await command('narrate', [text('ジョブが失敗するテストの文章です。')]));
    em.injectFault({ target: 'poll', count: 2, status: 500 });
    const ok = await command('narrate', [text('ジョブが成功するテストの文章です。'), { name: 'seed', type: 4, value: 7 }]);
    await ok.waitForResponse((r) => r.files.length > 0, 30_000);
    await logged('tts request failed');
  }, 90_000);

  it('scans every line logged at every level', () => {
    const jobTokens = h.bot.db.prepare('SELECT job_token FROM advanced_jobs').pluck().all() as string[];
    expect(jobTokens.length).toBeGreaterThan(0);
    expect(interactions.length).toBeGreaterThan(5);
    expect(log.records().some((r) => r.level === 10 || r.level === 20)).toBe(true); // trace/debug written too
    const findings = scanLog(log.lines, {
      'bot token': [botToken],
      'TTS token': [DEFAULT_TOKEN],
      'interaction token': interactions.map((i) => i.token),
      'advanced-job token': jobTokens,
    });
    expect(findings).toEqual([]);
  });
});

describe('the scanner', () => {
  it('finds what it looks for (so an empty result means something)', () => {
    const line = (o: object) => JSON.stringify({ level: 40, msg: 'x', ...o });
    const mp3 = Buffer.alloc(300, 0xff);
    expect(scanLog([line({ body: mp3 })], {})).toHaveLength(1);
    expect(scanLog([line({ b64: randomBytes(300).toString('base64') })], {})).toHaveLength(1);
    expect(
      scanLog([line({ raw: mp3.toString('latin1').replace(/./g, (c, i: number) => (i % 4 ? c : '\u0001')) })], {}).length,
    ).toBeGreaterThan(0);
    expect(scanLog([line({ url: 'https://discord.com/api/webhooks/123/abcdefghijklmnopqrstuvwxyz0123456789' })], {})).toHaveLength(1);
    expect(scanLog([line({ token: 'sekrit-value' })], { t: ['sekrit-value'] })).toHaveLength(1);
    expect(scanLog([line({ route: '/webhooks/123/:token/messages/@original', text: 'こんにちは'.repeat(100) })], {})).toEqual([]);
  });
});
