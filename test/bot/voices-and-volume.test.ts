import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import type { DashboardServer } from '../../src/dashboard/server.ts';
import { clientView } from '../../src/dashboard/access.ts';
import { firstPoolVoice, VOICE_POOL_MAX } from '../../src/domain/voice-pool.ts';
import { KNOWN_STANDARD_VOICES } from '../../src/tts/voices.ts';
import { standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';
import { approveAtLocalDiscord, DashboardClient, startHarnessDashboard } from '../support/dashboard-client.ts';

// Voices told apart and evened out, in front of the whole bot (in process, loopback Discord and
// emulator): the voice pool and members' volumes through /config, /voice and the dashboard, in
// Japanese and English, who may change them and what is refused; which pool voice an auto-read
// message outside any call is read with. Audio at a volume, and different voices in one call:
// test/bot/npm-start-voices-and-volume.test.ts and the unit tests (test/audio, test/domain).
const guildId = DEFAULT_IDS.guild;
const alice = { id: DEFAULT_IDS.alice, username: 'alice', globalName: 'Alice' }; // no special permission
const bob = { id: DEFAULT_IDS.bob, username: 'bob', globalName: 'Bob' }; // Moderator: Manage Server
const dave = { id: '1000000000000000041', username: 'dave' };
const carol = { id: '1000000000000000042', username: 'carol' };
type User = { id: string; username: string };
type Option = APIApplicationCommandInteractionDataOption;
const POOL = ['ja-JP-Wavenet-A', 'ja-JP-Wavenet-C', 'ja-JP-Wavenet-D'];

let h: Harness;
let dashboard: DashboardServer;
beforeAll(async () => {
  h = await startHarness({ env: { AUTO_READ_MAX_AGE_SECONDS: '600' } });
  dashboard = await startHarnessDashboard(h, { view: clientView(h.bot.client, { shardCount: 1, shards: [0] }, []) });
}, 60_000);
afterAll(async () => {
  await dashboard?.close();
  await h?.close();
});

/** A slash command's first answer with text (the reply, or the deferred reply's edit), and whether it was private. */
async function command(user: User, name: string, options: Option[], locale = 'en-US', channelId: string = DEFAULT_IDS.general) {
  const i = await h.discord.sendInteraction({ channelId, user, name, locale, options });
  const r = await i.waitForResponse((r) => (r.kind === 'callback' || r.kind === 'editOriginal') && r.data?.content !== undefined, 20_000);
  return { text: String(r.data?.content), private: r.data?.flags === 64 };
}
const sub = (name: string, options: Option[] = []) => [{ name, type: 1, options } as Option];
const pool = (action: string, voice?: string) =>
  sub('voice-pool', [
    { name: 'action', type: 3, value: action },
    ...(voice === undefined ? [] : [{ name: 'voice', type: 3, value: voice } as Option]),
  ]);
async function signedIn(userId: string): Promise<DashboardClient> {
  const client = new DashboardClient(dashboard.url);
  await client.signIn((url) => approveAtLocalDiscord(url, userId));
  return client;
}
/** A dashboard call in `lang` (the page's language header). */
const call = (client: DashboardClient, method: string, path: string, json: unknown, lang: 'ja' | 'en') =>
  client.request(`/api${path}`, { method, json, headers: { 'x-lang': lang } });

/** The voice the emulator was asked to read `content` with, posted in #chat (auto-read, MP3s posted: no call). */
async function readWith(author: User, content: string): Promise<string> {
  const before = standardRequests(h.emulator).length;
  await h.discord.sendMessage({ channelId: DEFAULT_IDS.chat, author, content });
  const request = await vi.waitUntil(
    () =>
      standardRequests(h.emulator)
        .slice(before)
        .find((r) => r.text.endsWith(content)),
    {
      timeout: 20_000,
      interval: 20,
      message: content,
    },
  );
  return request.voice;
}

describe('/config voice-pool', () => {
  it('an admin adds, lists and removes voices, in Japanese and English; each refusal says why and changes nothing', async () => {
    expect((await command(bob, 'config', pool('list'), 'ja')).text).toBe(
      '声の候補はありません。自分の声を決めていないメンバーはサーバーの声（ja-JP-Wavenet-B）で読み上げます。',
    );
    const added = await command(bob, 'config', pool('add', ` ${POOL[0]} `), 'ja');
    expect(added.text).toContain(`声の候補に ${POOL[0]} を追加しました。`);
    expect(added.text).toContain('声の候補（1/20）');
    for (const voice of POOL.slice(1))
      expect((await command(bob, 'config', pool('add', voice))).text).toContain(`Added ${voice} to the voice pool.`);
    const list = await command(bob, 'config', pool('list'));
    expect(list.private).toBe(true);
    expect(list.text).toContain(`Voice pool (3/${VOICE_POOL_MAX}): \`ja-JP-Wavenet-A\`, \`ja-JP-Wavenet-C\`, \`ja-JP-Wavenet-D\``);
    expect((await command(bob, 'config', sub('show'))).text).toContain('- Voice pool: ja-JP-Wavenet-A, ja-JP-Wavenet-C, ja-JP-Wavenet-D');

    // Refusals, private and in the member's language: nothing changes.
    const refusals = [
      [alice, pool('add', 'ja-JP-Wavenet-B'), 'ja', '「サーバー管理」権限'],
      [alice, pool('remove', POOL[0]), 'en-US', 'Manage Server'],
      [bob, pool('add', POOL[1]), 'en-US', 'ja-JP-Wavenet-C is already in the voice pool. Nothing was changed.'],
      [bob, pool('remove', 'ja-JP-Wavenet-B'), 'ja', 'ja-JP-Wavenet-B は声の候補にありません。何も変更していません。'],
      [bob, pool('add'), 'ja', '追加・削除する声を「声」の欄で指定してください。'],
    ] as const;
    for (const [user, options, locale, says] of refusals) {
      const refused = await command(user, 'config', [...options], locale);
      expect(refused.text, says).toContain(says);
      expect(refused.private, says).toBe(true);
    }
    // A voice the bot does not know is asked of the service first (answered after the wait, as /config voice does): refused there.
    const asked = standardRequests(h.emulator).length;
    expect((await command(bob, 'config', pool('add', 'xx-XX-Nobody-Z'), 'ja')).text).toContain(
      '声「xx-XX-Nobody-Z」は音声サービスで使えません。',
    );
    expect(
      standardRequests(h.emulator)
        .slice(asked)
        .map((r) => r.voice),
    ).toEqual(['xx-XX-Nobody-Z']);
    expect(h.bot.context.repos.voicePool.list(guildId)).toEqual(POOL);

    // Capped: the 21st voice is refused with the number.
    const more = KNOWN_STANDARD_VOICES.filter((v) => !POOL.includes(v)).slice(0, VOICE_POOL_MAX - POOL.length);
    for (const v of more) await h.bot.context.repos.voicePool.add(guildId, v);
    const extra = KNOWN_STANDARD_VOICES.find((v) => !POOL.includes(v) && !more.includes(v))!;
    expect((await command(bob, 'config', pool('add', extra))).text).toContain('The voice pool holds at most 20 voices.');
    for (const v of more) expect((await command(bob, 'config', pool('remove', v))).text).toContain(`Removed ${v} from the voice pool.`);
    expect(h.bot.context.repos.voicePool.list(guildId)).toEqual(POOL);
  });

  it('members without a voice of their own are read with their own first voice of the pool (no call here); a voice of their own wins', async () => {
    const autoread = await command(bob, 'autoread', sub('add', [{ name: 'mp3', type: 5, value: true }]), 'en-US', DEFAULT_IDS.chat);
    expect(autoread.text).toContain('costs characters');
    for (const [i, member] of [dave, carol, alice].entries()) {
      const voice = await readWith(member, `声の確認${i}です`);
      expect(voice, member.username).toBe(firstPoolVoice(POOL, member.id));
      // The same member keeps it, message after message.
      expect(await readWith(member, `もう一度${i}です`)).toBe(voice);
    }
    // /say speaks with the same voice as their chat.
    const asked = standardRequests(h.emulator).length;
    await command(bob, 'say', [{ name: 'text', type: 3, value: 'スラッシュコマンドの声' } as Option], 'ja', DEFAULT_IDS.chat);
    const said = await vi.waitUntil(
      () =>
        standardRequests(h.emulator)
          .slice(asked)
          .find((r) => r.text.includes('スラッシュコマンドの声')),
      {
        timeout: 20_000,
      },
    );
    expect(said.voice).toBe(firstPoolVoice(POOL, bob.id));
    const own = await command(carol, 'voice', sub('set', [{ name: 'voice', type: 3, value: 'ja-JP-NanamiNeural' }]), 'ja');
    expect(own.text).toContain('ja-JP-NanamiNeural');
    expect(await readWith(carol, '自分の声です')).toBe('ja-JP-NanamiNeural');
    const shown = await command(dave, 'voice', sub('show'), 'ja');
    expect(shown.text).toContain(`あなたの声: ${firstPoolVoice(POOL, dave.id)}`);
    expect(shown.text).toContain('（サーバーの声の候補から）');
    expect(shown.text).toContain(' / 音量 1');
  });
});

describe('volume: /voice volume and /config volume', () => {
  it("a member sets their own, in Japanese and English; an admin's wins and the member is told; cleared, theirs again", async () => {
    expect((await command(alice, 'voice', sub('volume', [{ name: 'value', type: 10, value: 0.5 }]), 'ja')).text).toBe(
      'ボイスチャンネルでのあなたの声の音量を 0.5 にしました。',
    );
    const set = await command(
      bob,
      'config',
      sub('volume', [
        { name: 'member', type: 6, value: alice.id },
        { name: 'value', type: 10, value: 1.5 },
      ]),
    );
    expect(set.text).toBe(`<@${alice.id}>'s messages now play at volume 1.5 in voice, whatever volume they choose.`);
    expect((await command(alice, 'voice', sub('volume', [{ name: 'value', type: 10, value: 0.8 }]))).text).toBe(
      'Saved your volume 0.8, but an admin set yours to 1.5, which is used while it is set.',
    );
    expect((await command(alice, 'voice', sub('show'))).text).toContain(' / volume 1.5 (set by an admin)');
    // Only admins: a member cannot lift an admin's volume, nor set another's.
    const refused = await command(alice, 'config', sub('volume', [{ name: 'member', type: 6, value: alice.id }]), 'ja');
    expect(refused.text).toContain('「サーバー管理」権限');
    expect(refused.private).toBe(true);
    const bot = await command(
      bob,
      'config',
      sub('volume', [
        { name: 'member', type: 6, value: DEFAULT_IDS.bot },
        { name: 'value', type: 10, value: 2 },
      ]),
      'ja',
    );
    expect(bot.text).toContain('このボット自身には音量を設定できません');
    const cleared = await command(bob, 'config', sub('volume', [{ name: 'member', type: 6, value: alice.id }]), 'ja');
    expect(cleared.text).toBe(`<@${alice.id}> のメッセージは本人の設定した音量（0.8）に戻りました。`);
    expect((await command(alice, 'voice', sub('show'))).text).toContain(' / volume 0.8');
    // /voice reset gives back the server's defaults: volume 1 again.
    await command(alice, 'voice', sub('reset'));
    expect((await command(alice, 'voice', sub('show'))).text).toContain(' / volume 1');
  });
});

describe('the dashboard: the same settings, the same rules', () => {
  it('an admin changes the pool and a member’s volume; a member their own; refusals in the page’s language; the audit log names each', async () => {
    const admin = await signedIn(bob.id);
    const view = await admin.api('GET', `/guilds/${guildId}`);
    expect(view.body.voicePool).toEqual(POOL);
    expect(view.body.volumes).toEqual([]);
    const added = await call(admin, 'POST', `/guilds/${guildId}/voice-pool`, { voice: 'ja-JP-KeitaNeural' }, 'en');
    expect(added.body).toEqual([...POOL, 'ja-JP-KeitaNeural']);
    const again = await call(admin, 'POST', `/guilds/${guildId}/voice-pool`, { voice: 'ja-JP-KeitaNeural' }, 'ja');
    expect([again.status, again.body.message]).toEqual([400, 'ja-JP-KeitaNeural はすでに声の候補にあります。何も変更していません。']);
    const blank = await call(admin, 'POST', `/guilds/${guildId}/voice-pool`, { voice: '  ' }, 'en');
    expect(blank.status).toBe(400);
    expect((await call(admin, 'DELETE', `/guilds/${guildId}/voice-pool`, { voice: 'ja-JP-KeitaNeural' }, 'en')).body).toEqual(POOL);

    const loud = await call(admin, 'PUT', `/guilds/${guildId}/volume`, { memberId: alice.id, volume: 0.7 }, 'en');
    expect(loud.body).toEqual([{ id: alice.id, volume: 0.7, name: 'Alice' }]);
    const tooLoud = await call(admin, 'PUT', `/guilds/${guildId}/volume`, { memberId: alice.id, volume: 2.5 }, 'ja');
    expect([tooLoud.status, tooLoud.body.message]).toEqual([400, 'volume は 0〜2 の範囲で指定してください。何も変更していません。']);
    const itself = await call(admin, 'PUT', `/guilds/${guildId}/volume`, { memberId: DEFAULT_IDS.bot, volume: 1 }, 'en');
    expect(itself.status).toBe(400);

    // A member: their own volume only; an admin's route is refused.
    const member = await signedIn(alice.id);
    const mine = await call(member, 'PUT', `/me/${guildId}/volume`, { volume: 1.2 }, 'en');
    expect(mine.body.voice).toMatchObject({ volume: 0.7, adminVolume: 0.7, own: { volume: 1.2 } });
    const nan = await call(member, 'PUT', `/me/${guildId}/volume`, { volume: 'loud' }, 'en');
    expect([nan.status, nan.body.message]).toEqual([400, 'volume must be from 0 to 2. Nothing was changed.']);
    for (const [method, path, body] of [
      ['POST', `/guilds/${guildId}/voice-pool`, { voice: 'ja-JP-Wavenet-B' }],
      ['PUT', `/guilds/${guildId}/volume`, { memberId: alice.id, volume: 2 }],
    ] as const)
      expect((await call(member, method, path, body, 'en')).status, path).toBe(403);
    expect(h.bot.context.repos.voicePool.list(guildId)).toEqual(POOL);
    await call(admin, 'PUT', `/guilds/${guildId}/volume`, { memberId: alice.id, volume: null }, 'en');
    const me = await member.api('GET', `/me/${guildId}`);
    expect(me.body.voice).toMatchObject({ voice: firstPoolVoice(POOL, alice.id), from: 'pool', volume: 1.2, adminVolume: null });

    const audit = (await call(admin, 'GET', `/guilds/${guildId}/audit`, undefined, 'en')).body as { text: string }[];
    const texts = audit.map((e) => e.text);
    expect(texts).toEqual(
      expect.arrayContaining([
        'Voice pool: added ja-JP-KeitaNeural',
        'Voice pool: removed ja-JP-KeitaNeural',
        'Volume of Alice set to 0.7',
        'Volume of Alice back to their own',
      ]),
    );
  });
});
