import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadImage } from '@napi-rs/canvas';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, startFakeVoiceServer, type FakeDiscord, type FakeVoiceServer } from '@yomiage/local-discord';
import type { InteractionResponse } from '@yomiage/local-discord/types';
import { SHORT_TONES, standardRequests } from '../support/bot-harness.ts';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';
import { approveAtLocalDiscord, DashboardClient } from '../support/dashboard-client.ts';

// Spend, dictionary and playback controls through the real entry point: `npm start` as a child process
// (test/support/child-bot.ts) against the loopback Discord, its TLS voice server and the emulator: the
// cost question of a long /narrate, a dictionary import with its summary, the operator's global
// dictionary, /skip's refusal, and /usage's chart. Voice previews: with the bot in no voice channel a
// preview is attached privately, charged to the member who asked (their own allowance, refused in
// their language once it is used up), the next preview of that voice is the cached audio (no request
// to the service, no characters), and one member's previews are limited in number, from the slash
// command and the dashboard (over HTTP) together. Join/leave announcements, which the server pays
// for: one member renaming and re-joining is announced only so often and under so many names. The
// previews run first, so the server's total is the sample's characters alone.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' }; // Manage Server: sees the server's /usage
const EPHEMERAL = 64;
const JA_SAMPLE = 'こんにちは、この声で読み上げます。';
const LONG = '今日は長いナレーションを確認してから送ります。'.repeat(10);

let emulator: Emulator;
let discord: FakeDiscord;
let voiceServer: FakeVoiceServer;
let dataDir: string;
let bot: ChildBot;
beforeAll(async () => {
  voiceServer = await startFakeVoiceServer();
  [emulator, discord] = await Promise.all([
    startEmulator({ ...SHORT_TONES, control: true, jobs: { pendingMs: 100, runningMs: 150, minPollAfterMs: 100, pollAfterMs: 100 } }),
    startFakeDiscord({ voiceEndpoint: () => voiceServer.endpoint }),
  ]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-process13-'));
  writeFileSync(join(dataDir, 'global.tsv'), 'yomiage\tよみあげボット\n');
  bot = await startChildBot({
    discord,
    emulator,
    dataDir,
    caCertPem: voiceServer.caCertPem,
    env: {
      GLOBAL_DICTIONARY_FILE: join(dataDir, 'global.tsv'),
      DASHBOARD_PORT: '0',
      DISCORD_CLIENT_SECRET: discord.bots[0]!.clientSecret,
    },
  });
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close(), voiceServer?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

const preview = (voice: string) => [{ name: 'preview', type: 1, options: [{ name: 'voice', type: 3, value: voice }] }];
async function run(user: { id: string; username: string }, name: string, options: unknown[] = [], locale = 'en-US') {
  const i = await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user, name, locale, options: options as never });
  return { i, first: await i.waitForResponse((r) => r.kind === 'callback', 15_000) };
}
async function serverTotal(): Promise<string> {
  const usage = await run(bob, 'usage');
  return /Server total: \d+ \/ \d+ characters/.exec(String(usage.first.data?.content))![0];
}
async function autocomplete(name: string, options: unknown[], locale: string) {
  const i = await discord.sendInteraction({
    type: 4,
    channelId: DEFAULT_IDS.general,
    user: alice,
    name,
    locale,
    options: options as never,
  });
  const r = await i.waitForResponse((x) => x.kind === 'callback', 15_000);
  return r.data?.choices as Array<{ name: string; value: string }>;
}

async function click(messageId: string, r: InteractionResponse, label: string, user: { id: string; username: string }) {
  const button = ((r.data?.components as Array<{ components: Array<{ custom_id: string; label: string }> }>) ?? [])
    .flatMap((row) => row.components)
    .find((b) => b.label === label)!;
  const c = await discord.sendInteraction({
    type: 3,
    channelId: DEFAULT_IDS.general,
    user,
    name: '',
    locale: 'en-US',
    component: { messageId, customId: button.custom_id },
  });
  return { c, first: await c.waitForResponse((x) => x.kind === 'callback', 15_000) };
}
const longJobs = () =>
  emulator.requests().filter((r) => r.target === 'advanced' && (r.body as { text?: string } | undefined)?.text === LONG).length;

describe('npm start: voice previews', () => {
  it('a preview with the bot in no voice channel attaches the sample privately, charged to the member; the second one costs nothing and sends nothing', async () => {
    const before = await serverTotal();
    const first = await run(alice, 'voice', preview('ja-JP-Wavenet-B'));
    expect(first.first.data?.flags).toBe(EPHEMERAL);
    const audio = await first.i.waitForResponse((r) => r.files.length > 0, 20_000);
    expect(audio.files[0]!.name).toMatch(/\.mp3$/);
    const sent = standardRequests(emulator).filter((r) => r.voice === 'ja-JP-Wavenet-B');
    expect(sent).toEqual([{ voice: 'ja-JP-Wavenet-B', text: JA_SAMPLE, speed: 1, pitch: 0 }]);
    const charged = await serverTotal();
    expect(charged).not.toBe(before);
    expect(charged).toContain(`Server total: ${[...JA_SAMPLE].length} /`);
    // The member who asked pays: it is hers in /usage.
    expect(String((await run(alice, 'usage')).first.data?.content)).toContain(
      `Alice this period: ${[...JA_SAMPLE].length} / 1000 characters`,
    );

    const requestsBefore = emulator.requests().length;
    const second = await run(bob, 'voice', preview('ja-JP-Wavenet-B'));
    const again = await second.i.waitForResponse((r) => r.files.length > 0, 20_000);
    expect(again.files[0]!.data.equals(audio.files[0]!.data)).toBe(true);
    expect(emulator.requests().length).toBe(requestsBefore);
    expect(await serverTotal()).toBe(charged);
  }, 60_000);

  it('one member has 10 previews in 10 minutes, the dashboard’s and the slash command’s together; the next is refused in their language and sends nothing', async () => {
    const url = String(bot.logs.find((l) => l.msg === 'dashboard listening')!.url);
    discord.bots[0]!.redirectUris.push(`${url}/auth/callback`);
    const browser = new DashboardClient(url);
    await browser.signIn((authorize) => approveAtLocalDiscord(authorize, alice.id));
    const fromDashboard = () =>
      browser.request(`/api/me/${DEFAULT_IDS.guild}/preview`, {
        method: 'POST',
        json: { voice: 'ja-JP-Wavenet-B' },
        headers: { 'x-lang': 'ja' },
      });
    // alice's first preview was the slash command's (above): nine more from the browser (the cached sample: no request).
    for (let n = 2; n <= 10; n++) expect((await fromDashboard()).status, `preview ${n}`).toBe(200);
    const requestsBefore = emulator.requests().length;
    const refused = await fromDashboard();
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('声の試聴は10分間に10回までです。10分ほどしてから、もう一度お試しください。');
    const slash = await run(alice, 'voice', preview('ja-JP-Wavenet-A'), 'ja');
    expect(slash.first.data?.flags).toBe(EPHEMERAL);
    expect(String(slash.first.data?.content)).toBe('声の試聴は10分間に10回までです。10分ほどしてから、もう一度お試しください。');
    expect(emulator.requests().length).toBe(requestsBefore);
    // bob's window is his own.
    expect((await run(bob, 'voice', preview('ja-JP-Wavenet-B'))).first.data?.flags).toBe(EPHEMERAL);
  }, 60_000);

  it('a member whose own allowance is used up is refused a preview, with their numbers, in their language; nothing is sent', async () => {
    expect(
      String(
        (await run(bob, 'config', [{ name: 'user-limit', type: 1, options: [{ name: 'value', type: 4, value: 30 }] }])).first.data?.content,
      ),
    ).toContain('30');
    const made = await run(bob, 'voice', preview('ja-JP-Wavenet-C'), 'ja');
    await made.i.waitForResponse((r) => r.files.length > 0, 20_000);
    const requestsBefore = emulator.requests().length;
    const refused = await run(bob, 'voice', preview('ja-JP-Wavenet-D'), 'ja');
    expect(refused.first.data?.flags).toBe(EPHEMERAL);
    expect(String(refused.first.data?.content)).toMatch(/^今期のあなたの読み上げ上限に達しました（17 \/ 30 文字、/);
    expect(emulator.requests().length).toBe(requestsBefore);
    await run(bob, 'config', [{ name: 'user-limit', type: 1, options: [{ name: 'value', type: 4, value: 1000 }] }]);
  }, 60_000);

  it('every voice option answers with language and gender, filtered by what was typed, within Discord’s limits', async () => {
    const ja = await autocomplete(
      'voice',
      [{ name: 'preview', type: 1, options: [{ name: 'voice', type: 3, value: 'ja-JP-Wave', focused: true }] }],
      'ja',
    );
    expect(ja.map((c) => c.value)).toEqual(['ja-JP-Wavenet-A', 'ja-JP-Wavenet-B', 'ja-JP-Wavenet-C', 'ja-JP-Wavenet-D']);
    // Each with its gender as the engines' voice lists give it.
    expect(ja.map((c) => c.name.split(' · ')[2])).toEqual(['女性', '女性', '男性', '男性']);
    expect(ja[1]!.name).toBe('ja-JP-Wavenet-B · 日本語 (日本) · 女性');
    const say = await autocomplete('say', [{ name: 'voice', type: 3, value: 'joanna', focused: true }], 'en-US');
    expect(say).toEqual([{ name: 'Joanna · English · female', value: 'Joanna' }]);
    const all = await autocomplete(
      'config',
      [{ name: 'voice', type: 1, options: [{ name: 'value', type: 3, value: '', focused: true }] }],
      'en-US',
    );
    expect(all.length).toBe(25);
    for (const c of all) expect(c.name.length).toBeLessThanOrEqual(100);
  }, 30_000);
});

describe('npm start: reading controls', () => {
  it('a long /narrate asks first; Cancel sends nothing, Confirm delivers the audio', async () => {
    const asked = await run(alice, 'narrate', [{ name: 'text', type: 3, value: LONG }]);
    expect(String(asked.first.data?.content)).toContain('This narration will use 230 characters');
    const cancel = await click(asked.first.messageId!, asked.first, 'Cancel', alice);
    expect(String(cancel.first.data?.content)).toContain('Nothing was sent');
    const again = await run(alice, 'narrate', [{ name: 'text', type: 3, value: LONG }]);
    expect(longJobs()).toBe(0);
    const confirm = await click(again.first.messageId!, again.first, 'Confirm', alice);
    const audio = await confirm.c.waitForResponse((r) => r.files.length > 0, 30_000);
    expect(audio.files[0]!.name).toMatch(/\.mp3$/);
    expect(longJobs()).toBe(1);
  }, 60_000);

  it('a dictionary import is summarised, merged on the click, and read with the global dictionary', async () => {
    const upload = discord.uploadAttachment({ filename: 'export.csv', data: Buffer.from('word,reading\nGPU,ジーピーユー\n', 'utf8') });
    const { i } = await run(bob, 'dictionary', [{ name: 'import', type: 1, options: [{ name: 'file', type: 11, value: upload.id }] }]);
    const summary = await i.waitForResponse((r) => r.kind === 'editOriginal', 15_000);
    expect(String(summary.data?.content)).toContain('1 new, 0 changed');
    const merged = await click(i.original()!.id, summary, 'Merge', bob);
    expect(String(merged.first.data?.content)).toBe('Merged 1 entries. The dictionary has 1 entries.');
    const before = standardRequests(emulator).length;
    const say = await run(bob, 'say', [{ name: 'text', type: 3, value: 'yomiage の GPU' }]);
    await say.i.waitForResponse((r) => r.files.length > 0, 20_000);
    expect(
      standardRequests(emulator)
        .slice(before)
        .map((r) => r.text),
    ).toContain('よみあげボット の ジーピーユー');
  }, 60_000);

  it('/skip is refused to a member outside the voice channel; /usage answers with the chart', async () => {
    expect(String((await run(alice, 'skip')).first.data?.content)).toContain('Move Members');
    const usage = await run(alice, 'usage');
    const png = usage.first.files.find((f) => f.name === 'usage.png')!;
    expect((await loadImage(png.data)).width).toBe(640);
    expect(String(usage.first.data?.content)).toMatch(/per day \(UTC; \d+ characters in all\)/);
  }, 30_000);
});

describe('npm start: join/leave announcements, paid by the server', () => {
  it('one member renaming and re-joining is announced at most 4 times in 10 minutes, under at most 3 names a day', async () => {
    await run(bob, 'config', [{ name: 'announce', type: 1, options: [{ name: 'value', type: 5, value: true }] }]);
    await run(bob, 'config', [{ name: 'speed', type: 1, options: [{ name: 'value', type: 10, value: 4 }] }]);
    await discord.setVoiceState(alice.id, DEFAULT_IDS.guild, DEFAULT_IDS.voice);
    const joined = await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
    expect(String((await joined.waitForResponse((r) => r.kind === 'editOriginal', 30_000)).data?.content)).toContain('Joined');
    const from = standardRequests(emulator).length;
    const names = ['いちろう', 'じろう', 'さぶろう', 'しろう', 'ごろう', 'ろくろう'];
    for (const [i, name] of names.entries()) {
      // A new name each time (/voice name), then in or out of the bot's voice channel.
      expect(
        String(
          (await run(bob, 'voice', [{ name: 'name', type: 1, options: [{ name: 'reading', type: 3, value: name }] }])).first.data?.content,
        ),
      ).toContain(name);
      await discord.setVoiceState(bob.id, DEFAULT_IDS.guild, i % 2 === 0 ? DEFAULT_IDS.voice : null);
    }
    // A message read after the last of them: every announcement that was queued is asked for before it.
    await discord.sendMessage({ channelId: DEFAULT_IDS.general, author: alice, content: 'おわりの合図です' });
    const texts = await vi.waitUntil(
      () => {
        const sent = standardRequests(emulator)
          .slice(from)
          .map((r) => r.text)
          .join('|');
        return sent.includes('おわりの合図') ? sent : undefined;
      },
      { timeout: 30_000, interval: 50, message: 'the closing message' },
    );
    expect(texts).toContain('いちろうさんが入室しました。');
    expect(texts).toContain('じろうさんが退出しました。');
    expect(texts).toContain('さぶろうさんが入室しました。');
    // The fourth name in a day: announced unnamed (one fixed line, a cached clip from then on).
    expect(texts).toContain('誰かが退出しました。');
    expect(texts).not.toContain('しろう');
    // The fifth and sixth within 10 minutes: not announced at all.
    expect(texts).not.toContain('ごろう');
    expect(texts).not.toContain('ろくろう');
  }, 60_000);
});
