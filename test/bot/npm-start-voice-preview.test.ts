import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { standardRequests } from '../support/bot-harness.ts';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';

// Voice previews through the real entry point: `npm start` as a child process (test/support/child-bot.ts)
// against the loopback Discord and the emulator. A preview with the bot in no voice channel is attached
// privately; the sample is charged to the server once, and the next preview of that voice is the cached
// audio: no request to the service and no characters. Voice options answer with language and gender.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' }; // Manage Server: sees the server's /usage
const EPHEMERAL = 64;
const JA_SAMPLE = 'こんにちは、この声で読み上げます。';

let emulator: Emulator;
let discord: FakeDiscord;
let dataDir: string;
let bot: ChildBot;
beforeAll(async () => {
  [emulator, discord] = await Promise.all([startEmulator({ control: true }), startFakeDiscord()]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-preview-'));
  bot = await startChildBot({ discord, emulator, dataDir });
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close()]);
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

describe('npm start: voice previews', () => {
  it('a preview with the bot in no voice channel attaches the sample privately; the second one costs nothing and sends nothing', async () => {
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

    const requestsBefore = emulator.requests().length;
    const second = await run(bob, 'voice', preview('ja-JP-Wavenet-B'));
    const again = await second.i.waitForResponse((r) => r.files.length > 0, 20_000);
    expect(again.files[0]!.data.equals(audio.files[0]!.data)).toBe(true);
    expect(emulator.requests().length).toBe(requestsBefore);
    expect(await serverTotal()).toBe(charged);
  }, 60_000);

  it('every voice option answers with language and gender, filtered by what was typed, within Discord’s limits', async () => {
    const ja = await autocomplete(
      'voice',
      [{ name: 'preview', type: 1, options: [{ name: 'voice', type: 3, value: 'ja-JP-Wave', focused: true }] }],
      'ja',
    );
    expect(ja.map((c) => c.value)).toEqual(['ja-JP-Wavenet-A', 'ja-JP-Wavenet-B', 'ja-JP-Wavenet-C', 'ja-JP-Wavenet-D']);
    expect(ja[1]!.name).toBe('ja-JP-Wavenet-B · 日本語 (日本) · 性別不明');
    const say = await autocomplete('say', [{ name: 'voice', type: 3, value: 'joanna', focused: true }], 'en-US');
    expect(say).toEqual([{ name: 'Joanna · English · gender unknown', value: 'Joanna' }]);
    const all = await autocomplete(
      'config',
      [{ name: 'voice', type: 1, options: [{ name: 'value', type: 3, value: '', focused: true }] }],
      'en-US',
    );
    expect(all.length).toBe(25);
    for (const c of all) expect(c.name.length).toBeLessThanOrEqual(100);
  }, 30_000);
});
