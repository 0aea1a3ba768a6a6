import {
  ApplicationCommandOptionType,
  InteractionContextType,
  MessageFlags,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { choice, described, named, type Command } from '../../src/discord/interactions/command.ts';
import { UserError } from '../../src/discord/errors.ts';
import { exportDictionary, importDictionary, requireDictionaryEditor } from './dictionary-files.ts';
import { requireExistingRole, requireGuild, requireManageGuild } from '../../src/discord/interactions/guards.ts';
import { langOf, t } from '../../src/discord/i18n.ts';
import { listReply } from '../../src/discord/interactions/list-reply.ts';
import { describeDictionaryProblem } from './dictionary-problems.ts';
import { parseDictionaryWord, parseReading } from '../../src/speech/dictionary.ts';
import { DICTIONARY_MAX_ENTRIES } from '../../src/db/dictionary-entries.ts';
import { runSubcommand } from '../../src/discord/interactions/command-args.ts';

const data = {
  ...named('dictionary', '辞書'),
  ...described("The server's pronunciation dictionary (word → reading)", 'サーバーの読み方辞書（単語 → 読み）'),
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
          ...described('Word as written', '書かれている単語'),
          required: true,
          max_length: 50,
        },
        {
          type: ApplicationCommandOptionType.String,
          ...named('reading', '読み'),
          ...described('How to read it', '読み方'),
          required: true,
          max_length: 100,
        },
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
          max_length: 50,
        },
      ],
    },
    { type: ApplicationCommandOptionType.Subcommand, ...named('list', '一覧'), ...described('Show the dictionary', '辞書を表示') },
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
      ],
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
    const repo = ctx.repos.dictionary;
    // What changes the dictionary needs Manage Server, or the role the admins allowed.
    const requireEditor = () => requireDictionaryEditor(interaction, ctx.repos, guildId);
    await runSubcommand(interaction, data, {
      export: ({ format }) => exportDictionary(interaction, ctx.repos, guildId, format === 'csv' ? 'csv' : 'json', lang),
      async editors({ role }) {
        requireManageGuild(interaction);
        const roleId = role !== undefined ? await requireExistingRole(interaction, role) : null;
        await ctx.repos.controls.update(guildId, { dictionaryRoleId: roleId });
        await interaction.reply({
          content: roleId ? t(lang, 'dictionary.editors_set', { role: `<@&${roleId}>` }) : t(lang, 'dictionary.editors_cleared'),
          flags: MessageFlags.Ephemeral,
          allowedMentions: { parse: [] },
        });
      },
      async list() {
        const entries = repo.own(guildId);
        const ephemeral = MessageFlags.Ephemeral;
        if (entries.length === 0) return void (await interaction.reply({ content: t(lang, 'dictionary.empty'), flags: ephemeral }));
        const list = listReply(lang, {
          text: (shown) => t(lang, 'dictionary.list', { count: entries.length, entries: shown }),
          lines: entries.map((e) => `${e.word} → ${e.reading}`),
          fileName: 'dictionary.txt',
        });
        await interaction.reply({ ...list, flags: ephemeral, allowedMentions: { parse: [] } });
      },
      async import({ file }) {
        requireEditor();
        await importDictionary(interaction, { repos: ctx.repos, buttons: ctx.buttons }, guildId, lang, file);
      },
      async remove(args) {
        requireEditor();
        const word = args.word.trim();
        if (!(await repo.remove(guildId, word))) throw new UserError('dictionary.not_found', { vars: { word } });
        await interaction.reply({ content: t(lang, 'dictionary.removed', { word }) });
      },
      async add(args) {
        requireEditor();
        const word = parseDictionaryWord(args.word);
        const reading = parseReading(args.reading);
        if (!word.ok) throw new UserError('dictionary.invalid', { vars: { reason: describeDictionaryProblem(lang, word.error) } });
        if (!reading.ok) throw new UserError('dictionary.invalid', { vars: { reason: describeDictionaryProblem(lang, reading.error) } });
        // Counted in the write's own transaction: the dictionary holds at most DICTIONARY_MAX_ENTRIES.
        const added = await repo.add(guildId, word.value, reading.value, interaction.user.id);
        if (added === 'full') throw new UserError('dictionary.full', { vars: { max: DICTIONARY_MAX_ENTRIES } });
        await interaction.reply({ content: t(lang, 'dictionary.added', { word: word.value, reading: reading.value }) });
      },
    });
  },
  async autocomplete(interaction, ctx) {
    if (!interaction.inGuild()) return interaction.respond([]);
    const typed = interaction.options.getFocused().toLowerCase();
    const words = ctx.repos.dictionary
      .own(interaction.guildId)
      .map((e) => e.word)
      .filter((w) => w.toLowerCase().includes(typed));
    await interaction.respond(words.slice(0, 25).map((w) => ({ name: w, value: w })));
  },
} satisfies Command;
