import { beforeAll, describe, expect, it } from 'vitest';
import { describeAudit, type AuditNames } from '../../src/dashboard/audit-text.ts';
import { shownNames, slashCommands } from '../../src/discord/interactions/command.ts';
import { loadCommands } from '../../src/discord/interactions/loader.ts';
import type { Lang } from '../../src/i18n/texts.ts';
import { SETTING_NAMES } from '../../src/usecases/settings.ts';
import { READING_SUBCOMMANDS } from '../../src/usecases/reading.ts';
import { CONTROL_COMMANDS } from '../../src/usecases/limits.ts';

// What the dashboard's audit log says of each change, in the reader's language: the setting as the
// slash command that sets it shows it, its value as that command's reply says it; never a stored
// field name, a raw id or an untranslated mode.

let commands: Awaited<ReturnType<typeof slashCommands>>;
beforeAll(async () => {
  commands = slashCommands((await loadCommands()).values());
});

function names(lang: Lang): AuditNames {
  return {
    commands: shownNames(
      commands.map((c) => c.data),
      lang,
    ),
    channel: (id) => ({ '300': '#general', '301': '#Voice' })[id] ?? `#${id}`,
    role: (id) => ({ '400': '@Moderator' })[id] ?? `@${id}`,
    member: (id) => ({ '500': 'Alice' })[id] ?? id,
  };
}

const say = (lang: Lang, action: string, detail: Record<string, unknown>) => describeAudit({ action, detail }, lang, names(lang));

describe('the audit log in words', () => {
  it.each([
    ['ja', 'settings', { speed: 1.7, maxLength: 123 }, '/設定 速さ を 1.7 に変更、/設定 最大文字数 を 123 文字 に変更'],
    ['en', 'settings', { speed: 1.7, maxLength: 123 }, '/config speed changed to 1.7 and /config max-length changed to 123 characters'],
    ['ja', 'settings', { readAuthorNames: false, locale: 'en' }, '/設定 名前読み上げ を オフ に変更、/設定 読み上げ言語 を 英語 に変更'],
    ['ja', 'settings', { userMonthlyLimit: null }, '/設定 利用上限 を 標準 に変更'],
    [
      'en',
      'settings',
      { autoJoinChannelId: '301', guildMonthlyLimit: 20000 },
      '/config auto-join changed to #Voice and /config server-limit changed to 20,000 characters',
    ],
    ['ja', 'controls', { dictionaryRoleId: '400' }, '/辞書 編集者 を @Moderator に変更'],
    [
      'en',
      'controls',
      { dictionaryRoleId: null, narrateConfirmChars: 0 },
      '/dictionary editors changed to none and /spend narrate-confirm changed to 0 characters',
    ],
    [
      'ja',
      'reading',
      { bots: 'listed', freshSeconds: 45 },
      '/読み上げ対象 ボット を 許可したものだけ に変更、/読み上げ対象 鮮度 を 45秒 に変更',
    ],
    ['en', 'reading', { requireInVoice: true }, '/reading in-voice changed to on'],
    ['ja', 'dictionary.import', { mode: 'merge', count: 2, total: 4 }, '辞書：2 件を統合、合計 4 件'],
    ['en', 'dictionary.import', { mode: 'replace', count: 1200, total: 1200 }, 'Dictionary: replaced with 1,200 entries; 1,200 in all'],
    ['ja', 'autoread.add', { channelId: '300', postAudio: true }, '自動読み上げ：チャンネル #general を追加（MP3 投稿）'],
    ['en', 'mute', { memberId: '500' }, 'Muted Alice'],
    ['ja', 'reading.never_role.add', { roleId: '400' }, '読み上げ対象：@Moderator を読まないロールに追加'],
  ] as const)('GIVEN %s and a %s change %j THEN "%s"', (lang, action, detail, expected) => {
    expect(say(lang, action, detail)).toBe(expected);
  });

  it('GIVEN any field a settings, reading or controls change can hold THEN it is named by a command, in both languages', () => {
    const fields = [
      ...Object.keys(SETTING_NAMES).map((f) => ['settings', f] as const),
      ...Object.keys(READING_SUBCOMMANDS).map((f) => ['reading', f] as const),
      ...Object.keys(CONTROL_COMMANDS).map((f) => ['controls', f] as const),
    ];
    expect(fields.length).toBeGreaterThan(20);
    for (const lang of ['ja', 'en'] as const) {
      const unnamed = fields.filter(([action, field]) => !say(lang, action, { [field]: 1 }).startsWith('/'));
      expect(unnamed).toEqual([]);
    }
  });
});
