import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import { defaultGuild, guildOnShard } from '@yomiage/local-discord/fixtures';
import type { DashboardServer } from '../../src/dashboard/server.ts';
import { clientView } from '../../src/dashboard/access.ts';
import { createLogger } from '../../src/util/log.ts';
import { standardRequests, startHarness, type Harness } from '../support/bot-harness.ts';
import { approveAtLocalDiscord, DashboardClient, startHarnessDashboard } from '../support/dashboard-client.ts';

// The web dashboard in front of the whole bot (in process, against the loopback Discord and the
// emulator): who may see and change what, the session and its CSRF token, and that a change made
// there is the bot's behaviour at once (a chat message read with it) and in the audit log.
const guildId = DEFAULT_IDS.guild;
const bob = DEFAULT_IDS.bob; // Moderator: Manage Server
const alice = DEFAULT_IDS.alice; // no special permission

// This host runs shard 1 of 2 (the default guild's); another host, whose dashboard is PEER, runs shard 0.
const elsewhere = guildOnShard(0, 2);
const PEER = 'https://b.example.com';
// A role with no permission, which /dictionary editors can name.
const EDITORS = '1000000000000000601';
const guild = defaultGuild();
guild.roles.push({ id: EDITORS, name: 'Dictionary editors', permissions: '0', position: 3 });

let h: Harness;
let dashboard: DashboardServer;
/** What the dashboard logged at warn and above (error lines reach the operator's ERROR_WEBHOOK_URL). */
const logged: { level: number; msg: string }[] = [];
beforeAll(async () => {
  h = await startHarness({ discord: { guilds: [guild, elsewhere] }, bot: { clientOptions: { shards: [1], shardCount: 2 } } });
  // The local Discord's OAuth2: the bot's own application (no DISCORD_CLIENT_ID), its client secret.
  dashboard = await startHarnessDashboard(h, {
    view: clientView(h.bot.client, { shardCount: 2, shards: [1] }, [{ shards: [0], url: PEER }]),
    logger: createLogger({ level: 'warn', secrets: [], destination: { write: (line: string) => void logged.push(JSON.parse(line)) } }),
    sessions: { loginsPerWindow: 20 },
  });
}, 60_000);
afterAll(async () => {
  await dashboard?.close();
  await h?.close();
});

async function signedIn(userId: string): Promise<DashboardClient> {
  const client = new DashboardClient(dashboard.url);
  await client.signIn((url) => approveAtLocalDiscord(url, userId));
  return client;
}

describe('the web dashboard', () => {
  it('refuses every request without a valid session (401), and changes with a missing or forged CSRF token (403)', async () => {
    const anonymous = new DashboardClient(dashboard.url);
    for (const [method, path] of [
      ['GET', '/session'],
      ['GET', '/guilds'],
      ['GET', `/guilds/${guildId}`],
      ['PATCH', `/guilds/${guildId}/settings`],
      ['POST', `/guilds/${guildId}/dictionary`],
      ['GET', `/me/${guildId}`],
    ] as const) {
      const res = await anonymous.api(method, path, method === 'GET' ? undefined : { speed: 2 });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body.error).toBe('no_session');
    }
    anonymous.jar.set('ydash_session', 'forged-session-id');
    expect((await anonymous.api('GET', '/guilds')).status).toBe(401);

    const admin = await signedIn(bob);
    const before = h.bot.context.repos.guildSettings.get(guildId);
    const missing = await admin.api('PATCH', `/guilds/${guildId}/settings`, { speed: 2.5 }, { csrf: null });
    const forged = await admin.api('PATCH', `/guilds/${guildId}/settings`, { speed: 2.5 }, { csrf: 'x'.repeat(43) });
    const added = await admin.api('POST', `/guilds/${guildId}/dictionary`, { word: 'csrf', reading: 'しーさーふ' }, { csrf: null });
    expect([missing.status, forged.status, added.status]).toEqual([403, 403, 403]);
    expect(forged.body.error).toBe('csrf');
    expect(h.bot.context.repos.guildSettings.get(guildId)).toEqual(before);
    expect(h.bot.context.repos.dictionary.own(guildId)).toEqual([]);
    // The same browser's session works with its token. A server another host holds is named with that host's dashboard.
    expect((await admin.api('GET', '/guilds')).body).toEqual([
      expect.objectContaining({ id: guildId, manager: true }),
      { id: elsewhere.id, name: elsewhere.name, icon: null, manager: false, elsewhere: PEER },
    ]);
    expect((await admin.api('GET', `/guilds/${elsewhere.id}`)).status).toBe(404);
  });

  it("an admin's voice and three dictionary entries are how the next chat message is read, each change in the audit log", async () => {
    const admin = await signedIn(bob);
    const voice = 'en-US-Wavenet-C';
    const saved = await admin.api('PATCH', `/guilds/${guildId}/settings`, { voice, speed: 1.5 });
    expect(saved.status).toBe(200);
    expect(saved.body.settings).toMatchObject({ voice, speed: 1.5 });
    for (const [word, reading] of [
      ['ABC', 'えーびーしー'],
      ['XYZ', 'えっくすわいぜっと'],
      ['GPU', 'じーぴーゆー'],
    ])
      expect((await admin.api('POST', `/guilds/${guildId}/dictionary`, { word, reading })).status).toBe(201);
    // Bad input is refused with the command's own message, nothing saved.
    const bad = await admin.api('PATCH', `/guilds/${guildId}/settings`, { speed: 9 }, {});
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/0\.3.*4/);

    // Auto-read with MP3s posted in #general (the bot is in no voice channel); a category cannot be read.
    const category = await admin.api('POST', `/guilds/${guildId}/autoread`, { channelId: '1100000000000000100', postAudio: true });
    expect(category.status).toBe(400);
    const autoRead = await admin.api('POST', `/guilds/${guildId}/autoread`, { channelId: DEFAULT_IDS.general, postAudio: true });
    expect(autoRead.body).toEqual([{ channelId: DEFAULT_IDS.general, postAudio: true }]);
    const from = standardRequests(h.emulator).length;
    const author = { id: alice, username: 'alice' };
    await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author, content: 'ABC と XYZ と GPU' });
    await vi.waitFor(() => expect(standardRequests(h.emulator).length).toBeGreaterThan(from), { timeout: 20_000 });
    const request = standardRequests(h.emulator).slice(from)[0]!;
    expect(request).toMatchObject({ voice, speed: 1.5 });
    expect(request.text).toContain('えーびーしー と えっくすわいぜっと と じーぴーゆー');

    // The characters it cost, as /usage counts them: the server's by day, by member and by channel (#general's, by name).
    await vi.waitFor(async () => {
      const usage = (await admin.api('GET', `/guilds/${guildId}/usage`)).body;
      expect(usage.usage.used).toBeGreaterThan(0);
      expect(usage.days.reduce((sum: number, d: { chars: number }) => sum + d.chars, 0)).toBe(usage.usage.used);
      expect(usage.top).toEqual([expect.objectContaining({ userId: alice, name: 'Alice', used: usage.usage.used })]);
      expect(usage.channels).toEqual([{ channelId: DEFAULT_IDS.general, name: 'general', chars: usage.usage.used }]);
    });
    const audit = (await admin.api('GET', `/guilds/${guildId}/audit`)).body as {
      action: string;
      name: string;
      via: string;
      detail: object;
    }[];
    expect(audit.map((e) => [e.action, e.via, e.name])).toEqual([
      ['autoread.add', 'dashboard', 'Bob'],
      ['dictionary.add', 'dashboard', 'Bob'],
      ['dictionary.add', 'dashboard', 'Bob'],
      ['dictionary.add', 'dashboard', 'Bob'],
      ['settings', 'dashboard', 'Bob'],
    ]);
    expect(audit.at(-1)!.detail).toEqual({ voice, speed: 1.5 });
  });

  it('a pasted list is checked and summarised, then merged; the export is CSV; slash commands are in the audit log too', async () => {
    const admin = await signedIn(bob);
    const path = `/guilds/${guildId}/dictionary/import`;
    const bad = await admin.api('POST', path, { text: 'ok\tおーけー\n<@123>\tめんしょん\n' });
    expect(bad.status).toBe(400);
    expect(bad.body.problems.join('\n')).toMatch(/line 2.*mention/i);
    // The page shows a sentence before the problems, not the bare status code.
    expect(bad.body.message).toBe('Cannot import this file. Nothing in the dictionary was changed.');
    const pasted = 'ok\tおーけー\nABC\tえいびいしい\n';
    const summary = await admin.api('POST', path, { text: pasted });
    expect(summary.body.summary).toMatchObject({ count: 2, added: 1, changed: 1, removed: 2 });
    expect(h.bot.context.repos.dictionary.own(guildId)).toHaveLength(3);
    const merged = await admin.api('POST', path, { text: pasted, apply: 'merge' });
    expect(merged.body.total).toBe(4);
    const csv = await admin.request(`/api/guilds/${guildId}/dictionary/export?format=csv`);
    expect(csv.headers.get('content-disposition')).toContain('dictionary.csv');
    expect(csv.body).toContain('ABC,えいびいしい');

    // Reading controls by /reading's rule: an unknown bots mode or role, or a horizon out of range, is refused, nothing saved.
    const reading = `/guilds/${guildId}/reading`;
    expect((await admin.api('PATCH', reading, { bots: 'some', emoji: true })).status).toBe(400);
    expect((await admin.api('PATCH', reading, { requiredRoleId: '1234567890123456789' })).status).toBe(400);
    const tooLong = await admin.api('PATCH', reading, { emoji: true, freshSeconds: 601 });
    expect([tooLong.status, tooLong.body.message]).toEqual([400, expect.stringContaining('from 5 to 600')]);
    expect(h.bot.context.repos.reading.get(guildId)).toMatchObject({ emoji: false, freshSeconds: 20 });
    const fresh = { freshSeconds: 45, speedUp: false };
    const readingSaved = await admin.api('PATCH', reading, { emoji: true, requiredRoleId: DEFAULT_IDS.moderatorRole, ...fresh });
    expect(readingSaved.body.reading).toMatchObject({ emoji: true, requiredRoleId: DEFAULT_IDS.moderatorRole, ...fresh });
    expect(h.bot.context.repos.reading.get(guildId)).toMatchObject(fresh);
    await admin.api('PATCH', reading, { requiredRoleId: null, freshSeconds: 20, speedUp: true });

    // A role allowance within the operator's ceiling (3,000 here), by /spend's rule; a role that does not exist is refused.
    const roles = `/guilds/${guildId}/roles`;
    const over = await admin.api('PUT', roles, { roleId: DEFAULT_IDS.moderatorRole, chars: 5000 });
    const unknown = await admin.api('PUT', roles, { roleId: '1234567890123456789', chars: 2000 });
    // A number as every other number is taken: a string or a boolean is refused, not converted.
    const typed = await Promise.all(['1e3', true].map((chars) => admin.api('PUT', roles, { roleId: DEFAULT_IDS.moderatorRole, chars })));
    expect([over.status, unknown.status, ...typed.map((r) => r.status)]).toEqual([400, 400, 400, 400]);
    expect(over.body.message).toContain('3,000');
    expect((await admin.api('PUT', roles, { roleId: DEFAULT_IDS.moderatorRole, chars: 2000 })).body).toEqual([
      { roleId: DEFAULT_IDS.moderatorRole, monthlyLimit: 2000 },
    ]);

    const i = await h.discord.sendInteraction({
      channelId: DEFAULT_IDS.general,
      user: { id: bob, username: 'bob' },
      name: 'config',
      locale: 'en-US',
      options: [{ name: 'pitch', type: 1, options: [{ name: 'value', type: 10, value: 5 }] }] as never,
    });
    await i.waitForResponse((r) => r.kind === 'callback', 10_000);
    const audit = (await admin.api('GET', `/guilds/${guildId}/audit`)).body as { action: string; via: string; detail: object }[];
    expect(audit.slice(0, 5).map((e) => [e.action, e.via, e.detail])).toEqual([
      ['settings', 'command', { pitch: 5 }],
      ['roles.set', 'dashboard', { roleId: DEFAULT_IDS.moderatorRole, chars: 2000 }],
      ['reading', 'dashboard', { requiredRoleId: null, freshSeconds: 20, speedUp: true }],
      ['reading', 'dashboard', { emoji: true, requiredRoleId: DEFAULT_IDS.moderatorRole, ...fresh }],
      ['dictionary.import', 'dashboard', { mode: 'merge', count: 2, total: 4 }],
    ]);
    // Each says what changed in words, in the reader's language: the setting as its slash command names it.
    const said = async (lang: string) =>
      ((await admin.request(`/api/guilds/${guildId}/audit`, { headers: { 'x-lang': lang } })).body as { text: string }[])
        .slice(0, 5)
        .map((e) => e.text);
    expect(await said('ja')).toEqual([
      '/設定 高さ を 5 に変更',
      'ロールの上限：@Moderator を月 2,000 文字に',
      '/読み上げ対象 早口 を オン に変更、/読み上げ対象 必須ロール を なし に変更、/読み上げ対象 鮮度 を 20秒 に変更',
      '/読み上げ対象 絵文字 を オン に変更、/読み上げ対象 早口 を オフ に変更、/読み上げ対象 必須ロール を @Moderator に変更、/読み上げ対象 鮮度 を 45秒 に変更',
      '辞書：2 件を統合、合計 4 件',
    ]);
    expect((await said('en'))[0]).toBe('/config pitch changed to 5');

    // /config mute's rule: a member of the server, never the bot; audit-logged; undone the same way.
    const muted = `/guilds/${guildId}/muted`;
    expect((await admin.api('PUT', muted, { memberId: DEFAULT_IDS.bot, muted: true })).status).toBe(400);
    expect((await admin.api('PUT', muted, { memberId: '1234567890123456789', muted: true })).status).toBe(400);
    expect((await admin.api('PUT', muted, { memberId: '', muted: true })).body.message).toBe(
      'Choose the member to mute. Nothing was changed.',
    );
    expect((await admin.api('PUT', muted, { memberId: alice, muted: 'yes' })).status).toBe(400);
    expect((await admin.api('PUT', muted, { memberId: alice, muted: true })).body).toEqual([{ id: alice, name: 'Alice' }]);
    expect(h.bot.context.repos.userSettings.get(guildId, alice).muted).toBe(true);
    expect((await admin.api('PUT', muted, { memberId: alice, muted: false })).body).toEqual([]);
    expect(h.bot.context.repos.audit.recent(guildId, 2).map((e) => e.action)).toEqual(['unmute', 'mute']);
  });

  it("never-read roles and allowed bots by /reading's rule: added, refused past the limit, removed, audit-logged, and obeyed", async () => {
    const admin = await signedIn(bob);
    const never = `/guilds/${guildId}/reading/never-roles`;
    const bots = `/guilds/${guildId}/reading/bots`;
    // Bob's role is never read: his next message in auto-read #general is skipped, Alice's after it is read.
    expect((await admin.api('POST', never, { roleId: '1234567890123456789' })).status).toBe(400);
    expect((await admin.api('POST', never, { roleId: guildId })).status).toBe(400);
    const added = await admin.api('POST', never, { roleId: DEFAULT_IDS.moderatorRole });
    expect(added.body).toEqual({ neverRoles: [DEFAULT_IDS.moderatorRole], bots: [] });
    expect((await admin.api('GET', `/guilds/${guildId}`)).body.readingLists.neverRoles).toEqual([DEFAULT_IDS.moderatorRole]);
    const from = standardRequests(h.emulator).length;
    await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: { id: bob, username: 'bob' }, content: 'moderator words' });
    await h.discord.sendMessage({ channelId: DEFAULT_IDS.general, author: { id: alice, username: 'alice' }, content: 'member words' });
    await vi.waitFor(
      () =>
        expect(
          standardRequests(h.emulator)
            .slice(from)
            .map((r) => r.text)
            .join(),
        ).toContain('member words'),
      {
        timeout: 20_000,
      },
    );
    expect(
      standardRequests(h.emulator)
        .slice(from)
        .map((r) => r.text)
        .join(),
    ).not.toContain('moderator words');
    expect((await admin.api('DELETE', never, { roleId: DEFAULT_IDS.moderatorRole })).body.neverRoles).toEqual([]);

    // Allowed bots: a member is refused; the list holds READING_LIST_MAX (50), the next is refused with the command's message.
    expect((await admin.api('POST', bots, { botId: alice })).body.message).toMatch(/member, not a bot/);
    expect((await admin.api('POST', bots, { botId: 'not an id' })).status).toBe(400);
    const lists = h.bot.context.repos.readingLists;
    for (let i = 0; i < 49; i++) await lists.add(guildId, 'bot', `2000000000000000${String(i).padStart(3, '0')}`);
    const webhook = '3000000000000000001';
    expect((await admin.api('POST', bots, { botId: `<@${webhook}>` })).body.bots).toHaveLength(50);
    const full = await admin.api('POST', bots, { botId: '3000000000000000002' });
    expect(full.status).toBe(400);
    expect(full.body.message).toBe('At most 50 can be listed. Nothing was changed.');
    expect(lists.list(guildId, 'bot')).not.toContain('3000000000000000002');
    expect((await admin.api('DELETE', bots, { botId: webhook })).body.bots).not.toContain(webhook);
    expect((await admin.api('DELETE', bots, { botId: webhook })).status).toBe(400);
    for (const id of lists.list(guildId, 'bot')) await lists.remove(guildId, 'bot', id);

    const audit = (await admin.api('GET', `/guilds/${guildId}/audit`)).body as { action: string; via: string; detail: object }[];
    expect(audit.slice(0, 4).map((e) => [e.action, e.via, e.detail])).toEqual([
      ['reading.bot.remove', 'dashboard', { botId: webhook }],
      ['reading.bot.add', 'dashboard', { botId: webhook }],
      ['reading.never_role.remove', 'dashboard', { roleId: DEFAULT_IDS.moderatorRole }],
      ['reading.never_role.add', 'dashboard', { roleId: DEFAULT_IDS.moderatorRole }],
    ]);
  });

  it("a member who is not an admin cannot see or change the server's settings (403), but changes their own voice", async () => {
    const member = await signedIn(alice);
    expect((await member.api('GET', '/guilds')).body).toEqual([
      expect.objectContaining({ id: guildId, manager: false }),
      expect.objectContaining({ id: elsewhere.id, elsewhere: PEER }),
    ]);
    const view = await member.api('GET', `/guilds/${guildId}`);
    const change = await member.api('PATCH', `/guilds/${guildId}/settings`, { speed: 3 });
    const entry = await member.api('POST', `/guilds/${guildId}/dictionary`, { word: 'alice', reading: 'ありす' });
    const usage = await member.api('GET', `/guilds/${guildId}/usage`);
    expect([view.status, change.status, entry.status, usage.status]).toEqual([403, 403, 403, 403]);
    expect((await member.api('GET', `/me/${guildId}/usage`)).body.usage.used).toBeGreaterThan(0);
    expect(view.body).toEqual({ error: 'not_manager', message: expect.stringContaining('Manage Server') });
    expect(h.bot.context.repos.guildSettings.get(guildId).speed).toBe(1.5);
    // The dictionary's editors role (/dictionary editors, set by an admin here) lets a member edit it without Manage Server.
    const admin = await signedIn(bob);
    expect((await admin.api('PATCH', `/guilds/${guildId}/controls`, { dictionaryRoleId: '1234567890123456789' })).status).toBe(400);
    expect((await admin.api('PATCH', `/guilds/${guildId}/controls`, { narrateConfirmChars: 5000 })).status).toBe(400);
    const controls = await admin.api('PATCH', `/guilds/${guildId}/controls`, { dictionaryRoleId: EDITORS, narrateConfirmChars: 100 });
    expect(controls.body.controls).toMatchObject({ dictionaryRoleId: EDITORS, narrateConfirmChars: 100 });
    const refused = await member.api('POST', `/guilds/${guildId}/dictionary`, { word: 'alice', reading: 'ありす' });
    expect(refused.status).toBe(403);
    // Given the role: the gateway tells the bot (GUILD_MEMBER_UPDATE), and the next request counts it.
    await h.discord.setMemberRoles(guildId, alice, [EDITORS]);
    const hasEditors = () => h.bot.client.guilds.cache.get(guildId)!.members.cache.get(alice)?.roles.cache.has(EDITORS);
    await vi.waitUntil(() => hasEditors() === true);
    const asEditor = await member.api('POST', `/guilds/${guildId}/dictionary`, { word: 'alice', reading: 'ありす' });
    expect(asEditor.status).toBe(201);
    expect((await member.api('GET', `/me/${guildId}`)).body).toMatchObject({ manager: false, dictionaryEditor: true });
    expect((await member.api('GET', `/guilds/${guildId}`)).status).toBe(403);
    // Taken away: refused again as soon as the gateway says so, with no fetch of her member.
    const fetches = () => h.discord.requests.filter((r) => r.path === `/guilds/${guildId}/members/${alice}`).length;
    const fetched = fetches();
    await h.discord.setMemberRoles(guildId, alice, []);
    await vi.waitUntil(() => hasEditors() === false);
    expect((await member.api('POST', `/guilds/${guildId}/dictionary`, { word: 'alice2', reading: 'ありす' })).status).toBe(403);
    expect(fetches()).toBe(fetched);

    // A server the bot is not in, or an id that is none, is not theirs to know about.
    expect((await member.api('GET', '/me/123456789012345678')).status).toBe(404);

    // A voice preview: /voice preview's sample as MP3, made by the service, paid by the member who asked.
    const from = standardRequests(h.emulator).length;
    const spent = async (userId: string) => (await h.bot.context.budget.usage({ guildId, userId })).used;
    const [hers, server] = [await spent(alice), await spent(guildId)];
    const preview = await member.request(`/api/me/${guildId}/preview`, { method: 'POST', json: { voice: 'ja-JP-Wavenet-A' } });
    expect(preview.status).toBe(200);
    expect(preview.headers.get('content-type')).toBe('audio/mpeg');
    expect(standardRequests(h.emulator).slice(from)).toEqual([
      expect.objectContaining({ voice: 'ja-JP-Wavenet-A', text: 'こんにちは、この声で読み上げます。' }),
    ]);
    expect([(await spent(alice)) - hers, (await spent(guildId)) - server]).toEqual([17, 0]);
    expect((await member.request(`/api/me/${guildId}/preview`, { method: 'POST', json: {}, csrf: null })).status).toBe(403);

    const mine = await member.api('PATCH', `/me/${guildId}/voice`, { speed: 2 });
    expect(mine.status).toBe(200);
    expect(mine.body.voice).toMatchObject({ speed: 2, own: { speed: 2 } });
    expect(h.bot.context.repos.userSettings.get(guildId, alice).speed).toBe(2);
  });

  it("how many text channels one call reads: /config text-channels' rule, its refusal in the admin's language, and the audit log", async () => {
    const admin = await signedIn(bob);
    const path = `/api/guilds/${guildId}/settings`;
    const ja = await admin.request(path, { method: 'PATCH', json: { textChannelsPerCall: 11 }, headers: { 'x-lang': 'ja' } });
    expect([ja.status, ja.body.message]).toEqual([400, 'text-channels は 1〜10 の範囲で指定してください。何も変更していません。']);
    const en = await admin.api('PATCH', `/guilds/${guildId}/settings`, { textChannelsPerCall: 0 });
    expect([en.status, en.body.message]).toEqual([400, 'text-channels must be from 1 to 10. Nothing was changed.']);
    expect(h.bot.context.repos.guildSettings.get(guildId).textChannelsPerCall).toBe(3);
    const saved = await admin.api('PATCH', `/guilds/${guildId}/settings`, { textChannelsPerCall: 5 });
    expect(saved.body.settings.textChannelsPerCall).toBe(5);
    expect(h.bot.context.repos.guildSettings.get(guildId).textChannelsPerCall).toBe(5);
    const audit = (await admin.api('GET', `/guilds/${guildId}/audit`)).body as { action: string; detail: object }[];
    expect(audit[0]).toMatchObject({ action: 'settings', detail: { textChannelsPerCall: 5 } });
    const said = (await admin.request(`/api/guilds/${guildId}/audit`, { headers: { 'x-lang': 'ja' } })).body as { text: string }[];
    expect(said[0]!.text).toBe('/設定 読み上げチャンネル数 を 5 に変更');
    await admin.api('PATCH', `/guilds/${guildId}/settings`, { textChannelsPerCall: 3 });
  });

  it("how much faster a long message may be read: /config fast-reading's rule, its refusal in the admin's language, and the audit log", async () => {
    const admin = await signedIn(bob);
    const path = `/api/guilds/${guildId}/settings`;
    const ja = await admin.request(path, { method: 'PATCH', json: { fastReadingCeiling: 4.5 }, headers: { 'x-lang': 'ja' } });
    expect([ja.status, ja.body.message]).toEqual([400, 'fast-reading は 1〜4 の範囲で指定してください。何も変更していません。']);
    const en = await admin.api('PATCH', `/guilds/${guildId}/settings`, { fastReadingCeiling: 0.5 });
    expect([en.status, en.body.message]).toEqual([400, 'fast-reading must be from 1 to 4. Nothing was changed.']);
    expect((await admin.api('PATCH', `/guilds/${guildId}/settings`, { fastReadingCeiling: 'fast' })).status).toBe(400);
    expect(h.bot.context.repos.guildSettings.get(guildId).fastReadingCeiling).toBe(2);
    const saved = await admin.api('PATCH', `/guilds/${guildId}/settings`, { fastReadingCeiling: 2.5 });
    expect(saved.body.settings.fastReadingCeiling).toBe(2.5);
    expect(h.bot.context.repos.guildSettings.get(guildId).fastReadingCeiling).toBe(2.5);
    const said = (await admin.request(`/api/guilds/${guildId}/audit`, { headers: { 'x-lang': 'ja' } })).body as { text: string }[];
    expect(said[0]!.text).toBe('/設定 早口上限 を 2.5 に変更');
    await admin.api('PATCH', `/guilds/${guildId}/settings`, { fastReadingCeiling: 2 });
  });

  it('a browser that goes away in the middle of a change (tab closed, network lost) changes nothing and alarms nobody', async () => {
    const admin = await signedIn(bob);
    const before = h.bot.context.repos.guildSettings.get(guildId);
    const from = logged.length;
    const { port } = new URL(dashboard.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const cookies = [...admin.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    socket.write(
      `PATCH /api/guilds/${guildId}/settings HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${cookies}\r\n` +
        `X-CSRF-Token: ${admin.csrf}\r\nOrigin: ${dashboard.url}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"speed": 2.5, "pi`,
    );
    // The dashboard is reading the body when the browser disappears.
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));

    expect(logged.slice(from)).toEqual([]);
    expect(h.bot.context.repos.guildSettings.get(guildId)).toEqual(before);
    expect((await admin.api('GET', `/guilds/${guildId}`)).status).toBe(200);
  });

  it('sign-out revokes the token and ends the session; a sign-in state is good once; sign-ins are rate limited', async () => {
    const member = await signedIn(alice);
    const cookie = member.jar.get('ydash_session')!;
    const revokes = () => h.discord.requests.filter((r) => r.method === 'POST' && r.path === '/oauth2/token/revoke' && r.status === 200);
    const before = revokes().length;
    const out = await member.request('/auth/logout', { method: 'POST', json: {} });
    expect(out.status).toBe(204);
    expect(revokes()).toHaveLength(before + 1);
    expect(member.jar.has('ydash_session')).toBe(false);
    member.jar.set('ydash_session', cookie);
    expect((await member.api('GET', '/guilds')).status).toBe(401);

    // The callback of a sign-in replayed, or from a browser that did not start it, signs nobody in.
    const browser = new DashboardClient(dashboard.url);
    const login = await browser.request('/auth/login');
    const back = await approveAtLocalDiscord(login.headers.get('location')!, bob);
    const other = new DashboardClient(dashboard.url);
    expect((await other.request(back)).headers.get('location')).toBe('/?signin=expired');
    expect((await browser.request(back)).headers.get('location')).toBe('/?signin=expired');
    expect(browser.jar.has('ydash_session')).toBe(false);

    // A code Discord does not know (forged, or used elsewhere) signs nobody in either.
    const forged = new DashboardClient(dashboard.url);
    const started = await forged.request('/auth/login');
    const backWith = new URL(await approveAtLocalDiscord(started.headers.get('location')!, bob));
    backWith.searchParams.set('code', 'not-a-code');
    expect((await forged.request(backWith.href)).headers.get('location')).toBe('/?signin=failed');
    expect(forged.jar.has('ydash_session')).toBe(false);

    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await browser.request('/auth/login')).status);
    expect(statuses).toContain(429);
  });
});
