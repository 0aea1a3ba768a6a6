import {
  ApplicationCommandOptionType,
  InteractionContextType,
  MessageFlags,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { choice, described, named, type Command } from '../../src/discord/interactions/command.ts';
import { exportDictionary, importDictionary, requireDictionaryEditor } from './dictionary-files.ts';
import { follow, follows, share, sourceChoices, unfollow } from './dictionary-sharing.ts';
import { commandActor, requireExistingRole, requireGuild, requireManageGuild } from '../../src/discord/interactions/guards.ts';
import { langOf, t } from '../../src/i18n/texts.ts';
import { listReply } from '../../src/discord/interactions/list-reply.ts';
import { addEntry, dictionaryStore, removeEntry, type DictionaryScope, type DictionaryStore } from '../../src/usecases/dictionaries.ts';
import { runSubcommand } from '../../src/discord/interactions/command-args.ts';
import { changeControls } from '../../src/usecases/limits.ts';
import { PATTERN_LIMITS } from '../../src/speech/text/pattern-syntax.ts';

/** A word, or a pattern with its r/ and / (src/speech/text/safe-pattern.ts PATTERN_LIMITS). */
const DICTIONARY_WORD_OPTION_MAX = PATTERN_LIMITS.maxChars + 3;

// Which dictionary a subcommand works on: the server's (the default) or the member's own.
const scope = {
  type: ApplicationCommandOptionType.String as const,
  ...named('scope', '対象'),
  ...described(
    'server (default), or me: your own readings, in every server',
    'サーバー（既定）または自分（全サーバーで自分の発言と名前に適用）',
  ),
  choices: [choice('server', 'サーバー', 'server'), choice('me', '自分', 'me')],
};

const data = {
  ...named('dictionary', '辞書'),
  ...described("Reading dictionaries: the server's, or your own (word → reading)", '読み方辞書：サーバーの辞書・自分の辞書（単語 → 読み）'),
  contexts: [InteractionContextType.Guild],
  options: [
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('add', '登録'),
      ...described('Add or change a reading', '読み方を登録・変更'),
      options: [
        {
          type: ApplicationCommandOptionType.String,
          ...named('word', '単語'),
          ...described('Word as written, or a pattern written r/…/', '書かれている単語、または r/…/ で書くパターン'),
          required: true,
          max_length: DICTIONARY_WORD_OPTION_MAX,
        },
        {
          type: ApplicationCommandOptionType.String,
          ...named('reading', '読み'),
          ...described('How to read it', '読み方'),
          required: true,
          max_length: 100,
        },
        scope,
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('remove', '削除'),
      ...described('Remove a word', '単語を削除'),
      options: [
        {
          type: ApplicationCommandOptionType.String,
          ...named('word', '単語'),
          ...described('Word to remove', '削除する単語'),
          required: true,
          autocomplete: true,
          max_length: DICTIONARY_WORD_OPTION_MAX,
        },
        scope,
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('list', '一覧'),
      ...described('Show the dictionary', '辞書を表示'),
      options: [scope],
    },
    // Files and who may edit.
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('import', 'インポート'),
      ...described(
        'Import a JSON, CSV or TSV file (word, reading); shows a summary first',
        'JSON・CSV・TSV（単語, 読み）を取り込み（先に内容を確認）',
      ),
      options: [
        {
          type: ApplicationCommandOptionType.Attachment,
          ...named('file', 'ファイル'),
          ...described('At most 1 MB and 5,000 entries', '1 MB・5,000 件まで'),
          required: true,
        },
        scope,
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('export', 'エクスポート'),
      ...described('The dictionary as a file', '辞書をファイルで出力'),
      options: [
        {
          type: ApplicationCommandOptionType.String,
          ...named('format', '形式'),
          ...described('json (default) or csv', 'json（既定）または csv'),
          choices: [choice('JSON', 'JSON', 'json'), choice('CSV', 'CSV', 'csv')],
        },
        scope,
      ],
    },
    // Shared dictionaries (admins).
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('share', '共有'),
      ...described(
        "Let other servers' admins follow this dictionary (admins)",
        '他のサーバーがこの辞書をフォローできるようにする（管理者）',
      ),
      options: [
        {
          type: ApplicationCommandOptionType.Boolean,
          ...named('value', '値'),
          ...described('On: others may follow it', 'オンでフォローを許可'),
          required: true,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('follow', 'フォロー'),
      ...described(
        "Read another server's shared dictionary, or a curated list, under this one's (admins)",
        '他のサーバーの共有辞書か共有辞書リストを、この辞書の下で使う（管理者）',
      ),
      options: [
        {
          type: ApplicationCommandOptionType.String,
          ...named('source', '辞書'),
          ...described("A server's id, or pick one", 'サーバーID、または候補から選ぶ'),
          required: true,
          autocomplete: true,
          max_length: 60,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('unfollow', 'フォロー解除'),
      ...described('Stop following a dictionary (admins)', '辞書のフォローをやめる（管理者）'),
      options: [
        {
          type: ApplicationCommandOptionType.String,
          ...named('source', '辞書'),
          ...described('A followed dictionary', 'フォロー中の辞書'),
          required: true,
          autocomplete: true,
          max_length: 60,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('follows', 'フォロー一覧'),
      ...described(
        'Shared dictionaries: followed, and those you can follow (admins)',
        '共有辞書: フォロー中と、フォローできるもの（管理者）',
      ),
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('editors', '編集者'),
      ...described(
        'Let a role edit the dictionary besides Manage Server; empty: Manage Server only (admins)',
        'サーバー管理権限に加えて辞書を編集できるロール。省略で管理者のみ（管理者）',
      ),
      options: [
        {
          type: ApplicationCommandOptionType.Role,
          ...named('role', 'ロール'),
          ...described('The role (leave out: Manage Server only)', 'ロール（省略で管理者のみ）'),
        },
      ],
    },
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireGuild(interaction);
    const lang = langOf(interaction.locale);
    // The server's dictionary needs Manage Server, or the role the admins allowed, to change;
    // a member's own (scope me) is theirs to change, and its replies are seen by them only.
    const open = (where: DictionaryScope | undefined, edit: boolean) => {
      if (where !== 'me' && edit) requireDictionaryEditor(interaction, ctx.repos, guildId);
      return dictionaryStore(ctx.repos, where ?? 'server', guildId, interaction.user.id, commandActor(interaction));
    };
    const mine = (store: DictionaryStore) => (store.scope === 'me' ? { flags: MessageFlags.Ephemeral as const } : {});
    await runSubcommand(interaction, data, {
      share: ({ value }) => share(interaction, ctx, requireManageGuild(interaction), lang, value),
      follow: ({ source }) => follow(interaction, ctx, requireManageGuild(interaction), lang, source),
      unfollow: ({ source }) => unfollow(interaction, ctx, requireManageGuild(interaction), lang, source),
      follows: () => follows(interaction, ctx, requireManageGuild(interaction), lang),
      export: ({ format, scope }) => exportDictionary(interaction, open(scope, false), format === 'csv' ? 'csv' : 'json', lang),
      async editors({ role }) {
        requireManageGuild(interaction);
        const roleId = role !== undefined ? await requireExistingRole(interaction, role) : null;
        // The dashboard's rule too (src/usecases/limits.ts), audit-logged.
        await changeControls(ctx, guildId, commandActor(interaction), { dictionaryRoleId: roleId }, (id) => id === roleId);
        await interaction.reply({
          content: roleId ? t(lang, 'dictionary.editors_set', { role: `<@&${roleId}>` }) : t(lang, 'dictionary.editors_cleared'),
          flags: MessageFlags.Ephemeral,
          allowedMentions: { parse: [] },
        });
      },
      async list({ scope }) {
        const store = open(scope, false);
        const entries = store.own();
        const ephemeral = MessageFlags.Ephemeral;
        const me = store.scope === 'me';
        if (entries.length === 0)
          return void (await interaction.reply({ content: t(lang, me ? 'dictionary.mine_empty' : 'dictionary.empty'), flags: ephemeral }));
        const list = listReply(lang, {
          text: (shown) => t(lang, me ? 'dictionary.mine_list' : 'dictionary.list', { count: entries.length, entries: shown }),
          lines: entries.map((e) => `${e.word} → ${e.reading}`),
          fileName: 'dictionary.txt',
        });
        await interaction.reply({ ...list, flags: ephemeral, allowedMentions: { parse: [] } });
      },
      async import({ file, scope }) {
        await importDictionary(interaction, { store: open(scope, true), buttons: ctx.buttons }, lang, file);
      },
      async remove(args) {
        const store = open(args.scope, true);
        const word = await removeEntry(store, args.word);
        const me = store.scope === 'me';
        await interaction.reply({ content: t(lang, me ? 'dictionary.mine_removed' : 'dictionary.removed', { word }), ...mine(store) });
      },
      async add(args) {
        const store = open(args.scope, true);
        const { word, reading } = await addEntry(store, lang, args.word, args.reading);
        const me = store.scope === 'me';
        await interaction.reply({ content: t(lang, me ? 'dictionary.mine_added' : 'dictionary.added', { word, reading }), ...mine(store) });
      },
    });
  },
  async autocomplete(interaction, ctx) {
    if (!interaction.inGuild()) return interaction.respond([]);
    const sub = interaction.options.getSubcommand(false);
    if (sub === 'follow' || sub === 'unfollow')
      return interaction.respond(await sourceChoices(interaction, ctx, langOf(interaction.locale), sub));
    const typed = interaction.options.getFocused().toLowerCase();
    const where = interaction.options.getString('scope') === 'me' ? 'me' : 'server';
    const words = dictionaryStore(ctx.repos, where, interaction.guildId, interaction.user.id)
      .own()
      .map((e) => e.word)
      .filter((w) => w.toLowerCase().includes(typed));
    await interaction.respond(words.slice(0, 25).map((w) => ({ name: w, value: w })));
  },
} satisfies Command;
