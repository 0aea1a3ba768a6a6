import { describe, expect, it } from 'vitest';
import { describeFate, type FateWording } from '../../commands/diagnose/fate-text.ts';
import { diagnosisText } from '../../commands/diagnose/diagnose-text.ts';
import type { DiagnosisReport, SessionView } from '../../src/discord/diagnosis/diagnosis.ts';
import type { Fate, FateRecord } from '../../src/discord/diagnosis/fates.ts';
import type { Lang } from '../../src/i18n/texts.ts';

// What "Why wasn't this read?" and /diagnose say, cause by cause, in Japanese and English: each
// cause in words a member understands, with what it breaks and the command names their client shows.
const NAMES: Record<Lang, Record<string, string>> = {
  ja: {
    join: '/参加',
    autoread: '/自動読み上げ',
    clear: '/クリア',
    leave: '/退出',
    skip: '/スキップ',
    narrate: '/高度な読み上げ',
    reading_bots: '/読み上げ設定 ボット',
    config_mute: '/設定 ミュート',
  },
  en: {
    join: '/join',
    autoread: '/autoread',
    clear: '/clear',
    leave: '/leave',
    skip: '/skip',
    narrate: '/narrate',
    reading_bots: '/reading bots',
    config_mute: '/config mute',
  },
};
const wording = (lang: Lang, own = true, canView = (_: string) => true): FateWording => ({ lang, names: NAMES[lang], canView, own });
const AT = Date.UTC(2026, 10, 20, 3, 4, 5);
const secs = (ms: number) => Math.floor(ms / 1000);
const base: FateRecord = { guildId: 'g', messageId: 'm1', channelId: 'c1', userId: 'u1', arrivedAt: AT - 5_000, fate: 'read', at: AT };

/** Each fate, the record's details, and what each language must say. */
const CAUSES: Array<[Fate, Partial<FateRecord>, string, string]> = [
  ['read', { voiceChannelId: 'v1' }, `read in <#v1> <t:${secs(AT)}:T>`, `<t:${secs(AT)}:T> に <#v1> で読み上げました`],
  ['attached', {}, 'posted as an MP3', 'MP3 で投稿しました'],
  ['queued', { voiceChannelId: 'v1' }, 'waiting to be read in <#v1>', '<#v1> で読み上げ待ち'],
  ['queued', {}, 'waiting to be posted as an MP3', 'MP3 で投稿する順番待ち'],
  [
    'too_old',
    { told: true },
    'too old by its turn',
    '順番が来たときには古くなっていたため省略し、省略した件数をボイスチャンネルでお知らせしました',
  ],
  ['too_old', { told: false }, 'spoken notice of skipped messages is off', 'お知らせはオフ'],
  ['deleted', {}, 'deleted before its turn', '削除されました'],
  ['bulk_deleted', {}, 'deleted before its turn', '削除されました'],
  ['channel_deleted', {}, 'its channel was deleted', 'チャンネルが削除されました'],
  ['banned', {}, 'its author was banned', 'BAN されました'],
  ['edited', {}, 'read as edited', '編集後の内容で読み上げます'],
  ['edited_unread', {}, 'as edited it is not read', '編集後の内容は読み上げの対象外'],
  ['cleared', { reason: 'clear' }, 'cleared with /clear', '/クリア で読み上げ待ちが削除されました'],
  ['cleared', { reason: 'leave' }, 'the bot left with /leave', '/退出 でボットが退出しました'],
  ['cleared', { reason: 'auto_leave' }, 'nobody was left in the voice channel', '誰もいなくなり'],
  ['cleared', { reason: 'disconnected' }, 'disconnected from the voice channel', '切断されました'],
  ['cleared', { reason: 'stage_audience' }, "stage's audience", 'ステージの聴衆'],
  ['cleared', { reason: 'restart' }, 'after a restart the bot could no longer read it', '再起動のあと'],
  ['skipped', {}, 'skipped with /skip', '/スキップ で飛ばされました'],
  ['budget', { scope: 'user', limit: 5000 }, 'reached their character limit (5000 this period)', '文字数の上限（今期 5000 文字）'],
  [
    'budget',
    { scope: 'guild', limit: 90000 },
    'the server had reached its character limit (90000',
    'サーバーが文字数の上限（今期 90000 文字）',
  ],
  ['budget', { scope: 'account' }, "the bot's account had run out of characters", 'アカウント全体で今期の文字数を使い切って'],
  ['failed', { reason: 'internal_error' }, 'could not be made or played (internal_error)', '再生できませんでした（internal_error）'],
  ['queue_full', { limit: 500 }, 'already had 500 characters waiting', '500 文字に達していました'],
  ['not_saved', {}, 'could not save it', '保存できませんでした'],
  ['closed', {}, 'shutting down', '停止するところ'],
  [
    'bot',
    {},
    'bots and webhooks are not read here (/reading bots)',
    'ボットと Webhook の発言を読み上げない設定です（/読み上げ設定 ボット）',
  ],
  ['muted', {}, 'muted for reading (/config mute)', 'ミュートされています（/設定 ミュート）'],
  ['never_role', {}, 'a role that is never read', '読み上げないロール'],
  ['required_role', {}, 'lacks the role required', '読み上げに必要なロールがありません'],
  ['not_in_voice', {}, "only members in the bot's voice channel", 'ボットと同じボイスチャンネルにいるメンバーの発言だけ'],
  ['deafened', { voiceChannelId: 'v1' }, 'everyone in <#v1> had deafened themselves', '<#v1> の全員がスピーカーをミュート'],
  ['hidden', { voiceChannelId: 'v1' }, 'someone in <#v1> cannot view this channel', '<#v1> にこのチャンネルを見られない人'],
  ['ignored_prefix', {}, 'do-not-read prefix', '読み上げない記号で始まっています'],
  ['nothing_to_read', {}, 'nothing in it could be read aloud', '読み上げられる内容がありませんでした'],
  ['no_content', {}, 'reached the bot with no text', '本文なしでボットに届きました'],
];

describe('a message fate in words', () => {
  it.each(CAUSES)('%s %o: en and ja', (fate, detail, en, ja) => {
    const record = { ...base, fate, ...detail };
    const said = { en: describeFate(record, wording('en')), ja: describeFate(record, wording('ja')) };
    expect(said.en).toContain(en);
    expect(said.ja).toContain(ja);
    for (const text of Object.values(said)) expect(text).not.toMatch(/\{\w+\}/);
  });

  it('GIVEN every fate THEN each says something of its own, in both languages', () => {
    const fates = [...new Set(CAUSES.map(([f]) => f))];
    for (const lang of ['en', 'ja'] as const) {
      const texts = fates.map((fate) => describeFate({ ...base, fate, ...CAUSES.find(([f]) => f === fate)![1] }, wording(lang)));
      const distinct = new Set(texts.map((t) => t.replace(/<[^>]+>/g, '')));
      // deleted and bulk_deleted say the same: the member sees one deletion.
      expect(distinct.size).toBe(fates.length - 1);
    }
  });

  it("GIVEN someone else's message over its author's limit THEN not their numbers", () => {
    const record = { ...base, fate: 'budget' as const, scope: 'user' as const, limit: 5000 };
    expect(describeFate(record, wording('en', false))).toBe('not read: its author had reached their character limit');
    expect(describeFate(record, wording('ja', false))).not.toContain('5000');
  });

  it('GIVEN a message read with others THEN those the member may view are linked, the rest only counted', () => {
    const record: FateRecord = {
      ...base,
      voiceChannelId: 'v1',
      mergedWith: [
        { channelId: 'c1', messageId: 'm2' },
        { channelId: 'secret', messageId: 'm3' },
      ],
    };
    const en = describeFate(
      record,
      wording('en', true, (c) => c !== 'secret'),
    );
    expect(en).toContain('(in one request with 2 more: https://discord.com/channels/g/c1/m2)');
    expect(en).not.toContain('secret');
    expect(
      describeFate(
        record,
        wording('ja', true, () => false),
      ),
    ).toContain('（ほか 2 件とまとめて読み上げ）');
  });
});

const session = (over: Partial<SessionView> = {}): SessionView => ({
  channelId: 'v1',
  accountId: 'bot1',
  main: true,
  textChannels: { shown: ['c1'], hidden: 0 },
  suppressed: false,
  connection: { status: 'ready', privacyCode: '123456789012345678901234567890' },
  backlog: { waiting: 0, oldestAt: null },
  health: { guildId: 'g', channelId: 'v1', messages: 0, heardWithin: 0, ratio: null, p95WaitMs: null },
  ...over,
});
const report = (over: Partial<DiagnosisReport> = {}): DiagnosisReport => ({
  at: AT,
  channelId: 'c1',
  reading: { read: 'voice', voiceChannelId: 'v1' },
  textMissing: [],
  voice: { channelId: 'v1', stage: false, missing: [] },
  content: { state: 'arriving', lastAt: AT - 60_000 },
  session: session(),
  member: {
    chars: { scope: 'user', used: 120, reserved: 0, charged: 120, uncertain: 0, limit: 5000, resetsAt: Date.UTC(2026, 11, 1) } as never,
    recent: [],
  },
  ...over,
});
const text = (lang: Lang, r: DiagnosisReport) => diagnosisText(r, 'g', wording(lang));

describe('/diagnose in words', () => {
  it('GIVEN all is well THEN each check says so, in en and ja', () => {
    const en = text('en', report());
    expect(en).toContain('✅ This channel is read in <#v1>.');
    expect(en).toContain('✅ The bot has every permission it needs in <#c1>.');
    expect(en).toContain('✅ The bot has every permission it needs in <#v1>.');
    expect(en).toContain('✅ Message content arrives');
    expect(en).toContain('🔊 <#v1> (read by <@bot1>): connected, end-to-end encrypted (DAVE)');
    expect(en).toContain('Your characters this period: 4880 of 5000 left');
    expect(en).not.toContain('❌');
    const ja = text('ja', report());
    expect(ja).toContain('✅ このチャンネルは <#v1> で読み上げています。');
    expect(ja).toContain('接続中・エンドツーエンド暗号化（DAVE）済み');
    expect(ja).toContain('あなたの今期の残り文字数: 5000 文字中 4880 文字');
  });

  it('GIVEN the bot lacks Speak in the voice channel THEN it says nobody hears it (en, ja); in a stage, the speaker permissions', () => {
    const lacking = report({ voice: { channelId: 'quiet', stage: false, missing: ['Speak'] } });
    expect(text('en', lacking)).toContain('❌ The bot lacks in <#quiet>:\n・Speak: it can join, but nobody hears it');
    expect(text('ja', lacking)).toContain('❌ <#quiet> でボットに足りない権限:\n・発言: 参加はできても、声が誰にも届きません');
    const stage = report({ voice: { channelId: 'st', stage: true, missing: ['Speak'] } });
    expect(text('en', stage)).toContain('Request to Speak (or Mute Members)');
    expect(text('ja', stage)).toContain('スピーカー参加をリクエスト');
  });

  it('GIVEN the bot lacks View, Send, Attach and Read History here THEN what each breaks, and Connect in voice', () => {
    const r = report({
      textMissing: ['ViewChannel', 'SendMessages', 'AttachFiles', 'ReadMessageHistory'],
      voice: { channelId: 'v1', stage: false, missing: ['ViewChannel', 'Connect'] },
    });
    const en = text('en', r);
    for (const said of [
      'View Channel: it never receives the messages here',
      'Send Messages: it cannot tell anyone',
      'Attach Files: speech cannot be posted',
      'Read Message History: it cannot reply',
      'Connect: it cannot join',
    ])
      expect(en).toContain(said);
    const ja = text('ja', r);
    for (const said of [
      'チャンネルを見る: ここの発言がボットに届かない',
      'メッセージを送信:',
      'ファイルを添付:',
      'メッセージ履歴を読む:',
      '接続: ボイスチャンネルに参加できません',
    ])
      expect(ja).toContain(said);
  });

  it('GIVEN messages arriving blank THEN message content is missing, with what to switch on (en, ja); none seen yet THEN unknown', () => {
    const missing = report({ content: { state: 'missing', since: AT - 1_000, blanked: 3 } });
    expect(text('en', missing)).toContain(
      `❌ Message content does not arrive: 3 messages since <t:${secs(AT - 1_000)}:R> reached the bot with no text`,
    );
    expect(text('en', missing)).toContain('**Message Content**');
    expect(text('ja', missing)).toContain(
      `❌ メッセージの内容が届いていません。<t:${secs(AT - 1_000)}:R> から 3 件の発言が本文なしで届いた`,
    );
    expect(text('en', report({ content: { state: 'unknown' } }))).toContain('not known yet');
    expect(text('ja', report({ content: { state: 'unknown' } }))).toContain('まだわかりません');
  });

  it('GIVEN a channel not read and no voice THEN how to start reading; a call not yet encrypted, a backlog and its health', () => {
    const idle = report({ reading: { read: 'no' }, voice: null, session: null });
    expect(text('en', idle)).toContain('❌ This channel is not read: use /join here');
    expect(text('ja', idle)).toContain('ここで /参加 を使うか、管理者に /自動読み上げ で追加');
    expect(text('en', idle)).toContain('You are in no voice channel');
    const busy = report({
      session: session({
        connection: { status: 'reconnecting', privacyCode: null },
        backlog: { waiting: 4, oldestAt: AT - 12_000 },
        health: { guildId: 'g', channelId: 'v1', messages: 10, heardWithin: 7, ratio: 0.7, p95WaitMs: 31_000 },
        recoveries: { worker_crash: 1, rejoined: 2, resumed: 0 },
      }),
    });
    const en = text('en', busy);
    expect(en).toContain('reconnecting, not end-to-end encrypted yet');
    expect(en).toContain('Waiting: 4, the oldest for 12 s');
    expect(en).toContain('Last 5 minutes: 7 of 10 heard within 20 s; 95% within 31.0 s');
    // Each cause in words, in the member's language; a cause that did not happen is not listed.
    expect(en).toContain('Recovered by itself: the voice thread stopped ×1, rejoined ×2');
    expect(en).not.toContain('resumed');
    const ja = text('ja', busy);
    expect(ja).toContain('再接続しています・まだエンドツーエンド暗号化されていません');
    expect(ja).toContain('読み上げ待ち: 4 件（最も長いもので 12 秒）');
    expect(ja).toContain('直近5分: 10 件中 7 件を20秒以内に読み上げ（95% が 31.0 秒以内）');
    expect(ja).toContain('音声処理の停止 ×1、再参加 ×2');
  });

  it('GIVEN an admin THEN every session, the shared request window and the server characters; a member is told admins see more', () => {
    const admin = report({
      server: {
        sessions: [session(), session({ channelId: 'v2', accountId: 'bot2', main: false, connection: undefined })],
        rate: { standard: { used: 28, limit: 30, nextFreeAt: AT + 20_000 }, advanced: { used: 0, limit: 10, nextFreeAt: AT } },
        chars: {
          scope: 'guild',
          used: 1000,
          reserved: 0,
          charged: 1000,
          uncertain: 0,
          limit: 100000,
          resetsAt: Date.UTC(2026, 11, 1),
        } as never,
      },
    });
    const en = text('en', admin);
    expect(en).toContain('**The server** (Manage Server)');
    expect(en).toContain('🔊 <#v2> (read by <@bot2>): no longer connected');
    expect(en).toContain(`2 of 30 left, the next free <t:${secs(AT + 20_000)}:R>`);
    expect(en).toContain('Advanced (/narrate): 10 of 10 left, the next free now');
    expect(en).toContain("The server's characters this period: 99000 of 100000 left");
    expect(text('ja', admin)).toContain('30 回中 残り 2 回');
    expect(text('en', report())).toContain('Admins (Manage Server) also see');
    expect(text('ja', report())).toContain('サーバー管理者には');
  });

  it('GIVEN a long report THEN it fits one Discord message, whole lines only', () => {
    const recent = Array.from({ length: 5 }, (_, i) => ({
      ...base,
      messageId: `m${i}`,
      mergedWith: Array.from({ length: 10 }, (_, j) => ({ channelId: 'c1', messageId: `x${i}${j}00000000000000000` })),
    }));
    const long = report({
      member: { ...report().member, recent },
      server: { sessions: Array.from({ length: 12 }, () => session()), rate: {}, chars: report().member.chars },
    });
    const said = text('en', long);
    expect(said.length).toBeLessThanOrEqual(2000);
    expect(said.endsWith('\n…')).toBe(true);
  });
});
