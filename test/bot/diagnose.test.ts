import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_IDS, PERMISSIONS, startFakeVoiceServer, trustCertificate, type FakeVoiceServer } from '@yomiage/local-discord';
import { VOICE_IDS, voicePermissionsWorld } from '@yomiage/local-discord/test/voice-permissions-world';
import { sleep } from '../../src/util/clock.ts';
import { startHarness, type Harness } from '../support/bot-harness.ts';
import { approveAtLocalDiscord, DashboardClient, startHarnessDashboard } from '../support/dashboard-client.ts';

// "Why wasn't this read?" and /diagnose against the whole bot in this process (real discord.js on
// the local Discord, the TLS voice server with DAVE, the emulator, SQLite): each cause the bot
// records as it decides, asked about from the message's menu as a member would, in Japanese and
// English. The world has the voice channels of voice-permissions-world.ts (Quiet: the bot may not
// speak there), #secret (moderators only) and #dark (the bot may not view it). Alice reads #general
// in Voice; the bot's clock can jump forward, which makes a message waiting for its speech too old.
const guildId = DEFAULT_IDS.guild;
const alice = { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' }; // Moderator: Manage Server, Move Members
const carol = { id: VOICE_IDS.carol, username: 'carol', globalName: 'Carol' };
const otherbot = { id: DEFAULT_IDS.otherbot, username: 'otherbot', bot: true };
const SECRET = '1100000000000000108';
const DARK = '1100000000000000109';
const WHY = "Why wasn't this read?";
type User = { id: string; username: string };

let voice: FakeVoiceServer;
let h: Harness;
let skew = 0;

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
  const world = voicePermissionsWorld();
  const none = '0';
  const view = PERMISSIONS.ViewChannel.toString();
  world.channels.push(
    {
      id: SECRET,
      name: 'secret',
      type: 0,
      position: 3,
      permissionOverwrites: [
        { id: guildId, type: 0, allow: none, deny: view },
        { id: DEFAULT_IDS.moderatorRole, type: 0, allow: view, deny: none },
        { id: DEFAULT_IDS.bot, type: 1, allow: view, deny: none },
      ],
    },
    { id: DARK, name: 'dark', type: 0, position: 4, permissionOverwrites: [{ id: DEFAULT_IDS.bot, type: 1, allow: none, deny: view }] },
  );
  h = await startHarness({
    discord: { voiceEndpoint: () => voice.endpoint, guilds: [world] },
    bot: { clock: { now: () => Date.now() + skew, sleep } },
  });
  await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
  voice.simulateListener({ guildId, channelId: DEFAULT_IDS.voice, userId: alice.id });
  const join = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
  expect(String((await join.waitForResponse((r) => r.kind === 'editOriginal', 30_000)).data?.content)).toContain('Joined');
  await voice.waitForDave(guildId);
}, 60_000);
afterAll(async () => {
  await h?.close();
  await voice?.close();
});

const fateOf = (messageId: string) => h.bot.context.diagnosis.fates.get(guildId, messageId);
async function write(author: User & { bot?: boolean }, content: string, channelId: string = DEFAULT_IDS.general): Promise<string> {
  return (await h.discord.sendMessage({ channelId, author, content })).id;
}
/** Waits until the bot has decided `messageId`'s fate (not merely queued it). */
async function decided(messageId: string, fate?: string): Promise<void> {
  await vi.waitUntil(() => (fate ? fateOf(messageId)?.fate === fate : fateOf(messageId) && fateOf(messageId)!.fate !== 'queued'), {
    timeout: 20_000,
    interval: 20,
    message: `${messageId}: ${fate ?? 'decided'} (now ${fateOf(messageId)?.fate})`,
  });
}
/** Apps > Why wasn't this read? on a message: the private answer. */
async function why(user: User, messageId: string, locale: string, channelId: string = DEFAULT_IDS.general): Promise<string> {
  const i = await h.discord.sendInteraction({ channelId, user, name: WHY, locale, target: { messageId } });
  const answer = await i.waitForResponse((r) => r.kind === 'callback', 20_000);
  expect(answer.data?.flags, 'private').toBe(64);
  return String(answer.data?.content ?? '');
}
/** /diagnose in a channel: the private answer. */
async function diagnose(user: User, locale: string, channelId: string = DEFAULT_IDS.general): Promise<string> {
  const i = await h.discord.sendInteraction({ channelId, user, name: 'diagnose', locale });
  const deferred = await i.waitForResponse((r) => r.kind === 'callback', 20_000);
  expect(deferred.data?.flags, 'private').toBe(64);
  return String((await i.waitForResponse((r) => r.kind === 'editOriginal', 20_000)).data?.content ?? '');
}
const voiceChannel = `<#${DEFAULT_IDS.voice}>`;

describe("Why wasn't this read? for each cause the bot records", () => {
  it('read: where and when (en); another member asks in Japanese', async () => {
    const id = await write(alice, 'おはよう');
    await decided(id, 'read');
    const en = await why(alice, id, 'en-US');
    expect(en).toMatch(new RegExp(`^\\*\\*This message:\\*\\* read in ${voiceChannel} <t:\\d+:T>$`));
    expect(await why(carol, id, 'ja')).toMatch(new RegExp(`^\\*\\*このメッセージ:\\*\\* <t:\\d+:T> に ${voiceChannel} で読み上げました$`));
  });

  it('the reading rules: a muted member (ja), a bot (en), the ignore prefix (ja)', async () => {
    await h.bot.context.repos.userSettings.set(guildId, carol.id, { muted: true });
    const muted = await write(carol, 'ミュート中です');
    await decided(muted, 'muted');
    expect(await why(alice, muted, 'ja')).toContain('投稿者は読み上げをミュートされています（/設定 ミュート）');
    await h.bot.context.repos.userSettings.set(guildId, carol.id, { muted: false });
    const fromBot = await write(otherbot, 'ボットの発言');
    await decided(fromBot, 'bot');
    expect(await why(alice, fromBot, 'en-US')).toContain('not read: bots and webhooks are not read here (/reading bots)');
    const prefixed = await write(alice, ';読まないで');
    await decided(prefixed, 'ignored_prefix');
    expect(await why(alice, prefixed, 'ja')).toContain('読み上げない記号で始まっています');
  });

  it("everyone in the call deafened (en); someone there cannot view the channel (ja), and the bot's own notice is never read", async () => {
    await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice, { selfDeaf: true });
    const unheard = await write(alice, '聞こえない');
    await decided(unheard, 'deafened');
    expect(await why(bob, unheard, 'en-US')).toContain(`not read: everyone in ${voiceChannel} had deafened themselves`);
    await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice, { selfDeaf: false });
    // #secret is read in the call, where alice cannot view it.
    await h.bot.context.repos.autoRead.add(guildId, SECRET, { postAudio: false });
    const notice = h.discord.waitForMessage((m) => m.channelId === SECRET, 20_000);
    const hidden = await write(bob, '内緒の話', SECRET);
    await decided(hidden, 'hidden');
    expect(await why(bob, hidden, 'ja', SECRET)).toContain(`${voiceChannel} にこのチャンネルを見られない人がいました`);
    // Alice may not ask about a message of a channel she cannot view.
    const refused = await why(alice, hidden, 'en-US', SECRET);
    expect(refused).toBe('You can ask only about messages in channels you can view.');
    expect(await why(bob, (await notice).id, 'en-US', SECRET)).toBe("The bot's own messages are never read.");
    await h.bot.context.repos.autoRead.remove(guildId, SECRET);
  });

  it('no text arrived (Message Content withheld): the message command sees the text, so it says so (en); /diagnose too (ja)', async () => {
    h.discord.setMessageContent(false);
    try {
      const blank = await write(alice, '本文はあります');
      await decided(blank, 'no_content');
      const en = await why(alice, blank, 'en-US');
      expect(en).toContain('not read: it reached the bot with no text');
      expect(en).toContain('⚠️ It reached the bot with no text, though it has some');
      expect(await diagnose(alice, 'ja')).toContain('❌ メッセージの内容が届いていません。');
    } finally {
      h.discord.setMessageContent(true);
    }
    const back = await write(alice, '戻りました');
    await decided(back);
    expect(await diagnose(alice, 'en-US')).toContain('✅ Message content arrives');
  });

  it("over its author's character limit: the numbers for the author (ja), not for others (en)", async () => {
    const limit = h.bot.context.budget.userLimitFor(guildId, carol.id);
    const held = await h.bot.context.budget.reserve([{ guildId, userId: carol.id, endpoint: 'standard', chars: limit }]);
    expect(held.ok).toBe(true);
    try {
      const over = await write(carol, '上限を超えました');
      await decided(over, 'budget');
      expect(await why(carol, over, 'ja')).toContain(`投稿者が文字数の上限（今期 ${limit} 文字）に達していました`);
      expect(await why(alice, over, 'en-US')).toContain('not read: its author had reached their character limit');
    } finally {
      if (held.ok) await h.bot.context.budget.release(held.reservation);
    }
  });

  it('too old by its turn (en), cleared with /clear (ja), deleted before its turn (/diagnose, ja)', async () => {
    h.emulator.setLatency('standard', 1_500);
    try {
      const late = await write(alice, '遅れた発言');
      await vi.waitUntil(() => h.bot.scheduler.stats(`voice:${DEFAULT_IDS.voice}`).synthesizing > 0, { timeout: 10_000, interval: 10 });
      skew += 70_000; // past AUTO_READ_MAX_AGE_SECONDS (60) while its speech is made
      await decided(late, 'too_old');
      expect(await why(alice, late, 'en-US')).toContain(
        'not read: too old by its turn, so it was dropped; the voice channel heard how many',
      );
      const cleared = await write(alice, '消される発言');
      await vi.waitUntil(() => fateOf(cleared)?.fate === 'queued', { timeout: 10_000, interval: 10 });
      const clear = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: bob, name: 'clear', locale: 'ja' });
      await clear.waitForResponse((r) => r.kind === 'callback', 20_000);
      await decided(cleared, 'cleared');
      expect(await why(alice, cleared, 'ja')).toContain('/クリア で読み上げ待ちが削除されました');
      const deleted = await write(alice, '取り消す発言');
      await vi.waitUntil(() => fateOf(deleted)?.fate === 'queued', { timeout: 10_000, interval: 10 });
      await h.discord.deleteMessage(DEFAULT_IDS.general, deleted);
      await decided(deleted, 'deleted');
      // Deleted, it has no menu any more: /diagnose lists the member's own recent messages.
      expect(await diagnose(alice, 'ja')).toContain(`/${deleted} 読み上げていません: 順番が来る前に削除されました`);
    } finally {
      h.emulator.setLatency('standard', 0);
    }
  });

  it('never seen: a channel the bot cannot view (en), a channel not read (ja)', async () => {
    const dark = await write(alice, '見えない', DARK);
    expect(await why(alice, dark, 'en-US', DARK)).toBe(
      "Never seen: the bot lacks View Channel here, so Discord does not send it this channel's messages.",
    );
    const unread = await write(alice, '読まれない', DEFAULT_IDS.chat);
    expect(await why(alice, unread, 'ja', DEFAULT_IDS.chat)).toBe(
      '読み上げていません: このチャンネルは読み上げの対象外です（ここで /参加 が使われておらず、自動読み上げのチャンネルでもありません）。',
    );
  });
});

describe('/diagnose', () => {
  it('in a voice channel where the bot may not speak: what that breaks (ja, en); this channel not read', async () => {
    await h.discord.setVoiceState(carol.id, guildId, VOICE_IDS.quiet);
    const ja = await diagnose(carol, 'ja', DEFAULT_IDS.chat);
    expect(ja).toContain(`❌ <#${VOICE_IDS.quiet}> でボットに足りない権限:\n・発言: 参加はできても、声が誰にも届きません`);
    expect(ja).toContain('❌ このチャンネルは読み上げていません。');
    expect(ja).toContain('サーバー管理者には');
    const en = await diagnose(carol, 'en-US', DEFAULT_IDS.chat);
    expect(en).toContain(`❌ The bot lacks in <#${VOICE_IDS.quiet}>:\n・Speak: it can join, but nobody hears it`);
    expect(en).toContain(`✅ The bot has every permission it needs in <#${DEFAULT_IDS.chat}>.`);
    await h.discord.setVoiceState(carol.id, guildId, null);
  });

  it('in a channel the bot cannot view: nothing there is read (en)', async () => {
    expect(await diagnose(alice, 'en-US', DARK)).toContain(
      `❌ The bot lacks in <#${DARK}>:\n・View Channel: it never receives the messages here`,
    );
  });

  it('an admin sees the call, its encryption, its health, the shared request window and the server (en, ja)', async () => {
    const en = await diagnose(bob, 'en-US');
    expect(en).toContain(`✅ This channel is read in ${voiceChannel}.`);
    expect(en).toContain(`🔊 ${voiceChannel} (read by <@${DEFAULT_IDS.bot}>): connected, end-to-end encrypted (DAVE)`);
    expect(en).toMatch(/Last 5 minutes: \d+ of \d+ heard within 20 s/);
    expect(en).toContain('**The server** (Manage Server)');
    expect(en).toMatch(/Requests to the speech service \(shared by every server\): \d+ of 30 left/);
    expect(en).toMatch(/The server's characters this period: \d+ of \d+ left/);
    const ja = await diagnose(bob, 'ja');
    expect(ja).toContain('接続中・エンドツーエンド暗号化（DAVE）済み');
    expect(ja).toContain('**サーバー全体**（サーバー管理者向け）');
  });

  it('the dashboard shows each call read now to admins: connected, encrypted, heard within 20 s; not to members', async () => {
    const dashboard = await startHarnessDashboard(h);
    try {
      const signedIn = async (userId: string) => {
        const client = new DashboardClient(dashboard.url);
        await client.signIn((url) => approveAtLocalDiscord(url, userId));
        return client;
      };
      const admin = await (await signedIn(bob.id)).api('GET', `/guilds/${guildId}/health`);
      expect(admin.status).toBe(200);
      expect(admin.body).toEqual([
        expect.objectContaining({ channelId: DEFAULT_IDS.voice, name: 'Voice', main: true, connected: true, encrypted: true, waiting: 0 }),
      ]);
      expect(admin.body[0].messages).toBeGreaterThan(0);
      expect(admin.body[0].heardWithin).toBeGreaterThan(0);
      expect((await (await signedIn(alice.id)).api('GET', `/guilds/${guildId}/health`)).status).toBe(403);
    } finally {
      await dashboard.close();
    }
  });

  it('a restart keeps the record: a message queued before it, that could not be read after it, says so (ja)', async () => {
    h.emulator.setLatency('standard', 5_000);
    const waiting = await write(alice, '再起動前の発言');
    try {
      await vi.waitUntil(() => fateOf(waiting)?.fate === 'queued', { timeout: 10_000, interval: 10 });
      // Nobody is in the call when the bot comes back: it is not rejoined, and what was queued for it is told and dropped.
      await h.restart(undefined, async () => {
        h.emulator.setLatency('standard', 0);
        await h.discord.setVoiceState(alice.id, guildId, null);
      });
      await decided(waiting, 'cleared');
      expect(await why(alice, waiting, 'ja')).toBe(
        '**このメッセージ:** 読み上げていません: 再起動のあと、予定していた場所では読み上げられなくなりました（チャンネルでお知らせしました）',
      );
    } finally {
      h.emulator.setLatency('standard', 0);
    }
  });
});
