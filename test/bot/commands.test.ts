import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApplicationCommandOptionType, ApplicationCommandType } from 'discord.js';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { DEFAULT_TOKEN } from '@yomiage/tts-emulator';
import { loadCommands } from '../../src/discord/interactions/loader.ts';
import { SHORT_TONES, standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';
import { guildStats } from '../support/guild-stats.ts';

// The commands and auto-read, end to end: real discord.js against the loopback Discord, the emulator.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' }; // Moderator role: Manage Server
const EPHEMERAL = 64;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    env: { USER_MONTHLY_CHARS: '60' },
    emulator: { ...SHORT_TONES, jobs: { pendingMs: 150, runningMs: 250, minPollAfterMs: 100, pollAfterMs: 100 } },
  });
});
afterAll(async () => h?.close());

async function emulatorMp3(text: string, voice: string): Promise<Buffer> {
  const res = await fetch(`${h.emulator.baseUrl}/text_to_speech_api/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', token: DEFAULT_TOKEN, 'x-forwarded-for': '10.9.9.9' },
    body: JSON.stringify({ text, voice, speed: 1, pitch: 0 }),
  });
  const { url } = (await res.json()) as { url: string };
  return Buffer.from(await (await fetch(url)).arrayBuffer());
}

describe('/say without a voice session', () => {
  it('answers with an MP3 attachment byte-identical to the emulator audio for that text and voice', async () => {
    const text = 'こんにちは、読み上げのテストです';
    const interaction = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'say',
      locale: 'ja',
      options: [
        { name: 'text', type: 3, value: text },
        { name: 'voice', type: 3, value: 'ja-JP-Wavenet-C' },
      ],
    });
    const final = await interaction.waitForResponse((r) => r.files.length > 0, 20_000);
    const expected = await emulatorMp3(text, 'ja-JP-Wavenet-C');
    expect(final.files[0]!.data.equals(expected)).toBe(true);
    expect(final.files[0]!.name).toMatch(/\.mp3$/);
    expect(standardRequests(h.emulator).some((r) => r.text === text && r.voice === 'ja-JP-Wavenet-C')).toBe(true);
    // Nobody is pinged by the bot's messages.
    expect(final.data?.allowed_mentions).toMatchObject({ parse: [] });
  });
});

describe('/narrate', () => {
  it('defers, shows progress, then ends with the audio and the seed', async () => {
    const interaction = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: bob,
      name: 'narrate',
      locale: 'en-US',
      options: [
        { name: 'text', type: 3, value: 'Good evening, this is the evening news.' },
        { name: 'voice', type: 3, value: 'Luna' },
        { name: 'seed', type: 4, value: 4242 },
      ],
    });
    const final = await interaction.waitForResponse((r) => r.files.length > 0, 30_000);
    const responses = interaction.responses();
    expect(responses[0]).toMatchObject({ kind: 'callback', type: 5 });
    const progress = responses.filter((r) => r.kind === 'editOriginal' && r.files.length === 0);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(String(final.data?.content)).toContain('4242');
    expect(String(final.data?.content)).toContain('Luna');
    expect(final.files[0]!.data.subarray(0, 3).toString('latin1') === 'ID3' || final.files[0]!.data[0] === 0xff).toBe(true);
  });
});

describe('/help', () => {
  const helpText = async (locale: 'ja' | 'en-US') => {
    const i = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'help', locale });
    return String((await i.waitForResponse((r) => r.kind === 'callback', 10_000)).data?.content);
  };

  it("names every command as the member's client shows it: /参加 in Japanese, /join in English", async () => {
    const commands = [...(await loadCommands()).values()].map((c) => c.data);
    const shown = (lang: 'ja' | 'en-US') => commands.map((c) => c.name_localizations?.[lang] ?? c.name);
    for (const [locale, other] of [
      ['ja', 'en-US'],
      ['en-US', 'ja'],
    ] as const) {
      const content = await helpText(locale);
      // Every /word of the text is a command of that client, each command of a member is there, nothing left unfilled.
      const named = [...content.matchAll(/\/([^\s・,、（）()：:]+)/g)].map((m) => m[1]!);
      expect(
        named.filter((n) => !shown(locale).includes(n)),
        locale,
      ).toEqual([]);
      expect(
        named.filter((n) => shown(other).includes(n) && !shown(locale).includes(n)),
        locale,
      ).toEqual([]);
      expect(content).not.toMatch(/[{}]/);
      for (const name of ['join', 'leave', 'say', 'dictionary', 'usage', 'voice'])
        expect(named, `${locale} ${name}`).toContain(shown(locale)[commands.findIndex((c) => c.name === name)]);
    }
    const text = await helpText('ja');
    expect(text).toContain('/参加 — ');
    expect(text).toContain('/退出 — ');
    expect(text).toContain('/辞書 — ');
    expect(text).toContain('「;」で始まるメッセージは読み上げません。');
  });

  it("says the server's own do-not-read prefix", async () => {
    const settings = h.bot.context.repos.guildSettings;
    const before = settings.get(DEFAULT_IDS.guild).ignorePrefix;
    await settings.update(DEFAULT_IDS.guild, { ignorePrefix: '!!' });
    try {
      expect(await helpText('en-US')).toContain('Messages starting with "!!" are not read.');
      expect(await helpText('ja')).toContain('「!!」で始まるメッセージは読み上げません。');
    } finally {
      await settings.update(DEFAULT_IDS.guild, { ignorePrefix: before });
    }
  });

  it('lists every subcommand of every command, and every App on a message, from their registered data', async () => {
    // The expected set is the commands' own definitions: a command or subcommand added later and
    // missing from /help fails here.
    const commands = [...(await loadCommands()).values()].map((c) => c.data);
    for (const [locale, lead, separator] of [
      ['ja', '：', '・'],
      ['en-US', ': ', ', '],
    ] as const) {
      const shown = (o: { name: string; name_localizations?: Partial<Record<string, string | null>> | null | undefined }) =>
        o.name_localizations?.[locale] ?? o.name;
      const lines = (await helpText(locale)).split('\n');
      for (const command of commands) {
        if (command.name === 'help') continue;
        if (command.type === ApplicationCommandType.Message) {
          const apps = lines.find((l) => l.includes(' > '));
          expect(apps?.slice(apps.indexOf(' > ') + 3).split(separator), `${locale} Apps`).toContain(shown(command));
          continue;
        }
        const line = lines.find((l) => l.startsWith(`/${shown(command)} — `));
        expect(line, `${locale} /${command.name}`).toBeDefined();
        const subs = ('options' in command ? (command.options ?? []) : []).flatMap((o) =>
          o.type === ApplicationCommandOptionType.Subcommand
            ? [shown(o)]
            : o.type === ApplicationCommandOptionType.SubcommandGroup
              ? (o.options ?? []).map((sub) => `${shown(o)} ${shown(sub)}`)
              : [],
        );
        if (subs.length === 0) continue;
        expect(line!.slice(line!.lastIndexOf(lead) + lead.length).split(separator), `${locale} /${command.name}`).toEqual(subs);
      }
    }
  });
});

describe('/config', () => {
  it('refuses a member without Manage Server, and nothing changes', async () => {
    const before = h.bot.context.repos.guildSettings.get(DEFAULT_IDS.guild).voice;
    const interaction = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: alice,
      name: 'config',
      locale: 'ja',
      // Discord hides the command from alice by default_member_permissions; a server owner can
      // override that, so the bot checks again: here alice's permissions lack Manage Server.
      options: [{ name: 'voice', type: 1, options: [{ name: 'value', type: 3, value: 'en-US-Wavenet-A' }] }],
    });
    const reply = await interaction.waitForResponse((r) => r.kind === 'callback');
    expect(reply.data?.flags).toBe(EPHEMERAL);
    expect(String(reply.data?.content)).toContain('サーバー管理');
    expect(h.bot.context.repos.guildSettings.get(DEFAULT_IDS.guild).voice).toBe(before);
  });

  it('lets an admin change the server voice', async () => {
    const interaction = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: bob,
      name: 'config',
      locale: 'en-US',
      options: [{ name: 'speed', type: 1, options: [{ name: 'value', type: 10, value: 1.25 }] }],
    });
    await interaction.waitForResponse((r) => r.kind === 'callback');
    expect(h.bot.context.repos.guildSettings.get(DEFAULT_IDS.guild).speed).toBe(1.25);
  });
});

describe('auto-read', () => {
  it('sends the normalised text to the service, skips bots, and applies the dictionary', async () => {
    // With MP3 posts: the bot is in no voice channel in this file (otherwise not read).
    const admin = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.chat,
      user: bob,
      name: 'autoread',
      locale: 'en-US',
      options: [{ name: 'add', type: 1, options: [{ name: 'mp3', type: 5, value: true }] }],
    });
    expect(String((await admin.waitForResponse((r) => r.kind === 'callback')).data?.content)).toContain('costs characters');
    const dict = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.chat,
      user: bob,
      name: 'dictionary',
      locale: 'en-US',
      options: [
        {
          name: 'add',
          type: 1,
          options: [
            { name: 'word', type: 3, value: 'ymg' },
            { name: 'reading', type: 3, value: 'よみあげ' },
          ],
        },
      ],
    });
    await dict.waitForResponse((r) => r.kind === 'callback');

    const before = standardRequests(h.emulator).length;
    await h.discord.sendMessage({
      channelId: DEFAULT_IDS.chat,
      author: { id: DEFAULT_IDS.otherbot, username: 'otherbot', bot: true },
      content: 'I am a bot and must not be read',
    });
    await h.discord.sendMessage({
      channelId: DEFAULT_IDS.chat,
      author: alice,
      content: `<@${DEFAULT_IDS.bob}> ymg見て https://example.com/page?x=1 <:pepe:123456789012345678> ||秘密の話|| \`\`\`js\nconsole.log(1)\n\`\`\``,
    });
    const spoken = await vi.waitUntil(
      () =>
        standardRequests(h.emulator)
          .slice(before)
          .find((r) => r.text.includes('よみあげ')),
      { timeout: 20_000, message: 'auto-read request' },
    );
    expect(spoken.text).not.toContain('<@');
    expect(spoken.text).not.toContain('http');
    expect(spoken.text).not.toContain('秘密');
    expect(spoken.text).not.toContain('console.log');
    expect(spoken.text).toContain('pepe');
    expect(spoken.text.toLowerCase()).toContain('bob');
    expect(spoken.text).not.toContain('ymg');
    expect(
      standardRequests(h.emulator)
        .slice(before)
        .some((r) => r.text.includes('bot')),
    ).toBe(false);
  });
});

describe('auto-read without a voice session', () => {
  it('answers each request with one MP3, also when several messages were merged into one request', async () => {
    const before = standardRequests(h.emulator).length;
    const dave = { id: '1000000000000000055', username: 'dave' }; // a fresh budget (this file's limit is 60)
    const lines = ['一つ目のメッセージ', '二つ目のメッセージ', '三つ目のメッセージ'];
    const ids: string[] = [];
    for (const content of lines) ids.push((await h.discord.sendMessage({ channelId: DEFAULT_IDS.chat, author: dave, content })).id);
    // The bot's MP3 posts answering dave's lines (each a reply to the last line of its request).
    const posted = () =>
      h.discord.messages.filter(
        (m) =>
          m.channelId === DEFAULT_IDS.chat &&
          m.authorId === h.discord.botUser.id &&
          m.attachments.length > 0 &&
          ids.includes(m.messageReference?.message_id ?? ''),
      ).length;
    const requests = await vi.waitUntil(
      () => {
        const texts = standardRequests(h.emulator)
          .slice(before)
          .map((r) => r.text)
          .filter((t) => lines.some((l) => t.includes(l)));
        return lines.every((l) => texts.some((t) => t.includes(l))) ? texts : undefined;
      },
      { timeout: 20_000, message: 'all three spoken' },
    );
    await vi.waitUntil(() => posted() >= requests.length, { timeout: 20_000, message: 'the attachments' });
    // Nothing more can come: the guild's queue is idle, every request delivered.
    await vi.waitUntil(
      () => {
        const s = guildStats(h.bot.scheduler, DEFAULT_IDS.guild);
        return s.queued + s.synthesizing + s.ready === 0 && !s.playing;
      },
      { timeout: 20_000, message: 'an idle queue' },
    );
    expect(posted()).toBe(requests.length);
    expect(requests.length).toBeLessThanOrEqual(3);
  });
});

describe('character budgets', () => {
  it('refuses a member over the monthly limit with a localised ephemeral message, sending nothing', async () => {
    const carol = { id: '1000000000000000077', username: 'carol' };
    // 35 characters, no long runs (the normaliser caps runs of one character).
    const text = '今日は天気がいいですね。'.repeat(3).slice(0, 35);
    const first = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: carol,
      name: 'say',
      locale: 'ja',
      options: [{ name: 'text', type: 3, value: text + 'い' }],
    });
    await first.waitForResponse((r) => r.files.length > 0, 20_000);
    const before = h.emulator.requests().length;
    const second = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: carol,
      name: 'say',
      locale: 'ja',
      options: [{ name: 'text', type: 3, value: text + 'う' }],
    });
    const reply = await second.waitForResponse((r) => r.kind === 'callback');
    expect(reply.data?.flags).toBe(EPHEMERAL);
    expect(String(reply.data?.content)).toMatch(/上限.*36 \/ 60/);
    // A later /say by someone else is spoken: the queue is in order, so the refused one would have been requested before it.
    const erin = { id: '1000000000000000088', username: 'erin' };
    const later = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: erin,
      name: 'say',
      locale: 'ja',
      options: [{ name: 'text', type: 3, value: 'あとの発言' }],
    });
    await later.waitForResponse((r) => r.files.length > 0, 20_000);
    expect(
      h.emulator
        .requests()
        .slice(before)
        .filter((r) => r.target === 'standard')
        .map((r) => (r.body as { text: string }).text),
    ).toEqual(['あとの発言']);
  });
});
