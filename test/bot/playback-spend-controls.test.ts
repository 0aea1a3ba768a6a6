import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultGuild } from '@yomiage/local-discord/fixtures';
import { DEFAULT_IDS } from '@yomiage/local-discord';
import type { InteractionResponse } from '@yomiage/local-discord/types';
import { startFakeVoiceServer, trustCertificate, type FakeVoiceServer } from '@yomiage/local-discord';
import { SHORT_TONES, startHarness, type Harness } from '../support/bot-harness.ts';

// Playback and spend controls, end to end against the loopback Discord and the emulator: who may skip and clear,
// a long /narrate shown before it is spent, role allowances.
const guildId = DEFAULT_IDS.guild;
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' }; // Moderator: Manage Server, Move Members
const carol = { id: '1000000000000000077', username: 'carol' };
const BOOSTER = '1000000000000000501';
const PATRON = '1000000000000000502';
const EPHEMERAL = 64;
const LONG = 'これは確認が必要な長いナレーションの文章です。'.repeat(10); // 230 characters

let voice: FakeVoiceServer;
let h: Harness;
beforeAll(async () => {
  voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
  const guild = defaultGuild();
  guild.roles.push(
    { id: BOOSTER, name: 'Booster', permissions: '0', position: 3 },
    { id: PATRON, name: 'Patron', permissions: '0', position: 4 },
  );
  guild.members.push({ user: { id: carol.id, username: 'carol', globalName: 'Carol' }, roles: [], joinedAt: '2024-01-01T00:00:00.000Z' });
  h = await startHarness({
    discord: { voiceEndpoint: () => voice.endpoint, guilds: [guild] },
    env: { USER_MONTHLY_CHARS: '300' },
    emulator: { ...SHORT_TONES, jobs: { pendingMs: 100, runningMs: 150, minPollAfterMs: 100, pollAfterMs: 100 } },
    bot: { buttonTimeoutMs: 2_500 },
  });
}, 60_000);
afterAll(async () => {
  await h?.close();
  await voice?.close();
});

type User = { id: string; username: string };
async function command(user: User, name: string, options: unknown[] = [], extra: { locale?: string; roles?: string[] } = {}) {
  const i = await h.discord.sendInteraction({
    channelId: DEFAULT_IDS.general,
    user,
    name,
    locale: extra.locale ?? 'en-US',
    options: options as never,
    ...(extra.roles ? { member: { roles: extra.roles } } : {}),
  });
  const first = await i.waitForResponse((r) => r.kind === 'callback', 10_000);
  return { i, first, text: String(first.data?.content ?? '') };
}
const buttonsOf = (r: InteractionResponse) =>
  ((r.data?.components as Array<{ components: Array<{ custom_id: string; label: string }> }> | undefined) ?? []).flatMap(
    (row) => row.components,
  );
async function click(r: InteractionResponse, label: string, user: User, locale = 'en-US') {
  const button = buttonsOf(r).find((b) => b.label === label);
  if (!button) throw new Error(`no button ${label}`);
  const i = await h.discord.sendInteraction({
    type: 3,
    channelId: DEFAULT_IDS.general,
    user,
    name: '',
    locale,
    component: { messageId: r.messageId!, customId: button.custom_id },
  });
  return { i, first: await i.waitForResponse((x) => x.kind === 'callback', 10_000) };
}
// Job creations carrying the long text (earlier tests' short ones may still be arriving).
const advancedRequests = () =>
  h.emulator.requests().filter((r) => r.target === 'advanced' && (r.body as { text?: string } | undefined)?.text === LONG).length;
const used = async (userId?: string) => (await h.bot.context.budget.usage(userId ? { guildId, userId } : { guildId })).used;

describe('/skip and /clear: only members in the bot voice channel, or with Move Members', () => {
  it('refuses a member outside the call (ja and en), allows one inside it and a moderator outside', async () => {
    await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
    const join = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'join', locale: 'en-US' });
    await join.waitForResponse((r) => r.kind === 'editOriginal', 20_000);
    for (const name of ['skip', 'clear']) {
      const en = await command(carol, name);
      expect(en.first.data?.flags).toBe(EPHEMERAL);
      expect(en.text).toContain('Move Members');
      const ja = await command(carol, name, [], { locale: 'ja' });
      expect(ja.text).toContain('メンバーを移動');
    }
    expect((await command(alice, 'skip')).text).toBe('Nothing is being read right now.');
    expect((await command(alice, 'clear')).text).toMatch(/^Cleared 0/);
    expect((await command(bob, 'clear')).text).toMatch(/^Cleared 0/);
    await h.discord.setVoiceState(alice.id, guildId, null);
    // Alice left the call: she is refused like anyone outside it.
    expect((await command(alice, 'clear')).text).toContain('Move Members');
  }, 60_000);
});

describe('/narrate over the threshold shows the cost first', () => {
  it('shows cost and what is left with Confirm/Cancel; Cancel sends and holds nothing', async () => {
    const before = advancedRequests();
    const { first } = await command(alice, 'narrate', [{ name: 'text', type: 3, value: LONG }]);
    expect(first.data?.flags).toBe(EPHEMERAL);
    expect(String(first.data?.content)).toContain('230 characters');
    expect(String(first.data?.content)).toContain('You have left: 300 / 300');
    expect(buttonsOf(first).map((b) => b.label)).toEqual(['Confirm', 'Cancel']);
    expect(await used(alice.id)).toBe(0);
    // Somebody else's click is refused and the question stays open.
    const other = await click(first, 'Confirm', bob);
    expect(String(other.first.data?.content)).toContain('Only the member who ran the command');
    const cancel = await click(first, 'Cancel', alice);
    expect(cancel.first.type).toBe(7);
    expect(String(cancel.first.data?.content)).toContain('Cancelled. Nothing was sent');
    expect(cancel.first.message?.components).toEqual([]);
    expect(advancedRequests()).toBe(before);
    expect(await used(alice.id)).toBe(0);
    // A second click on the answered question changes nothing.
    const again = await h.discord
      .sendInteraction({
        type: 3,
        channelId: DEFAULT_IDS.general,
        user: alice,
        name: '',
        component: { messageId: first.messageId!, customId: buttonsOf(first)[0]!.custom_id },
      })
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(Error); // the buttons are gone from the message
  }, 30_000);

  it('Confirm creates the job and delivers the audio; below the threshold no question is asked', async () => {
    const before = advancedRequests();
    const { first, i } = await command(alice, 'narrate', [{ name: 'text', type: 3, value: LONG }], { locale: 'ja' });
    expect(String(first.data?.content)).toContain('230 文字');
    const confirm = await click(first, '確定', alice, 'ja');
    expect(confirm.first.type).toBe(5);
    const audio = await confirm.i.waitForResponse((r) => r.files.length > 0, 30_000);
    expect(audio.files[0]!.name).toMatch(/\.mp3$/);
    expect(advancedRequests()).toBe(before + 1);
    expect(await used(alice.id)).toBe(230);
    expect(String(i.original()?.content)).toContain('確定しました');
    // Short: straight on, as before.
    const short = await command(bob, 'narrate', [{ name: 'text', type: 3, value: '短いナレーションです。' }]);
    expect(short.first.type).toBe(5);
  }, 60_000);

  it('Confirm checks the budget again: spent meanwhile, it is refused and nothing is sent', async () => {
    const { first } = await command(bob, 'narrate', [{ name: 'text', type: 3, value: LONG }]);
    expect(String(first.data?.content)).toContain('230 characters');
    // Bob spends elsewhere while the question is open.
    const spent = await h.bot.context.budget.reserve([{ guildId, userId: bob.id, endpoint: 'standard', chars: 100 }]);
    expect(spent.ok).toBe(true);
    const before = advancedRequests();
    const confirm = await click(first, 'Confirm', bob);
    expect(String(confirm.first.data?.content)).toMatch(/Not sent \(nothing was used\).*monthly limit/);
    expect(advancedRequests()).toBe(before);
    if (spent.ok) await h.bot.context.budget.release(spent.reservation);
  }, 30_000);

  it('no click in time: the question says it expired and nothing was sent', async () => {
    const before = advancedRequests();
    const { i } = await command(bob, 'narrate', [{ name: 'text', type: 3, value: LONG }]);
    const expired = await i.waitForResponse((r) => r.kind === 'editOriginal', 10_000);
    expect(String(expired.data?.content)).toContain('expired. Nothing was sent');
    expect(expired.data?.components).toEqual([]);
    expect(advancedRequests()).toBe(before);
  }, 30_000);

  it('admins change the threshold; members cannot', async () => {
    expect(
      (await command(alice, 'spend', [{ name: 'narrate-confirm', type: 1, options: [{ name: 'chars', type: 4, value: 500 }] }])).text,
    ).toContain('Manage Server');
    expect(h.bot.context.repos.controls.get(guildId).narrateConfirmChars).toBe(200);
    const set = await command(bob, 'spend', [{ name: 'narrate-confirm', type: 1, options: [{ name: 'chars', type: 4, value: 500 }] }]);
    expect(set.text).toBe('/narrate longer than 500 characters now shows its cost and asks to confirm first.');
    const { first } = await command(bob, 'narrate', [{ name: 'text', type: 3, value: LONG }]);
    expect(first.type).toBe(5); // 230 <= 500: no question
    await command(bob, 'spend', [{ name: 'narrate-confirm', type: 1, options: [{ name: 'chars', type: 4, value: 200 }] }]);
  }, 30_000);
});

describe('role allowances', () => {
  const setRole = (role: string, chars: number) =>
    command(bob, 'spend', [
      {
        name: 'role-limit',
        type: 1,
        options: [
          { name: 'role', type: 8, value: role },
          { name: 'chars', type: 4, value: chars },
        ],
      },
    ]);
  it('a member with roles gets the largest allowance, in /usage and in what the budget lets through', async () => {
    expect((await setRole(BOOSTER, 1_000)).text).toContain('1000');
    expect((await setRole(PATRON, 2_000)).text).toContain('2000');
    const usage = await command(carol, 'usage', [], { roles: [BOOSTER, PATRON] });
    expect(usage.text).toMatch(/\/ 2000 characters/);
    const boosterOnly = await command(carol, 'usage', [], { roles: [BOOSTER] });
    expect(boosterOnly.text).toMatch(/\/ 1000 characters/);
    // 230 + 230 > 300 (the member limit) but within the booster's 1000: the budget agrees.
    expect((await h.bot.context.budget.check([{ guildId, userId: carol.id, endpoint: 'advanced', chars: 460 }])).ok).toBe(true);
    const none = await command(carol, 'usage', [], { roles: [] });
    expect(none.text).toMatch(/\/ 300 characters/);
    expect((await h.bot.context.budget.check([{ guildId, userId: carol.id, endpoint: 'advanced', chars: 460 }])).ok).toBe(false);
    const list = await command(bob, 'spend', [{ name: 'roles', type: 1 }], { locale: 'ja' });
    expect(list.text).toContain(`<@&${PATRON}> 2000\n<@&${BOOSTER}> 1000`);
  }, 30_000);

  it('a role that no longer exists is refused (ja, en) and nothing is saved; non-admins are refused', async () => {
    const gone = '1000000000000000999';
    const en = await setRole(gone, 5_000);
    expect(en.text).toContain(`The role (id ${gone}) no longer exists`);
    const ja = await command(
      bob,
      'spend',
      [
        {
          name: 'role-limit',
          type: 1,
          options: [
            { name: 'role', type: 8, value: gone },
            { name: 'chars', type: 4, value: 5_000 },
          ],
        },
      ],
      { locale: 'ja' },
    );
    expect(ja.text).toContain('もう存在しません');
    expect(h.bot.context.repos.roleAllowances.list(guildId).map((a) => a.roleId)).not.toContain(gone);
    const member = await command(alice, 'spend', [
      {
        name: 'role-limit',
        type: 1,
        options: [
          { name: 'role', type: 8, value: BOOSTER },
          { name: 'chars', type: 4, value: 9_999 },
        ],
      },
    ]);
    expect(member.text).toContain('Manage Server');
    expect(h.bot.context.repos.roleAllowances.list(guildId).find((a) => a.roleId === BOOSTER)?.monthlyLimit).toBe(1_000);
    const removed = await command(bob, 'spend', [{ name: 'role-remove', type: 1, options: [{ name: 'role', type: 8, value: PATRON }] }]);
    expect(removed.text).toContain('Removed');
    expect((await command(carol, 'usage', [], { roles: [BOOSTER, PATRON] })).text).toMatch(/\/ 1000 characters/);
  }, 30_000);
});

describe('a question open across a restart', () => {
  it('a click after the restart is told the question expired, and nothing is sent', async () => {
    const before = advancedRequests();
    // Carol (a booster: room for 230 more characters) asks; the bot restarts before she clicks.
    const { first } = await command(carol, 'narrate', [{ name: 'text', type: 3, value: LONG }], { roles: [BOOSTER] });
    await h.restart();
    const late = await click(first, 'Confirm', carol);
    expect(late.first.data?.flags).toBe(EPHEMERAL);
    expect(String(late.first.data?.content)).toContain('This question has expired (or was lost in a restart). Nothing was done');
    expect(advancedRequests()).toBe(before);
  }, 60_000);
});
