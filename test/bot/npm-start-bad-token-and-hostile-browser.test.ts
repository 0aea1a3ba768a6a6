import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import {
  DEFAULT_IDS,
  defaultGuild,
  guildOnShard,
  startFakeDiscord,
  startFakeVoiceServer,
  type FakeDiscord,
  type FakeVoiceServer,
} from '@yomiage/local-discord';
import type { InteractionResponse } from '@yomiage/local-discord/types';
import { startChildBot, type ChildBot, type LogLine } from '../support/child-bot.ts';
import { approveAtLocalDiscord, DashboardClient } from '../support/dashboard-client.ts';

// One bad token or one hostile browser cannot take the bot down, through `npm start` as a child
// process against the local Discord (with voice) and the emulator, one bot for the whole story.
// The bot runs shard 1 of 2 (the server's), another host's dashboard runs shard 0, and it has three
// extra accounts: a token Discord does not know, then yomiage-2 and yomiage-3, both in the server.
// Its error reports go to a webhook here. Alice and Bob are also in a server the bot is not in.
const guildId = DEFAULT_IDS.guild;
const VOICE_B = '1100000000000000104';
const VOICE_C = '1100000000000000106';
const B = { id: '1200000000000000002', username: 'yomiage-2' };
const C = { id: '1200000000000000003', username: 'yomiage-3' };
const WRONG = 'MTIwMDAwMDAwMDAwMDAwMDA5.wrong.token-that-discord-does-not-know';
const PEER = 'https://b.example.com';
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
const owner = { id: DEFAULT_IDS.owner, username: 'owner' };

const guild = defaultGuild();
guild.channels.push({ id: VOICE_B, name: 'Voice 2', type: 2, position: 1 }, { id: VOICE_C, name: 'Voice 3', type: 2, position: 2 });
/** A server of the members on the other host's shard that the bot is not in. */
const without = guildOnShard(0, 2);

let emulator: Emulator;
let discord: FakeDiscord;
let voice: FakeVoiceServer;
let webhook: Server;
let dataDir: string;
let bot: ChildBot;
let dashboardUrl: string;
/** What ERROR_WEBHOOK_URL received: the operator's error reports. */
const reports: string[] = [];

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  [emulator, discord] = await Promise.all([
    startEmulator({ control: true }),
    startFakeDiscord({
      shardCount: 2,
      guilds: [guild, without],
      voiceServer: voice,
      extraBots: [
        { user: B, guildIds: [guildId] },
        { user: C, guildIds: [guildId] },
      ],
    }),
  ]);
  await discord.removeBotFromGuild(discord.applicationId, without.id);
  webhook = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      reports.push(String((JSON.parse(body) as { content: string }).content));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-bad-token-'));
  bot = await startChildBot({
    discord,
    emulator,
    dataDir,
    caCertPem: voice.caCertPem,
    env: {
      SHARD_COUNT: '2',
      SHARD_IDS: '1',
      EXTRA_DISCORD_TOKENS: [WRONG, discord.bots[1]!.token, discord.bots[2]!.token].join(','),
      EXTRA_ACCOUNT_RETRY_SECONDS: '1',
      ERROR_WEBHOOK_URL: `http://127.0.0.1:${(webhook.address() as { port: number }).port}/report`,
      DASHBOARD_PORT: '0',
      DISCORD_CLIENT_SECRET: discord.bots[0]!.clientSecret,
      DASHBOARD_PEERS: `0=${PEER}`,
    },
  });
  dashboardUrl = String((await bot.waitForLog((l) => l.msg === 'dashboard listening')).url);
  discord.bots[0]!.redirectUris.push(`${dashboardUrl}/auth/callback`);
}, 60_000);

afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close(), voice?.close(), new Promise((resolve) => webhook?.close(resolve))]);
  rmSync(dataDir, { recursive: true, force: true });
});

async function signedIn(userId: string): Promise<DashboardClient> {
  const client = new DashboardClient(dashboardUrl);
  await client.signIn((url) => approveAtLocalDiscord(url, userId));
  return client;
}
async function joinVoice(user: { id: string; username: string }, voiceChannel: string): Promise<InteractionResponse> {
  await discord.setVoiceState(user.id, guildId, voiceChannel);
  const i = await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user, name: 'join', locale: 'en-US', options: [] });
  const answered = (r: InteractionResponse) => (r.kind === 'callback' || r.kind === 'editOriginal') && r.data?.content !== undefined;
  return i.waitForResponse(answered, 30_000);
}
/** The account that joined `channelId` (its op 4). */
const joinedBy = (channelId: string) =>
  discord.waitForBotVoiceState((v) => v.channelId === channelId, 30_000).then((v) => v.botId ?? DEFAULT_IDS.bot);
const errorLines = () => bot.logs.filter((l) => l.level >= 50);

describe('a token Discord does not take costs only its own account', () => {
  it('a wrong extra token: the bot starts and serves, the account is reported once and tried again with growing waits', async () => {
    const ready = bot.logs.find((l) => l.msg === 'bot ready') as LogLine & { extraAccounts: Array<{ state: string }> };
    expect(ready.extraAccounts.map((a) => a.state)).toEqual(['down', 'serving', 'serving']);
    expect(errorLines()).toEqual([
      expect.objectContaining({ extraAccount: 1, retryInS: 1, msg: expect.stringContaining('cannot log in') }),
    ]);
    await vi.waitUntil(() => reports.length === 1, { timeout: 10_000 });
    expect(reports[0]).toContain('extra account');
    // Tried again after 1 s, and failing, logged and not reported, with the next wait doubled.
    await bot.waitForLog((l) => l.extraAccount === 1 && l.retryInS === 2, 15_000, 'the first retry');
    expect(
      bot.logs
        .filter((l) => l.extraAccount === 1)
        .slice(0, 2)
        .map((l) => [l.level, l.retryInS]),
    ).toEqual([
      [50, 1],
      [40, 2],
    ]);
    expect(JSON.stringify(bot.logs) + reports.join()).not.toContain(WRONG);
  });

  it('a token reset at runtime (4004): reported once, never chosen by /join while out, chosen again once Discord takes it', async () => {
    // Alice's /join: every account free, the main one first.
    const first = joinedBy(DEFAULT_IDS.voice);
    expect(String((await joinVoice(alice, DEFAULT_IDS.voice)).data?.content)).toContain('Joined');
    expect(await first).toBe(DEFAULT_IDS.bot);
    discord.revokeToken(B.id);
    await bot.waitForLog((l) => l.level >= 50 && l.extraAccount === 2, 10_000, 'the reset token reported');
    // Bob's /join in Voice 2: yomiage-2 comes first of the free accounts, but it is out: yomiage-3 joins.
    const second = joinedBy(VOICE_B);
    expect(String((await joinVoice(bob, VOICE_B)).data?.content)).toContain('Joined');
    expect(await second).toBe(C.id);
    await vi.waitUntil(() => reports.length === 2, { timeout: 10_000 });
    expect(reports[1]).toContain('4004');
    // Discord takes it again: at its next try it serves, and the owner's /join in Voice 3 brings it.
    discord.reinstateToken(B.id);
    await bot.waitForLog((l) => l.extraAccount === 2 && String(l.msg).includes('logged in again'), 15_000, 'yomiage-2 back');
    const third = joinedBy(VOICE_C);
    expect(String((await joinVoice(owner, VOICE_C)).data?.content)).toContain('Joined');
    expect(await third).toBe(B.id);
    expect(reports).toHaveLength(2);

    // Reset while it reads a call: that call ends and its channel is told reading stopped. Logged as
    // an error; the same error within the hour is counted by the reporter, not posted again.
    const told = discord.waitForMessage((m) => m.channelId === DEFAULT_IDS.general && m.content.includes('切断されたため'), 20_000);
    discord.revokeToken(C.id);
    await told;
    await bot.waitForLog((l) => l.level >= 50 && l.extraAccount === 3, 10_000, 'yomiage-3 out');
    expect(reports).toHaveLength(2);
  }, 60_000);
});

describe('a signed-in browser cannot turn the bot against Discord or itself', () => {
  it('looping over server ids (its own, one the bot is not in, random ones): at most 3 requests reach Discord, none about another server', async () => {
    const admin = await signedIn(bob.id);
    const from = discord.requests.length;
    const random = () => String(BigInt(DEFAULT_IDS.guild) + BigInt(Math.floor(Math.random() * 1e12)) * 4_194_304n);
    const statuses = new Set<number>();
    // 114 requests: within the session's 120 a minute (one went to /api/session at sign-in).
    for (let i = 0; i < 19; i++) {
      const paths = ['/guilds', `/guilds/${guildId}`, `/me/${guildId}`, `/guilds/${without.id}`, `/me/${random()}`, `/guilds/${random()}`];
      for (const path of paths) statuses.add((await admin.api('GET', path)).status);
    }
    expect([...statuses].sort()).toEqual([200, 404]);
    const asked = discord.requests.slice(from).filter((r) => r.path.startsWith('/guilds') || r.path.startsWith('/users'));
    expect(asked.length, JSON.stringify(asked.map((r) => r.path))).toBeLessThanOrEqual(3);
    expect(asked.filter((r) => r.path.startsWith('/guilds/') && !r.path.startsWith(`/guilds/${guildId}`))).toEqual([]);
    // Bob's servers as the page lists them: the bot's, not the one on the other host's shard it is not in.
    expect((await admin.api('GET', '/guilds')).body).toEqual([expect.objectContaining({ id: guildId, manager: true })]);
  });

  it("past 120 requests a minute a session is answered 429, in the page's language, with when to try again", async () => {
    const member = await signedIn(alice.id);
    let answer = await member.request('/api/voices', { headers: { 'x-lang': 'ja' } });
    let sent = 2; // /api/session at sign-in, and this one
    while (answer.status === 200 && sent < 200) {
      answer = await member.request('/api/voices', { headers: { 'x-lang': 'ja' } });
      sent++;
    }
    expect([answer.status, sent]).toEqual([429, 121]);
    expect(answer.body).toEqual({ error: 'too_many_requests', message: expect.stringContaining('1分ほど待って') });
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another session is not held back.
    expect((await (await signedIn(alice.id)).api('GET', '/voices')).status).toBe(200);
  });

  it('a malformed session cookie: 401 and the browser told to drop it, a quiet log line, no 500 and no report', async () => {
    const browser = new DashboardClient(dashboardUrl);
    browser.jar.set('ydash_session', '%E0%A4%A');
    const errors = errorLines().length;
    const answer = await browser.api('GET', '/guilds');
    expect([answer.status, answer.body.error]).toEqual([401, 'no_session']);
    expect(browser.jar.has('ydash_session')).toBe(false);
    expect((await browser.request('/')).status).toBe(200);
    // Someone else's malformed cookie beside a good session changes nothing.
    const admin = await signedIn(bob.id);
    admin.jar.set('other_app', '%%%');
    expect((await admin.api('GET', `/guilds/${guildId}`)).status).toBe(200);
    expect(bot.logs.some((l) => l.level === 30 && String(l.msg).includes('cookie malformed'))).toBe(true);
    expect(errorLines()).toHaveLength(errors);
    expect(reports).toHaveLength(2);
  });

  it("a body over 3 MB: 413 at once (announced or streamed), in the page's language; nothing unhandled", async () => {
    const admin = await signedIn(bob.id);
    const errors = errorLines().length;
    const big = JSON.stringify({ text: 'あ\tい\n'.repeat(800_000) });
    const started = performance.now();
    const announced = await admin.request(`/api/guilds/${guildId}/dictionary/import`, {
      method: 'POST',
      json: JSON.parse(big),
      headers: { 'x-lang': 'ja' },
    });
    expect(announced.status).toBe(413);
    expect(announced.body).toEqual({ error: 'too_large', message: expect.stringContaining('3 MB まで') });
    // Streamed without a length: refused once 3 MB arrived, the answer read while the browser still sends.
    const { port } = new URL(dashboardUrl);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    let head = '';
    socket.on('data', (chunk: Buffer) => (head += chunk.toString('latin1')));
    socket.on('error', () => {});
    const cookies = [...admin.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    socket.write(
      `POST /api/guilds/${guildId}/dictionary/import HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${cookies}\r\n` +
        `X-CSRF-Token: ${admin.csrf}\r\nX-Lang: en\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const piece = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 64 && !head.includes('\r\n\r\n'); i++) {
      socket.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await vi.waitUntil(() => head.includes('That is too large'), { timeout: 5_000 });
    socket.destroy();
    expect(head).toMatch(/^HTTP\/1\.1 413/);
    // At once: before, the browser waited for the request timeout and got no answer at all.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(bot.logs.filter((l) => String(l.msg).includes('unhandled'))).toEqual([]);
    expect(errorLines()).toHaveLength(errors);
    expect((await admin.api('GET', `/guilds/${guildId}/dictionary`)).body).toEqual([]);
  });

  it('muting with an empty or missing member is refused before any lookup; a role allowance takes only a number', async () => {
    const admin = await signedIn(bob.id);
    const chunks = () =>
      [...discord.gateway.sessions.values()].reduce((n, s) => n + s.backlog.filter((e) => e.t === 'GUILD_MEMBERS_CHUNK').length, 0);
    const before = chunks();
    const muted = `/guilds/${guildId}/muted`;
    for (const body of [{ memberId: '', muted: true }, { muted: true }]) {
      const refused = await admin.api('PUT', muted, body);
      expect([refused.status, refused.body.message]).toEqual([400, 'Choose the member to mute. Nothing was changed.']);
    }
    expect((await admin.api('PUT', muted, { memberId: 'everyone', muted: true })).status).toBe(400);
    expect(chunks()).toBe(before);

    const roles = `/guilds/${guildId}/roles`;
    for (const chars of ['1e3', '1000', true])
      expect((await admin.api('PUT', roles, { roleId: DEFAULT_IDS.moderatorRole, chars })).status, String(chars)).toBe(400);
    const view = (await admin.api('GET', `/guilds/${guildId}`)).body;
    expect([view.roleAllowances, view.muted]).toEqual([[], []]);
    expect((view.audit as Array<{ action: string }>).filter((e) => e.action === 'roles.set' || e.action === 'mute')).toEqual([]);
    expect((await admin.api('PUT', roles, { roleId: DEFAULT_IDS.moderatorRole, chars: 1000 })).body).toEqual([
      { roleId: DEFAULT_IDS.moderatorRole, monthlyLimit: 1000 },
    ]);
  });
});

describe('after all of it', () => {
  it('the bot still reads: nothing answered 500, nothing unhandled, two reports in all', async () => {
    expect(bot.logs.filter((l) => l.msg === 'dashboard request failed' || String(l.msg).includes('unhandled'))).toEqual([]);
    expect(reports).toHaveLength(2);
    const from = emulator.requests().length;
    await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: 'まだ読めます' });
    await vi.waitUntil(
      () =>
        emulator
          .requests()
          .slice(from)
          .some((r) => r.target === 'standard'),
      { timeout: 20_000 },
    );
  });
});
